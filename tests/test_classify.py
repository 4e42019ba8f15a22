"""`rtclab classify`: the fairness study's packet-similarity classifier on pcaps (the rules on a
hand-made capture here; on rtclab's own emulated calls in test_emu.py)."""

import struct

from rtclab.classify import classify_capture, sdp_payload_types


def _rtp(seq, ts, payload, marker=False, pt=96, padding=0):
    b0 = 0x80 | (0x20 if padding else 0)
    body = payload + (bytes(padding - 1) + bytes([padding]) if padding else b"")
    return struct.pack(">BBHII", b0, (0x80 if marker else 0) | pt, seq, ts, 0x1234) + body


def _pcap(path, udp_payloads):
    out = [struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101)]
    for i, u in enumerate(udp_payloads):
        udp = struct.pack(">HHHH", 5000, 5000, 8 + len(u), 0) + u
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, bytes([10, 0, 0, 1]),
                         bytes([10, 0, 0, 2])) + udp
        out.append(struct.pack("<IIII", 0, i * 1_000_000, len(ip), len(ip)) + ip)
    path.write_bytes(b"".join(out))


def test_the_rules_on_a_hand_made_capture(tmp_path):
    a, b, c = bytes([1]) * 100, bytes([2]) * 100, bytes([3]) * 100
    pkts = [
        _rtp(1, 900, a), _rtp(2, 900, b, marker=True),  # a frame of two media packets
        _rtp(3, 900, c),                                 # after the frame's marker: FEC
        _rtp(4, 1800, bytes([4]) * 100, marker=True),    # the next frame
        _rtp(5, 900, a),                                 # the same content again: a retransmission
        _rtp(6, 1800, bytes(40), padding=200),           # padding: a probe
        _rtp(7, 2700, bytes([5]) * 100, pt=97),          # another payload type (ULPFEC/RED)
        struct.pack(">BBH", 0x80, 205, 4) + bytes(12),   # RTCP: left out
    ]
    _pcap(tmp_path / "c.pcap", pkts)
    r = classify_capture(tmp_path / "c.pcap")
    assert r["packets"] == 7 and r["streams"] == 1
    assert r["counts"] == {"media": 3, "fec": 2, "rtx": 1, "padding": 1}
    assert r["scores"] is None  # not rtclab's descriptor: nothing to score against


def test_the_sdp_names_rtx_and_fec_payload_types(tmp_path, cli):
    sdp = ("v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96 97 98 99\r\na=rtpmap:96 VP8/90000\r\n"
           "a=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\na=rtpmap:98 ulpfec/90000\r\na=rtpmap:99 red/90000\r\n")
    assert sdp_payload_types(sdp) == {97: "rtx", 98: "fec"}  # RED carries media or FEC: left to the rules
    # an RFC 4588 retransmission under SRTP: other bytes (its own SSRC's keystream), payload type 97
    pkts = [_rtp(1, 900, bytes([1]) * 100, marker=True), _rtp(2, 1800, bytes([2]) * 100, marker=True),
            _rtp(1, 900, bytes([9]) * 102, pt=97)]
    _pcap(tmp_path / "c.pcap", pkts)
    assert classify_capture(tmp_path / "c.pcap")["counts"] == {"media": 2, "fec": 1}  # without the SDP: wrong
    assert classify_capture(tmp_path / "c.pcap", sdp_payload_types(sdp))["counts"] == {"media": 2, "rtx": 1}
    (tmp_path / "offer.sdp").write_text(sdp)
    r = cli("classify", str(tmp_path / "c.pcap"), "--sdp", str(tmp_path / "offer.sdp"), "--json")
    assert r.returncode == 0 and '"rtx": 1' in r.stdout
    r = cli("classify", str(tmp_path / "c.pcap"), "--sdp", str(tmp_path / "missing.sdp"))
    assert r.returncode != 0 and "missing.sdp" in r.stderr


def test_unreadable_captures_are_named(cli, tmp_path):
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"\x0a\x0d\x0d\x0a" + bytes(40))
    r = cli("classify", bad)
    assert r.returncode == 2 and "not a libpcap file" in r.stderr and "pcapng" in r.stderr
    r = cli("classify", tmp_path / "missing.pcap")
    assert r.returncode == 2 and "missing.pcap" in r.stderr
    _pcap(tmp_path / "empty.pcap", [])
    r = cli("classify", tmp_path / "empty.pcap")
    assert r.returncode == 2 and "no RTP packets" in r.stderr
