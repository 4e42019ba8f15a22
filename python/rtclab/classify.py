"""Traffic composition from a packet capture: the fairness study's classifier (seed
`001_91b98b49efd2e704.txt` §1.1: packets are associated by similarity — two packets with the
same content are a retransmission — and split into media, FEC, retransmission and probing).

Works on any pcap of RTP over UDP (raw IP, Ethernet or Linux cooked captures; microsecond or
nanosecond timestamps). Per RTP stream (UDP 5-tuple and SSRC), in capture order:

1. **padding/probing**: the RTP padding bit is set (RFC 3550 §5.1; libwebrtc's and rtclab's
   bandwidth probes are padding packets);
2. **retransmission**: the packet's content — the last `TAIL` bytes of its RTP payload — equals
   that of an earlier packet of the stream within `WINDOW_S` seconds (the study's "two packets
   with the same content"; encryption keeps identical copies identical);
3. **FEC**: a payload type other than the stream's media payload type (ULPFEC/RED), or the
   packet carries the RTP timestamp of a frame whose last packet (marker bit) was already seen
   (FlexFEC-style parity sent after its frame, as rtclab's and Zoom's FEC);
4. **media**: the rest.

Given the session's SDP (`sdp_payload_types`; `rtclab classify --sdp FILE`), packets of a
payload type it declares as `rtx` (RFC 4588: the original under another SSRC, so its bytes
never repeat) or FEC (`ulpfec`, `flexfec`) are labelled so before rules 2-4 (RED is left to
the rules: its blocks, media or ULPFEC, are inside the encrypted payload).

RTCP (payload types 192-223 in the second byte, RFC 5761) and non-RTP packets are control and
left out. The capture must be taken where the packets are sent (`rtclab run --engine emu
--capture --capture-at sent`, or Wireshark on the sending host as in the study): a
retransmission whose original never reached the capture point cannot be told from an original.

`ground_truth` reads rtclab's own RTP payload descriptor (kind, index ≥ count, retransmission
wait; docs/wire-formats.md) to label rtclab's packets for validation; the classifier itself
never reads it.
"""

from __future__ import annotations

import struct
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

CLASSES = ("media", "fec", "rtx", "padding")
#: Bytes of RTP payload compared for "same content".
TAIL = 48
#: How far back a retransmission's original is looked for.
WINDOW_S = 2.0


class CaptureError(Exception):
    """A capture that cannot be read (named in the message)."""


@dataclass(frozen=True)
class RtpPacket:
    time_s: float
    stream: tuple
    size: int
    payload_type: int
    marker: bool
    padding: bool
    seq: int
    timestamp: int
    payload: bytes
    #: One-byte header extension ids (RFC 8285) the packet carries.
    ext_ids: frozenset = frozenset()


def read_pcap(path: str | Path) -> Iterator[tuple[float, bytes]]:
    """(time in s, IPv4 packet) for every IPv4 packet of a libpcap file, streamed (a capture of
    any size costs one record's memory). A path that is not a regular file is refused unread."""
    from rtclab.inputs import InputFileError, check_input_file

    try:
        check_input_file(path, "capture", max_bytes=1 << 62)
    except InputFileError as e:
        raise CaptureError(str(e)) from None
    with open(path, "rb") as f:
        yield from _pcap_records(path, f)


