"""The real-network emulator through the CLI: outputs, exit status without privileges, and
cleanup on Ctrl-C, SIGTERM and SIGKILL (namespaces, devices, threads). Needs root and
/dev/net/tun (CI runs as root); skipped otherwise."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

ROOT = os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")
needs_root = pytest.mark.skipif(not ROOT, reason="the emulator needs root, /dev/net/tun and iproute2")

TWO_CUBIC = """
name = "emu-two-cubic"
duration = "{d}s"
[link]
capacity = "20Mbps"
queue = {{ limit = "1bdp", bdp_rtt = "40ms" }}
[metrics]
warmup = "2s"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = 2
"""


def namespaces_of(pid: int) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"rtclab-{pid}-")]


@needs_root
def test_emu_run_writes_the_simulators_outputs(cli, tmp_path):
    scn = tmp_path / "two.toml"
    scn.write_text(TWO_CUBIC.format(d=8))
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["engine"] == "emu"
    assert s["link"]["utilization"] > 0.8
    assert all(f["share"] > 0.2 for f in s["flows"])
    assert s["emulator"]["release_error_us"]["p50"] < 1000
    for f in ["flows.parquet", "link.parquet", "throughput.png", "report.html", "distributions.parquet"]:
        assert (out / f).is_file(), f
    # The report is the emulator's: its timing figures, and no claim of simulation.
    html = (out / "report.html").read_text()
    assert "Emulator timing" in html and "emulated / wall time" in html and "simulated" not in html
    assert f"{s['emulator']['release_error_us']['p99']:.1f}" in html


OWN_ENDPOINTS = """
name = "emu-own-endpoints"
duration = "6s"
[link]
capacity = "20Mbps"
queue = { limit = "1bdp", bdp_rtt = "40ms" }
[metrics]
warmup = "1s"
[[flows]]
name = "copa"
kind = "tcp"
cc = "copa"
rtt = "40ms"
[[flows]]
name = "cbr"
kind = "cbr"
rate = "3Mbps"
rtt = "40ms"
[[flows]]
name = "onoff"
kind = "onoff"
rtt = "40ms"
[flows.params]
rate_mbps = 2
on_ms = 500
off_ms = 500
"""


@needs_root
def test_emu_runs_rtclab_endpoints_over_udp(cli, tmp_path):
    """Flows the kernel cannot run (tcp with Copa, cbr, a registered kind) are rtclab's own
    endpoints over real UDP through the same Endpoint interface the simulator drives."""
    import pandas as pd

    scn = tmp_path / "own.toml"
    scn.write_text(OWN_ENDPOINTS)
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    copa, cbr, onoff = s["flows"]
    # rtclab's TCP: its own recovery counters, a real share of the link.
    assert copa["goodput_mbps"] > 4 and copa["retransmits"] is not None and copa["kernel_tcp"] is None
    assert 2.7 < cbr["goodput_mbps"] < 3.3, cbr
    assert 0.5 < onoff["goodput_mbps"] < 1.5, onoff
    # Copa's own series reach flows.parquet as in the simulator.
    f = pd.read_parquet(out / "flows.parquet")
    c = f[(f.flow == 0) & (f.time_s > 2)]
    assert c["delta"].notna().all() and c["cwnd_packets"].gt(0).all()


@needs_root
def test_emu_kernel_tcp_with_ecn_is_marked_by_the_emulated_queue(cli, tmp_path):
    """`ecn = true` makes the sender host's kernel TCP ECN-capable; CoDel with `ecn = true`
    marks its packets (the emulator writes CE into the IPv4 header) instead of dropping them."""
    scn = tmp_path / "ecn.toml"
    text = TWO_CUBIC.format(d=8).replace(
        'queue = { limit = "1bdp", bdp_rtt = "40ms" }',
        'queue = { kind = "codel", limit = "4bdp", bdp_rtt = "40ms", ecn = true }',
    ) + "ecn = true\n"
    scn.write_text(text)
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    marks = sum(f["ecn_marks"] for f in s["flows"])
    # Kernel TCP sets ECT(0) (else nothing could be marked) and backs off on the echo.
    assert s["link"]["queue_kind"] == "codel" and marks > 0, s["link"]
    assert s["link"]["drops"]["aqm"] == 0, (s["link"]["drops"], marks)
    assert s["link"]["utilization"] > 0.8


KERNEL_BULK = """
name = "emu-bulk"
duration = "{d}s"
[link]
capacity = "{rate}"
queue = {{ limit = "1bdp", bdp_rtt = "20ms" }}
[metrics]
warmup = "1s"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "20ms"
"""


def _ones_sum(b: bytes) -> int:
    import struct

    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _pcap_packets(path):
    """The packets of a nanosecond pcap with raw-IP link type (the emulator's captures)."""
    import struct

    data = path.read_bytes()
    assert struct.unpack("<I", data[:4])[0] == 0xA1B23C4D and struct.unpack("<I", data[20:24])[0] == 101
    at = 24
    while at < len(data):
        caplen, = struct.unpack("<I", data[at + 8:at + 12])
        yield data[at + 16:at + 16 + caplen]
        at += 16 + caplen


@needs_root
def test_emu_offloads_carry_super_packets_and_leave_the_model_mtu_packets(cli, tmp_path):
    """With the TUN offloads (the default) the sender host's TCP hands the emulator
    super-packets, which it cuts into MTU packets for the model and joins again on the way
    out: at 1 Gbit/s reads bring several packets each, writes carry several, and the flow
    still fills the link. A capture holds the MTU packets, each with whole, valid checksums."""
    scn = tmp_path / "bulk.toml"
    scn.write_text(KERNEL_BULK.format(d=4, rate="1Gbps"))
    out = tmp_path / "fast"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", "--no-plots", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    e = s["emulator"]
    fwd = e["device_io"][0]
    assert e["tun_offload"] and fwd["super_packets"] > 0, e
    assert fwd["packets_per_read"] > 2 and fwd["packets_per_write"] > 1, fwd
    # Nothing lost in the forwarder. (Kernel TCP's retransmissions are not compared with the
    # queue's drops: with offloads on or off it sends ~150-200 more than the drops at this rate,
    # and after a stall many more.)
    assert s["link"]["utilization"] > 0.8 and e["device_write_drops"] == 0

    scn.write_text(KERNEL_BULK.format(d=3, rate="40Mbps"))
    out = tmp_path / "cap"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", "--no-plots", "--capture",
            timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["emulator"]["device_io"][0]["super_packets"] > 0
    n = 0
    for ip in _pcap_packets(out / "bottleneck.pcap"):
        if ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        assert len(ip) <= 1500 and int.from_bytes(ip[2:4], "big") == len(ip)
        assert _ones_sum(ip[:ihl]) == 0xFFFF, "IPv4 header checksum"
        pseudo = ip[12:20] + bytes([0, 6]) + (len(ip) - ihl).to_bytes(2, "big")
        assert _ones_sum(pseudo + ip[ihl:]) == 0xFFFF, "TCP checksum"
        n += 1
        if n == 3000:
            break
    assert n > 1000


@needs_root
def test_emu_offloads_can_be_switched_off():
    """RTCLAB_EMU_OFFLOAD=0: one MTU packet per device read and write, as before offloads."""
    env = {**os.environ, "RTCLAB_EMU_OFFLOAD": "0"}
    code = (
        "import json, rtclab.runner as r, sys; "
        "s = r.run(sys.argv[1], progress=False, engine='emu').summary; "
        "print(json.dumps(s['emulator']))"
    )
    p = subprocess.run([sys.executable, "-c", code, KERNEL_BULK.format(d=3, rate="200Mbps")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    e = json.loads(p.stdout.strip().splitlines()[-1])
    assert not e["tun_offload"]
    assert e["device_io"][0]["super_packets"] == 0
    assert e["device_io"][0]["packets_per_read"] == 1 and e["device_io"][0]["packets_per_write"] == 1


L4S = """
name = "emu-l4s"
duration = "10s"
[link]
capacity = "50Mbps"
queue = { kind = "dualpi2", limit = "250ms" }
[metrics]
warmup = "3s"
[[flows]]
name = "classic"
kind = "tcp"
cc = "cubic"
rtt = "20ms"
[[flows]]
name = "l4s"
kind = "tcp"
cc = "prague"
rtt = "20ms"
[[flows]]
name = "copa_ecn"
kind = "tcp"
cc = "copa"
rtt = "20ms"
ecn = true
start = "1s"
"""


@needs_root
def test_emu_l4s_prague_over_udp_beside_kernel_cubic_through_dualpi2(cli, tmp_path):
    """The ECN field crosses rtclab's UDP sockets both ways (IP_TOS out, IP_RECVTOS in): TCP
    Prague's ECT(1) packets take DualPI2's L4S queue and are CE-marked there, the receiver's
    accurate-ECN count reaches the sender in the record's flags; kernel CUBIC (not-ECT) takes
    the classic queue; rtclab's own TCP with classic ECN (ECT(0), ECE/CWR) is marked too."""
    scn = tmp_path / "l4s.toml"
    scn.write_text(L4S)
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    classic, l4s, copa = s["flows"]
    assert classic["kernel_tcp"] is not None and l4s["kernel_tcp"] is None
    assert l4s["ecn_marks"] > 50 and l4s["goodput_mbps"] > 5, l4s
    # Marks, not losses, steer it (a reordering on the real path may cost a spurious episode);
    # its queue stays short beside the classic one.
    assert l4s["retransmits"] < 0.01 * l4s["packets_sent"], l4s
    assert l4s["queuing_delay_ms"]["p95"] < 3 < classic["queuing_delay_ms"]["p50"], (l4s, classic)
    assert copa["ecn_marks"] > 0 and copa["goodput_mbps"] > 1, copa
    assert s["link"]["utilization"] > 0.8


MEDIA_L4S = """
name = "emu-media-l4s"
duration = "10s"
[link]
capacity = "10Mbps"
queue = { kind = "dualpi2", limit = "250ms" }
[metrics]
warmup = "3s"
"""
#: The ideal sender (an encoder that meets its target), as the RMCAT/L4S suite runs them: with
#: libwebrtc's VP8 and its adjuster NADA's ramp-up, which follows the received rate, reaches
#: 0.7 Mbit/s in these 10 s instead of 5 and never fills DualPI2's queue.
MEDIA_L4S_FLOWS = {
    "scream": '[[flows]]\nname = "scream"\nkind = "media"\ncc = "scream"\nrtt = "25ms"\n'
              'media = { sender = "ideal", max_bitrate = "20Mbps", ecn = "ect1", feedback_cadence = "scream", fps = 50 }\n',
    "nada": '[[flows]]\nname = "nada"\nkind = "media"\ncc = "nada"\nrtt = "25ms"\nparams = { rmax_kbps = 20000 }\n'
            'media = { sender = "ideal", max_bitrate = "20Mbps", ecn = "ect1" }\n',
}


@needs_root
@pytest.mark.parametrize("cc", ["scream", "nada"])
def test_emu_media_ect1_marks_reach_the_rmcat_controller_through_rfc8888(cli, tmp_path, cc):
    """A media flow's ECT(1) leaves on the UDP socket's TOS, DualPI2's CE comes back with the
    received TOS into the RFC 8888 report, and the controller answers it (SCReAM v2's L4S mode,
    NADA's marking penalty): the same scenario in both engines marks and keeps the queue short."""
    scn = tmp_path / "m.toml"
    scn.write_text(MEDIA_L4S + MEDIA_L4S_FLOWS[cc])
    for engine in ("sim", "emu"):
        out = tmp_path / engine
        r = cli("run", scn, "--engine", engine, "--out", out, "--no-progress", "--no-plots", timeout=120)
        assert r.returncode == 0, r.stderr
        f = json.loads((out / "summary.json").read_text())["flows"][0]
        assert f["ecn_marks"] > 0.01 * f["packets_received"], (engine, f["ecn_marks"])
        assert f["throughput_mbps"] > 2.5 and f["queuing_delay_ms"]["p95"] < 20, (engine, f)


@needs_root
def test_emu_runs_abc_behind_its_router(cli, tmp_path):
    """ABC's accelerate/brake marks ride in the data packets' ECN field (set and read on the
    UDP sockets) and its ACK echo in the record's flags: the router holds the queue short."""
    scn = tmp_path / "abc.toml"
    scn.write_text('duration = "8s"\n[link]\ncapacity = "12Mbps"\nqueue = { limit = "250pkt" }\n'
                   '[[middleboxes]]\nkind = "abc"\nat = "bottleneck"\n'
                   '[[flows]]\nkind = "tcp"\ncc = "abc"\nrtt = "50ms"\n[metrics]\nwarmup = "3s"\n')
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", "--no-plots", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    marks = s["middleboxes"][0]["metrics"]
    assert 0.35 < marks["accelerate_share"] < 0.65 and marks["brakes"] > 100, marks
    assert s["link"]["utilization"] > 0.85 and s["flows"][0]["queuing_delay_ms"]["p50"] < 30


FLOW_QUEUES = """
name = "emu-flow-queues"
duration = "5s"
[link]
capacity = "20Mbps"
queue = {{ kind = "{kind}", limit = "4bdp" }}
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = 2
[[flows]]
kind = "cbr"
rate = "1Mbps"
rtt = "40ms"
[metrics]
warmup = "1s"
"""


@needs_root
@pytest.mark.parametrize("kind", ["fq_codel", "confucius"])
def test_emu_flow_queueing_disciplines_classify_real_packets(cli, tmp_path, kind):
    """The flow-queueing disciplines tell kernel TCP flows and rtclab's CBR flow apart by their
    addresses and ports: the sparse CBR flow's packets skip the CUBIC flows' queue."""
    scn = tmp_path / "q.toml"
    scn.write_text(FLOW_QUEUES.format(kind=kind))
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", "--no-plots", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["link"]["queue_kind"] == kind
    cubic, cbr = s["flows"][0], s["flows"][2]
    assert cbr["queuing_delay_ms"]["p50"] < 5, (cbr["queuing_delay_ms"], cubic["queuing_delay_ms"])
    assert s["link"]["utilization"] > 0.8
    # Confucius's classes per bin, as the simulator reports them: the sparse CBR flow in Q1,
    # the CUBIC flows above it; FQ-CoDel does not classify.
    f = pd.read_parquet(out / "flows.parquet")
    if kind == "confucius":
        cls = f[f.time_s > 2].groupby("flow").queue_class.mean()
        assert cls[2] == 1 and min(cls[0], cls[1]) > 1, cls.to_dict()
    else:
        assert "queue_class" not in f


ZHUGE_DROP = """
name = "emu-zhuge-drop"
duration = "4.5s"
[link]
capacity = {{ schedule = [ {{ at = "0s", rate = "30Mbps" }}, {{ at = "3s", rate = "3Mbps" }} ] }}
queue = {{ limit = "250pkt" }}
{mb}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "50ms"
media = {{ max_bitrate = "50Mbps", start_bitrate = "20Mbps" }}
[metrics]
bin = "50ms"
"""


@needs_root
def test_emu_zhuge_rewrites_real_rtcp_so_gcc_reacts_at_once(tmp_path):
    """Zhuge at the bottleneck's hop parses the real RTP packets' transport sequence numbers
    and rewrites the receiver's real TWCC bytes with its predictions: 200 ms after a 30 -> 3
    Mbit/s drop GCC's target is already near the new capacity, where without Zhuge it is not."""
    import rtclab

    def target_after_drop(mb):
        r = rtclab.run(ZHUGE_DROP.format(mb=mb), seed=1, progress=False, engine="emu")
        f = r.flows
        row = f[(f.flow == 0) & (f.time_s > 3.19) & (f.time_s < 3.21)]
        return float(row.target_mbps.iloc[0])

    fifo = target_after_drop("")
    zhuge = target_after_drop('[[middleboxes]]\nkind = "zhuge"\nat = "bottleneck"\nqshort = false')
    assert zhuge < 8 and fifo > 10, (fifo, zhuge)


EDGE_STREAM = """
name = "emu-edge-hairpin"
duration = "6s"
[link]
capacity = "200Mbps"
queue = { limit = "1000pkt" }
loss = { model = "iid", rate = 0.2 }
[[flows]]
kind = "KIND"
rtt = "20ms"
params = { frame_packets = 10 }
"""


@needs_root
def test_emu_edge_streaming_recovers_real_packets_as_the_simulator_does(tmp_path):
    """Hairpin's edge-streaming flow over real UDP (chunks and per-packet ACKs as bytes) at 20 %
    loss: it meets more deadlines than retransmission alone, with the simulator's BWC."""
    import rtclab

    def summary(kind, engine):
        return rtclab.run(EDGE_STREAM.replace("KIND", kind), seed=1, progress=False, engine=engine).summary

    # The BWC comparison needs an emulation that kept its timing. When the hypervisor takes CPU
    # time from this virtual machine (steal), packet release errors reach milliseconds, the
    # sender's RTT variance grows and Hairpin buys more redundancy: measured here, steal of 3 %
    # or more went with release-error p99 above 1 ms and BWC 0.43-0.68 (0.39-0.41 without).
    # Up to three tries; the first whose p99 is under 1 ms is compared (docs/emulator.md).
    for _ in range(3):
        emu_summary = summary("edge_hairpin", "emu")
        timing = emu_summary["emulator"]
        if timing["release_error_us"]["p99"] < 1000:
            break
    # Its endpoint threads run at SCHED_FIFO, so load inside the machine does not stretch their
    # RTT estimates (fair-scheduled, two busy loops raised BWC to 0.44-0.47).
    assert timing["realtime_endpoints"] is True
    emu = emu_summary["flows"][0]["metrics"]
    sim = summary("edge_hairpin", "sim")["flows"][0]["metrics"]
    rtx = summary("edge_rtx", "emu")["flows"][0]["metrics"]
    assert emu["undecodable_packets"] == 0 and emu["frames_counted"] > 300
    assert emu["dmr"] <= rtx["dmr"] and emu["frame_delay_ms_mean"] < rtx["frame_delay_ms_mean"], (emu, rtx)
    if timing["release_error_us"]["p99"] >= 1000:
        pytest.skip(f"BWC not compared: the host kept the emulator's release-error p99 at "
                    f"{timing['release_error_us']['p99']:.0f} us in three runs (steal "
                    f"{timing['host_steal_percent']} % in the last)")
    assert abs(emu["bwc"] - sim["bwc"]) < 0.05, (emu["bwc"], sim["bwc"], timing)


WIFI_AP = """
name = "emu-wifi-ap"
duration = "5s"
[link]
capacity = "40Mbps"
queue = { limit = "250pkt" }
wifi = { stations = 4, stations_start_s = 2.5 }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "20ms"
[metrics]
bin = "100ms"
"""


@needs_root
def test_emu_wifi_link_aggregates_and_shares_the_channel_with_kernel_tcp(tmp_path):
    """A kernel CUBIC flow through the wireless AP link: near the PHY rate alone, about a
    fifth of it once four saturated stations contend (the same MAC the simulator runs); the
    summary has the MAC's counters."""
    import rtclab

    r = rtclab.run(WIFI_AP, seed=1, progress=False, engine="emu")
    f = r.flows[r.flows.flow == 0]
    before = float(f[(f.time_s > 1.0) & (f.time_s <= 2.5)].throughput_mbps.mean())
    during = float(f[(f.time_s > 3.0)].throughput_mbps.mean())
    assert before > 30, (before, during)
    assert during < 0.4 * before, (before, during)
    wifi = r.summary["links"][0]["wifi"]
    assert wifi["mean_aggregate_packets"] > 2 and wifi["other_txops"] > 0 and wifi["collisions"] > 0, wifi


WIFI_UPLINK = """
name = "emu-wifi-uplink"
duration = "5s"
[link]
capacity = "40Mbps"
queue = { limit = "250pkt" }
wifi = { uplink = true }
[[flows]]
kind = "cbr"
rate = "10Mbps"
rtt = "20ms"
[[flows]]
kind = "cbr"
rate = "10Mbps"
rtt = "20ms"
direction = "reverse"
[metrics]
bin = "100ms"
"""


@needs_root
def test_emu_wifi_uplink_stations_carry_the_reverse_direction(tmp_path):
    """`wifi.uplink`: the reverse direction leaves from a station on the AP's channel in the
    emulator too (one forwarding loop for the shared element), metered by direction, and the
    same MAC counters as the simulator's run of the scenario."""
    import rtclab

    emu = rtclab.run(WIFI_UPLINK, seed=1, progress=False, engine="emu")
    sim = rtclab.run(WIFI_UPLINK, seed=1, progress=False)
    for r in (emu, sim):
        hops = {h["direction"]: h for h in r.summary["links"]}
        assert 9.0 < hops["forward"]["delivered_mbps"] < 10.5, hops["forward"]
        assert 9.0 < hops["reverse"]["delivered_mbps"] < 10.5, hops["reverse"]
        wifi = hops["forward"]["wifi"]
        assert wifi["uplink_stations"] == 1 and wifi["uplink_txops"] > 100 and wifi["ap_txops"] > 100, wifi
    assert abs(emu.summary["flows"][1]["throughput_mbps"] - sim.summary["flows"][1]["throughput_mbps"]) < 0.5


TCP_VIDEO = """
name = "emu-tcp-video"
duration = "5s"
[link]
capacity = "10Mbps"
queue = { limit = "250pkt" }
[[flows]]
kind = "tcp"
cc = "copa"
rtt = "50ms"
delayed_ack = false
video = {}
"""


@needs_root
def test_emu_carries_video_over_rtclabs_tcp_and_times_its_frames(cli, tmp_path):
    """Video over TCP in the emulator: rtclab's TCP over real UDP carries the frame ends, and the
    receiver times every frame as in the simulator."""
    scn = tmp_path / "video.toml"
    scn.write_text(TCP_VIDEO)
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    m = json.loads((out / "summary.json").read_text())["flows"][0]["metrics"]
    assert m["video_frames_encoded"] >= 120 and m["video_frames_encoded"] - m["video_frames"] <= 10, m
    assert 20 < m["video_frame_rate"] <= 26 and 25 < m["video_frame_delay_ms_p50"] < 500, m


@needs_root
def test_emu_rejects_what_it_cannot_run(cli, tmp_path):
    scn = tmp_path / "many.toml"
    scn.write_text(TWO_CUBIC.format(d=5).replace("count = 2", "count = 201"))
    r = cli("run", scn, "--engine", "emu", "--out", tmp_path / "o")
    assert r.returncode == 2
    assert "at most 200 flows" in r.stderr
    assert not (tmp_path / "o").exists()
    # Zhuge's AP-originated reports need an element that makes packets: simulator only.
    scn = tmp_path / "cadence.toml"
    scn.write_text(TWO_CUBIC.format(d=5) + '\n[[middleboxes]]\nkind = "zhuge"\nat = "bottleneck"\ncadence_ms = 1\n')
    r = cli("run", scn, "--engine", "emu", "--out", tmp_path / "o")
    assert r.returncode == 2 and "cadence_ms > 0" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()
    # Holding its reports until dequeue needs sequence numbers the emulator's records lack.
    scn.write_text(TWO_CUBIC.format(d=5) + '\n[[middleboxes]]\nkind = "zhuge"\nat = "bottleneck"\nhold_until_dequeue = true\n')
    r = cli("run", scn, "--engine", "emu", "--out", tmp_path / "o")
    assert r.returncode == 2 and "hold_until_dequeue = true" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()
    # FastAck forges TCP ACKs in the simulator only: named, nothing written.
    scn = tmp_path / "fastack.toml"
    scn.write_text(TWO_CUBIC.format(d=5) + '\n[[middleboxes]]\nkind = "fast_ack"\nat = "bottleneck"\n')
    r = cli("run", scn, "--engine", "emu", "--out", tmp_path / "o")
    assert r.returncode == 2 and '"fast_ack" runs in the simulator only' in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


@needs_root
def test_emu_without_root_exits_2():
    """As an unprivileged user the run stops with one clear message and status 2 (the Rust
    front end `rtclab-emu`, run as nobody from a directory anyone may enter)."""
    import tempfile

    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) not installed")
    binary = os.environ.get("RTCLAB_EMU_BIN")
    if binary is None:
        pytest.skip("RTCLAB_EMU_BIN not set (make test-python sets it)")
    d = tempfile.mkdtemp(prefix="rtclab-nobody-")
    try:
        os.chmod(d, 0o755)
        target = os.path.join(d, "rtclab-emu")
        shutil.copy(binary, target)
        os.chmod(target, 0o755)
        scn = os.path.join(d, "s.toml")
        with open(scn, "w") as f:
            f.write(TWO_CUBIC.format(d=5))
        os.chmod(scn, 0o644)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", target, scn],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "needs root" in r.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _start(tmp_path, d=60):
    scn = tmp_path / "long.toml"
    scn.write_text(TWO_CUBIC.format(d=d))
    p = subprocess.Popen([sys.executable, "-m", "rtclab.cli", "run", str(scn), "--engine", "emu",
                          "--out", str(tmp_path / "out"), "--no-progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while len(namespaces_of(p.pid)) < 2:
        assert time.monotonic() < deadline, "the emulator never set up its namespaces"
        assert p.poll() is None, p.stderr.read().decode()
        time.sleep(0.1)
    time.sleep(1.0)
    return p


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_emu_interrupted_leaves_nothing_behind(tmp_path, sig):
    p = _start(tmp_path)
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err.decode()
    assert namespaces_of(p.pid) == []
    assert not (tmp_path / "out").exists()


@needs_root
def test_emu_killed_run_is_swept_by_the_next(cli, tmp_path):
    p = _start(tmp_path)
    p.kill()
    p.wait(timeout=10)
    assert len(namespaces_of(p.pid)) == 2, "SIGKILL cannot clean up"
    scn = tmp_path / "short.toml"
    scn.write_text(TWO_CUBIC.format(d=3))
    r = cli("run", scn, "--engine", "emu", "--out", tmp_path / "o2", "--no-progress", "--no-plots", timeout=60)
    assert r.returncode == 0, r.stderr
    assert namespaces_of(p.pid) == []


GCC_STEP = """
name = "emu-gcc"
duration = "{d}s"
[link]
capacity = {{ schedule = [ {{ at = "0s", rate = "2Mbps" }}, {{ at = "{half}s", rate = "1Mbps" }} ] }}
queue = {{ limit = "300ms" }}
[metrics]
warmup = "2s"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
"""


@needs_root
@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark not installed")
def test_emu_capture_decodes_as_rtp_and_rtcp(cli, tmp_path):
    """A GCC call through the emulator with --capture: tshark dissects the bottleneck pcap as
    RTP (our payload type, transport-wide sequence and abs-send-time extensions) and RTCP
    transport-wide feedback, with nothing malformed."""
    scn = tmp_path / "gcc.toml"
    scn.write_text(GCC_STEP.format(d=8, half=4))
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--capture", "--out", out, "--no-plots", "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    pcap = out / "bottleneck.pcap"
    assert pcap.is_file()

    def count(filt: str) -> int:
        t = subprocess.run(["tshark", "-r", str(pcap), "-d", "udp.port==5000,rtp", "-Y", filt],
                           capture_output=True, text=True, timeout=60)
        assert t.returncode == 0, t.stderr
        return len(t.stdout.splitlines())

    s = json.loads((out / "summary.json").read_text())
    rtp = count("rtp.p_type == 96 && rtp.ext.rfc5285.id == 5 && rtp.ext.rfc5285.id == 3")
    assert rtp > 0.9 * s["flows"][0]["packets_received"]
    assert count("rtcp.rtpfb.fmt == 15") > 50  # TWCC every 100 ms
    assert count("_ws.malformed || _ws.expert.severity >= error") == 0
    assert s["flows"][0]["media"]["frames"] > 150
    # The per-bin media series and the frame-delay distribution, as in the simulator.
    import pandas as pd

    f = pd.read_parquet(out / "flows.parquet")
    shown = f[f.time_s > 2]
    assert shown["rendered_fps"].gt(0).mean() > 0.9 and shown["frame_delay_ms_mean"].notna().mean() > 0.9
    d = pd.read_parquet(out / "distributions.parquet")
    from rtclab.runner import FRAME_STAGES
    want = {"queuing_delay", "one_way_delay", "frame_delay", "display_delay"} | {f"stage_{s}" for s in FRAME_STAGES}
    assert set(d[d.flow == 0]["metric"]) == want
    # The capture is the output directory's: no temporary capture is left behind.
    assert not list(tmp_path.glob("rtclab-capture-*"))


def test_capture_needs_the_emulator(cli, tmp_path):
    r = cli("run", "--capture", "--out", tmp_path / "o")
    assert r.returncode == 2 and "--capture needs --engine emu" in r.stderr


@needs_root
@pytest.mark.skipif(not shutil.which("curl"), reason="curl not installed")
def test_emu_shell_puts_the_users_programs_through_the_link(cli, tmp_path):
    """A web server in the receiver namespace, curl in the sender namespace: the TCP handshake
    takes the scenario's 40 ms RTT, and the exit status is curl's."""
    (tmp_path / "blob").write_bytes(os.urandom(100_000))
    scn = tmp_path / "link.toml"
    scn.write_text(TWO_CUBIC.format(d=10))
    port = 8000 + os.getpid() % 1000
    # The server forks under sh: it is not rtclab's direct child, yet it must not outlive the run.
    server = f"cd {tmp_path} && {sys.executable} -m http.server {port} --bind 10.77.0.2 >/dev/null 2>&1"
    r = cli("emu", "shell", scn, "--receiver", server, "--",
            "curl", "-s", "--retry", "20", "--retry-connrefused", "--retry-delay", "0", "-o", "/dev/null",
            "-w", "%{time_connect} %{size_download}", f"http://10.77.0.2:{port}/blob", timeout=60)
    assert r.returncode == 0, r.stderr
    connect, size = r.stdout.split()
    assert 0.039 <= float(connect) < 0.1, connect
    assert int(size) == 100_000
    assert "packets forwarded" in r.stderr
    left = subprocess.run(["pgrep", "-f", f"http.server {port}"], capture_output=True, text=True).stdout
    assert left.strip() == "", f"the receiver's server outlived the run: {left}"
    r = cli("emu", "shell", scn, "--", "sh", "-c", "exit 7", timeout=60)
    assert r.returncode == 7


@needs_root
def test_emu_shell_chooses_the_kernel_tcp_controller_and_says_which(cli, tmp_path):
    """The user's programs get the host's default TCP controller unless --tcp-cc names one; the
    controller in use is printed and kept in the summary, and an unavailable one exits 2."""
    from rtclab.shell import available_tcp_cc

    scn = tmp_path / "link.toml"
    scn.write_text(TWO_CUBIC.format(d=5))
    r = cli("emu", "shell", scn, "--tcp-cc", "no_such_cc", "--", "true", timeout=60)
    assert r.returncode == 2 and "--tcp-cc no_such_cc: not available" in r.stderr, r.stderr
    cc = "reno" if "reno" in available_tcp_cc() else available_tcp_cc()[0]
    r = cli("emu", "shell", scn, "--tcp-cc", cc, "--out", tmp_path / "o", "--no-plots", "--",
            "sysctl", "-n", "net.ipv4.tcp_congestion_control", timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == cc and f"your programs' TCP uses {cc} (--tcp-cc)" in r.stderr, (r.stdout, r.stderr)
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["emulator"]["shell_tcp_cc"] == cc
    r = cli("emu", "shell", scn, "--", "true", timeout=60)
    assert "the host default; --tcp-cc NAME chooses" in r.stderr, r.stderr


RECEIVER_LOG = """
import os, signal, socket, sys, time
log = open(sys.argv[1], "w")
def bye(*_):
    log.write("flushed on SIGTERM\\n")
    log.close()
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
log.write(f"offset_ns {time.monotonic_ns() - int(os.environ['RTCLAB_START_MONOTONIC_NS'])}\\n")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.0.2", 9000))
while True:
    data, _ = s.recvfrom(2000)
    log.write(f"got {len(data)}\\n")
"""

SENDER = """
import os, socket, time
rt = int(os.environ["RTCLAB_START_REALTIME_NS"])
assert abs(time.time_ns() - rt) < 10e9, (time.time_ns(), rt)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(100):
    s.sendto(b"x" * 1000, ("10.77.0.2", 9000))
    time.sleep(0.005)
time.sleep(0.3)
"""


@needs_root
def test_emu_shell_out_writes_a_result_and_lets_the_receiver_flush(cli, tmp_path):
    """`--out` writes the run's outputs; the programs see the emulation's start time; a receiver
    started under `sh` (which forks it) gets SIGTERM itself and flushes its log before it ends."""
    (tmp_path / "recv.py").write_text(RECEIVER_LOG)
    (tmp_path / "send.py").write_text(SENDER)
    scn = tmp_path / "link.toml"
    scn.write_text(TWO_CUBIC.format(d=10))
    log = tmp_path / "recv.log"
    out = tmp_path / "out"
    receiver = f"{sys.executable} {tmp_path / 'recv.py'} {log}; echo never-reached"
    r = cli("emu", "shell", scn, "--receiver", receiver, "--out", out, "--",
            sys.executable, tmp_path / "send.py", timeout=90)
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines()
    assert lines[-1] == "flushed on SIGTERM", lines[-3:]
    offset = int(lines[0].split()[1]) / 1e9
    assert -1.0 < offset < 5.0, offset  # started about when the emulation did
    assert sum(ln.startswith("got 1000") for ln in lines) >= 95
    s = json.loads((out / "summary.json").read_text())
    assert s["engine"] == "emu" and s["emulator"]["packets_forwarded"] >= 100
    assert s["command_line"].startswith("rtclab emu shell")
    for f in ("link.parquet", "report.html", "scenario.toml"):
        assert (out / f).is_file(), f
    assert "queuing delay p50 0.00" not in r.stderr  # a missing value reads n/a, never 0


PLI_MEDIA = """
duration = "8s"
[link]
capacity = "4Mbps"
queue = { limit = "100KB" }
loss = { model = "iid", rate = 0.02 }
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
media = { max_bitrate = "1Mbps", key_frame_interval = "10s" }
"""


@needs_root
def test_emu_key_frame_requests_travel_as_rtcp_pli():
    """A lost frame makes the receiver send RTCP PLI over the real socket; the sender's encoder
    answers with key frames, as in the simulator (measured at 12 s: 22 vs 23 requests)."""
    import rtclab
    sim = rtclab.run(PLI_MEDIA, seed=1, progress=False).summary["flows"][0]["media"]
    emu = rtclab.run(PLI_MEDIA, seed=1, progress=False, engine="emu").summary["flows"][0]["media"]
    assert emu["key_frame_requests"] > 3 and emu["key_frames"] > 2
    assert abs(emu["key_frames"] - sim["key_frames"]) <= max(4, sim["key_frames"] // 2), (emu, sim)


BREAKDOWN_MEDIA = """
duration = "8s"
[link]
capacity = "3Mbps"
queue = {{ limit = "60KB" }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
media = {{ fps = 60, start_bitrate = "2500kbps", max_bitrate = "2500kbps", encode_time = "3ms", decode_time = "{decode}", frame_rate_control = "afr" }}
"""


@needs_root
def test_emu_latency_breakdown_and_frame_rate_requests_cross_real_sockets():
    """The per-frame breakdown means the same in the emulator: its stages add up to the display
    delay, the network queue comes from the forwarder (written into each RTP packet), encode
    and decode are the scenario's; AFR's frame-rate requests reach the encoder as RTCP APP."""
    import rtclab
    for engine in ("sim", "emu"):
        # A 20 ms decoder against 60 fps: the decoder queue builds up unless AFR slows the encoder.
        m = rtclab.run(BREAKDOWN_MEDIA.format(decode="20ms"), seed=1, progress=False,
                       engine=engine).summary["flows"][0]["media"]
        b = m["breakdown_ms"]
        total = sum(b[s]["mean"] for s in b)
        assert abs(total - m["display_delay_ms"]["mean"]) < 1e-6 * max(1.0, total), (engine, b)
        assert abs(b["encode"]["mean"] - 3.0) < 1e-6 and abs(b["decode"]["mean"] - 20.0) < 1e-6, b
        assert b["propagation"]["p50"] >= 20.0, (engine, b)  # rtt/2 + serialization
        assert b["queue"]["p99"] > 1.0, (engine, b)  # GCC at 2.5 of 3 Mbit/s queues at times
        assert m["frame_rate_requests"] >= 1 and m["final_fps"] < 60.0, (engine, m["final_fps"])


FEC_MEDIA = """
duration = "8s"
[link]
capacity = "5Mbps"
loss = {{ model = "iid", rate = 0.05 }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
media = {{ start_bitrate = "1Mbps", max_bitrate = "1Mbps", protection = {{ kind = "fixed", fec = 0.3, code = "{code}" }} }}
"""


@needs_root
@pytest.mark.parametrize("code", ["rs", "xor"])
def test_emu_fec_packets_carry_real_parity_that_rebuilds_lost_media(code):
    """In the emulator FEC packets carry real Reed-Solomon (the reed-solomon-erasure crate) or
    XOR parity of the frame's media payloads; the receiving end rebuilds lost media payloads
    from what arrived, and each rebuilt payload is the bytes that were sent (5 % loss, 8 s:
    23 rebuilt with RS, 25 with XOR, all verified)."""
    import rtclab
    m = rtclab.run(FEC_MEDIA.format(code=code), seed=1, progress=False, engine="emu").summary["flows"][0]
    mx = m["metrics"]
    assert mx["fec_rebuilt_packets"] > 10, mx
    assert mx["fec_rebuilt_verified"] == mx["fec_rebuilt_packets"] and mx["fec_rebuild_failures"] == 0, mx


@needs_root
def test_emu_paused_media_flow_stops_and_resumes():
    """`pauses` in the emulator: the sender is silent between `at` and `until`, then sends again."""
    import rtclab
    sc = """
duration = "9s"
[link]
capacity = "4Mbps"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
pauses = [{ at = "3s", until = "6s" }]
"""
    fl = rtclab.run(sc, progress=False, engine="emu").flows
    during = fl[(fl.time_s > 3.4) & (fl.time_s <= 6.0)].sending_rate_mbps.sum()
    after = fl[fl.time_s > 6.6].sending_rate_mbps.mean()
    assert during == 0.0 and after > 0.5, (during, after)


@needs_root
def test_emu_reversed_media_flow_crosses_the_reverse_link():
    """`direction = "reverse"` in the emulator: the flow's data is limited by the reverse link
    and metered there, as in the simulator."""
    import rtclab
    sc = """
duration = "6s"
[link]
capacity = "3Mbps"
queue = { limit = "300ms" }
[reverse_link]
capacity = "1Mbps"
queue = { limit = "300ms" }
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
direction = "reverse"
"""
    s = rtclab.run(sc, progress=False, engine="emu").summary
    rev = next(link for link in s["links"] if link["direction"] == "reverse")
    thr = s["flows"][0]["throughput_mbps"]
    assert 0.4 < thr < 1.0 and abs(rev["delivered_mbps"] - thr) < 0.1, (thr, rev)


CLASSIFY_MEDIA = """
duration = "12s"
[link]
capacity = "3Mbps"
loss = {{ model = "iid", rate = 0.05 }}
queue = {{ limit = "100KB" }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
media = {{ max_bitrate = "1500kbps", protection = {{ kind = "fixed", fec = 0.3, code = "{code}", rtx = true }} }}
"""


@needs_root
@pytest.mark.parametrize("code", ["rs", "xor"])
def test_classify_recovers_rtclabs_own_labels_from_a_sender_side_capture(cli, tmp_path, code):
    """The composition classifier on an emulated call captured where the packets are sent: media,
    FEC, retransmissions and padding each with precision and recall ≥ 0.95 against the labels
    rtclab's own descriptor carries (measured: ≥ 0.98 everywhere)."""
    scn = tmp_path / "call.toml"
    scn.write_text(CLASSIFY_MEDIA.format(code=code))
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--capture", "--capture-at", "sent", "--out", out, "--no-plots",
            "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    r = cli("classify", out / "bottleneck.pcap", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    for c, s in doc["scores"].items():
        if s["packets"] >= 10:
            assert s["precision"] >= 0.95 and s["recall"] >= 0.95, (c, s)
    assert doc["scores"]["rtx"]["packets"] >= 10 and doc["scores"]["fec"]["packets"] >= 10