def _pcap_records(path, f) -> Iterator[tuple[float, bytes]]:
    head = f.read(24)
    if len(head) < 24:
        raise CaptureError(f"{path}: not a pcap file (shorter than its header)")
    magic = head[:4]
    formats = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\x4d\x3c\xb2\xa1": ("<", 1e-9),
               b"\xa1\xb2\xc3\xd4": (">", 1e-6), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}
    if magic not in formats:
        raise CaptureError(f"{path}: not a libpcap file (pcapng is not read; convert with `editcap -F pcap`)")
    end, unit = formats[magic]
    linktype = struct.unpack(end + "I", head[20:24])[0] & 0xFFFF
    skip = {101: 0, 228: 0, 1: 14, 113: 16}.get(linktype)
    if skip is None:
        raise CaptureError(f"{path}: link type {linktype} is not read (raw IP, Ethernet, Linux cooked)")
    snaplen = struct.unpack(end + "I", head[16:20])[0]
    max_record = max(snaplen, 1 << 18)
    while len(rec := f.read(16)) == 16:
        sec, frac, incl, _orig = struct.unpack(end + "IIII", rec)
        if incl > max_record:
            raise CaptureError(f"{path}: a record claims {incl} bytes, more than the file's snapshot length "
                               f"({snaplen}): not a valid capture")
        frame = f.read(incl)
        if len(frame) < incl:
            raise CaptureError(f"{path}: the last record is cut short")
        ip = frame[skip:]
        if linktype == 1 and frame[12:14] != b"\x08\x00":
            continue
        if ip and ip[0] >> 4 == 4:
            yield sec + frac * unit, ip


def rtp_packets(path: str | Path) -> Iterator[RtpPacket]:
    """The capture's RTP packets (UDP, version 2, not RTCP), in capture order."""
    for t, ip in read_pcap(path):
        ihl = (ip[0] & 0x0F) * 4
        if len(ip) < ihl + 8 or ip[9] != 17:
            continue
        sport, dport = struct.unpack(">HH", ip[ihl:ihl + 4])
        udp = ip[ihl + 8:]
        if len(udp) < 12 or udp[0] >> 6 != 2 or 192 <= udp[1] <= 223:
            continue
        cc = udp[0] & 0x0F
        hdr = 12 + 4 * cc
        ids: set[int] = set()
        if udp[0] & 0x10:
            if len(udp) < hdr + 4:
                continue
            profile, words = struct.unpack(">HH", udp[hdr:hdr + 4])
            ext = udp[hdr + 4:hdr + 4 + 4 * words]
            if profile == 0xBEDE:
                i = 0
                while i < len(ext):
                    eid, ln = ext[i] >> 4, (ext[i] & 0x0F) + 1
                    if eid == 15:
                        break
                    if eid:
                        ids.add(eid)
                        i += ln
                    i += 1
            hdr += 4 + 4 * words
        end = len(udp)
        padding = bool(udp[0] & 0x20)
        if padding and end > hdr:
            end -= udp[-1]
        if hdr > end:
            continue
        seq, ts, ssrc = struct.unpack(">HII", udp[2:12])
        stream = (ip[12:16], sport, ip[16:20], dport, ssrc)
        yield RtpPacket(t, stream, len(ip), udp[1] & 0x7F, bool(udp[1] & 0x80), padding, seq, ts,
                        bytes(udp[hdr:end]), frozenset(ids))


def classify(packets: list[RtpPacket], payload_types: Optional[dict[int, str]] = None) -> list[str]:
    """A class (`CLASSES`) per packet (see the module doc). `payload_types` maps payload types
    the session's SDP declares to a class (`sdp_payload_types`: RFC 4588 `rtx` streams, which
    carry their original under another SSRC and so never repeat its bytes, and FEC formats);
    they are labelled by it before the content rules."""
    known = payload_types or {}
    media_pt = {s: c.most_common(1)[0][0] for s, c in _pt_counts(packets, known).items()}
    seen: dict[tuple, OrderedDict] = {}
    closed: dict[tuple, OrderedDict] = {}
    out = []
    for p in packets:
        if p.padding:
            out.append("padding")
            continue
        if p.payload_type in known:
            out.append(known[p.payload_type])
            continue
        recent = seen.setdefault(p.stream, OrderedDict())
        while recent and next(iter(recent.values())) < p.time_s - WINDOW_S:
            recent.popitem(last=False)
        key = p.payload[-TAIL:]
        if key in recent:
            out.append("rtx")
            continue
        recent[key] = p.time_s
        frames = closed.setdefault(p.stream, OrderedDict())
        if p.payload_type != media_pt[p.stream] or p.timestamp in frames:
            out.append("fec")
            continue
        out.append("media")
        if p.marker:
            frames[p.timestamp] = True
            while len(frames) > 64:
                frames.popitem(last=False)
    return out


def _pt_counts(packets: list[RtpPacket], known: dict[int, str]) -> dict[tuple, Counter]:
    counts: dict[tuple, Counter] = {}
    for p in packets:
        if not p.padding and p.payload_type not in known:
            counts.setdefault(p.stream, Counter())[p.payload_type] += 1
    for p in packets:
        counts.setdefault(p.stream, Counter({p.payload_type: 1}))
    return counts


#: SDP encoding names (a=rtpmap, RFC 8866 §6.6) and the class their packets carry. Not `red`
#: (RFC 2198): an encapsulation whose blocks are media or ULPFEC, inside the payload that SRTP
#: encrypts; Chromium sends its VP8 in RED, and the content rules tell its FEC apart.
SDP_CLASSES = {"rtx": "rtx", "ulpfec": "fec", "flexfec": "fec", "flexfec-03": "fec"}


def sdp_payload_types(sdp: str) -> dict[int, str]:
    """Payload type -> class for the retransmission and FEC formats an SDP declares."""
    import re

    out = {}
    for pt, name in re.findall(r"^a=rtpmap:(\d+) ([A-Za-z0-9-]+)/", sdp, flags=re.M):
        cls = SDP_CLASSES.get(name.lower())
        if cls:
            out[int(pt)] = cls
    return out


def ground_truth(p: RtpPacket) -> Optional[str]:
    """The class rtclab's own RTP descriptor gives the packet (None: not rtclab media, which
    carries the transport-wide sequence (5), abs-send-time (3) and queue-delay (14) extensions)."""
    d = p.payload
    if len(d) < 34 or not {3, 5, 14} <= p.ext_ids:
        return None
    kind, index, count = d[0], *struct.unpack(">HH", d[5:9])
    if kind == 2:
        return "padding"
    if kind not in (1, 3):
        return None
    if struct.unpack(">I", d[29:33])[0] > 0:
        return "rtx"
    return "fec" if index >= count else "media"


def composition(packets: list[RtpPacket], labels: list[str]) -> dict[str, float]:
    """Bytes per class over all bytes."""
    total = sum(p.size for p in packets) or 1
    return {c: sum(p.size for p, lab in zip(packets, labels) if lab == c) / total for c in CLASSES}


def scores(truth: list[Optional[str]], labels: list[str]) -> dict[str, dict[str, float | int | None]]:
    """Precision and recall per class over the packets with a ground truth."""
    pairs = [(t, lab) for t, lab in zip(truth, labels) if t is not None]
    out = {}
    for c in CLASSES:
        tp = sum(1 for t, lab in pairs if t == c and lab == c)
        said = sum(1 for _, lab in pairs if lab == c)
        real = sum(1 for t, _ in pairs if t == c)
        out[c] = {"precision": tp / said if said else None, "recall": tp / real if real else None,
                  "packets": real}
    return out


def classify_capture(path: str | Path, payload_types: Optional[dict[int, str]] = None) -> dict:
    """Reads, classifies and, for rtclab's own streams, scores a capture."""
    packets = list(rtp_packets(path))
    if not packets:
        raise CaptureError(f"{path}: no RTP packets")
    labels = classify(packets, payload_types)
    truth = [ground_truth(p) for p in packets]
    known = sum(t is not None for t in truth)
    return {"packets": len(packets), "streams": len({p.stream for p in packets}),
            "counts": dict(Counter(labels)), "composition": composition(packets, labels),
            "scores": scores(truth, labels) if known else None, "labelled": known}
