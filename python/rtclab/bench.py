"""`rtclab bench sim` / `rtclab bench emu`: simulator throughput on the foundation benchmark;
emulator throughput and timing.

Ten CUBIC flows over 100 Mbit/s / 20 ms (1 BDP drop-tail) for 60 simulated seconds, on one
core (the simulator is single-threaded). Reports the best of `repeat` runs as
sim_seconds_per_wall_second and delivered_packets_per_wall_second (data packets delivered to
receivers), and the ratio to ns-3's 41,000 delivered packets per wall second (ns-3.44 built
optimized, on this kind of machine; `rtclab bench process --ns3` measures it beside rtclab).

Also one 300 s video call at 2 Mbit/s with each GCC generation (the GCC issue's figure: "well
under a second"), reported as wall seconds and as a multiple of real time, and the 100-flow
Copa run (100 Mbit/s, 100 simulated seconds; the Copa issue's goal: under 20 s on one core), and
a 300 s 60 fps call through the whole receiver pipeline with the latency breakdown (goal: under
0.2 s).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

from rtclab import _core
from rtclab.output import write_atomically
from rtclab.scenarios import load_scenario

BENCH_SCENARIO = "bench-10-cubic"
#: ns-3.44 built optimized (bench/ns3/build-optimized.sh) on the foundation benchmark, this kind of
#: machine: 38,000-43,000 delivered packets per wall second, measured with issue 45 (and 33,000-
#: 37,000 on a slower day of the same VM, docs/benchmarks.md). The PyPI wheel runs at about a quarter.
NS3_DELIVERED_PER_WALL_SECOND = 41_000


def timed_run(text: str, fmt: str, base_dir: str, seed: int) -> tuple[float, dict]:
    """Runs one scenario to the end; returns (wall seconds of the simulation loop, summary)."""
    sim = _core.Simulation(text, fmt, base_dir, seed)
    t0 = time.perf_counter()
    while not sim.step(10_000_000):
        pass
    wall = time.perf_counter() - t0
    return wall, json.loads(sim.finish()[0])


def run_once(seed: int) -> dict:
    src = load_scenario(BENCH_SCENARIO)
    wall, summary = timed_run(src.text, src.format, src.base_dir, seed)
    st = summary["engine_stats"]
    return {
        "wall_time_s": wall,
        "sim_seconds": summary["duration_s"],
        "delivered_packets": st["delivered_packets"],
        "delivered_acks": st["delivered_acks"],
        "events": st["events"],
        "utilization": summary["link"]["utilization"],
    }


GCC_CALL_TOML = """
name = "bench-gcc-call"
duration = "300s"
[link]
capacity = "2Mbps"
queue = {{ limit = "350ms" }}
[[flows]]
kind = "media"
cc = "{cc}"
rtt = "50ms"
media = {{ max_bitrate = "2500kbps", sender = "ideal" }}
"""


def gcc_call(cc: str, repeat: int, seed: int) -> dict:
    runs = [timed_run(GCC_CALL_TOML.format(cc=cc), "toml", ".", seed) for _ in range(repeat)]
    walls = [w for w, _ in runs]
    summary = runs[-1][1]
    best = min(walls)
    return {
        "controller": cc,
        "wall_time_s": best,
        "median_wall_time_s": statistics.median(walls),
        "times_real_time": 300.0 / best,
        "delivered_packets": summary["engine_stats"]["delivered_packets"],
    }


RECEIVER_CALL_TOML = """
name = "bench-receiver-60fps"
duration = "300s"
[link]
capacity = "8Mbps"
queue = {{ limit = "100ms" }}
loss = {{ model = "iid", rate = 0.01 }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
media = {{ sender = "ideal", fps = 60, max_bitrate = "6Mbps", encode_time = "4ms", decoder = "windows-wifi", jitter_buffer = "adaptive", protection = {{ kind = "fixed", fec = 0.1, rtx = true }}, resolution = "1920x1080" }}
"""


def receiver_call(repeat: int, seed: int) -> dict:
    """The receiver issue's figure: a 300 s, 60 fps call through the whole receiver pipeline
    (frame buffer with retransmission waits, adaptive jitter buffer, a device-class decoder,
    display) with the per-frame latency breakdown, 1 % loss, FEC and RTX; goal < 0.2 s."""
    runs = [timed_run(RECEIVER_CALL_TOML.format(), "toml", ".", seed) for _ in range(repeat)]
    walls = [w for w, _ in runs]
    media = runs[-1][1]["flows"][0]["media"]
    return {"wall_time_s": min(walls), "median_wall_time_s": statistics.median(walls),
            "times_real_time": 300.0 / min(walls), "frames_displayed": media["frames_displayed"],
            "goal_wall_time_s": 0.2}


def copa_100_flows(repeat: int, seed: int) -> dict:
    """The Copa issue's figure: 100 Copa flows added one per second, 100 Mbit/s, 100 s."""
    flows = "".join(f'[[flows]]\nname = "copa-{i}"\nkind = "tcp"\ncc = "copa"\nrtt = "40ms"\nstart = "{i}s"\n'
                    f"delayed_ack = false\n" for i in range(100))
    text = f'name = "bench-copa-100"\nduration = "100s"\n[link]\ncapacity = "100Mbps"\nqueue = {{ limit = "5bdp" }}\n{flows}'
    runs = [timed_run(text, "toml", ".", seed) for _ in range(repeat)]
    walls = [w for w, _ in runs]
    summary = runs[-1][1]
    return {"wall_time_s": min(walls), "median_wall_time_s": statistics.median(walls),
            "delivered_packets": summary["engine_stats"]["delivered_packets"]}


#: CUBIC flows sharing one link with a 1-BDP queue of the given kind, 20 ms: the 1,000-flow
#: queue-discipline case and the scaling cases (`bench process` uses it too).
DUMBBELL_TOML = """
name = "bench-{flows}-flows-{kind}"
duration = "{duration}"
[link]
capacity = "{capacity}"
queue = {{ kind = "{kind}", limit = "1bdp" }}
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "20ms"
count = {flows}
"""


def qdiscs_1000_flows(repeat: int, seed: int) -> list[dict]:
    """The network issue's figure: FQ-CoDel and Confucius with 1,000 concurrent flows (CUBIC,
    10 Gbit/s, 20 ms, 1 BDP, 3 s), delivered packets per wall second, against drop-tail."""
    rows = []
    for kind in ("droptail", "fq_codel", "confucius"):
        runs = [timed_run(DUMBBELL_TOML.format(kind=kind, flows=1000, duration="3s", capacity="10Gbps"),
                          "toml", ".", seed) for _ in range(repeat)]
        wall = min(w for w, _ in runs)
        summary = runs[-1][1]
        delivered = summary["engine_stats"]["delivered_packets"]
        rows.append({"queue": kind, "wall_time_s": wall, "delivered_packets": delivered,
                     "delivered_packets_per_wall_second": delivered / wall,
                     "jain_windows_mean": summary["fairness"]["jain_windows_mean"]})
    for r in rows:
        r["vs_droptail"] = r["delivered_packets_per_wall_second"] / rows[0]["delivered_packets_per_wall_second"]
    return rows


def scaling(repeat: int, seed: int) -> list[dict]:
    """Issue 45's flat-scaling figure: the loop's cost per delivered packet and per event with 1
    and with 1,000 CUBIC flows on the same 100 Mbit/s, 20 ms, 1-BDP path for 60 s (about 500,000
    packets either way), drop-tail and FQ-CoDel. Events per packet say how much of a change is
    the workload (with 1,000 flows in one BDP, drops and retransmissions) and how much the cost
    of each event (per-flow state out of cache)."""
    rows = []
    for kind in ("droptail", "fq_codel"):
        for flows in (1, 1000):
            text = DUMBBELL_TOML.format(kind=kind, flows=flows, duration="60s", capacity="100Mbps")
            runs = [timed_run(text, "toml", ".", seed) for _ in range(repeat)]
            wall = min(w for w, _ in runs)
            st = runs[-1][1]["engine_stats"]
            rows.append({"queue": kind, "flows": flows, "wall_time_s": wall,
                         "delivered_packets": st["delivered_packets"], "events": st["events"],
                         "ns_per_delivered_packet": wall / st["delivered_packets"] * 1e9,
                         "ns_per_event": wall / st["events"] * 1e9,
                         "events_per_delivered_packet": st["events"] / st["delivered_packets"]})
    for r in rows:
        one = next(x for x in rows if x["queue"] == r["queue"] and x["flows"] == 1)
        r["per_packet_vs_1_flow"] = r["ns_per_delivered_packet"] / one["ns_per_delivered_packet"]
        r["per_event_vs_1_flow"] = r["ns_per_event"] / one["ns_per_event"]
    return rows


EDGE_300S = """
name = "bench-edge-hairpin"
duration = "300s"
[link]
capacity = "1Gbps"
queue = { limit = "1000pkt" }
loss = { model = "iid", rate = 0.05 }
[[flows]]
kind = "edge_hairpin"
rtt = "20ms"
"""


def hairpin(repeat: int, seed: int) -> dict:
    """The endpoint issue's figures: solving one whole Hairpin table (goal < 10 s), a cell
    lookup (goal < 1 ms), and a 300 s 60 fps edge-streaming session at 30 Mbit/s with 5 % loss."""
    from rtclab import hairpin as hp

    _core.hairpin_table(1e-4, 1)  # warm the binding
    solves = [hp.solve(1e-4, threads=1)[1] for _ in range(repeat)]
    table = _core.hairpin_table(1e-4, 1)
    runs = [timed_run(EDGE_300S, "toml", ".", seed) for _ in range(repeat)]
    walls = [w for w, _ in runs]
    m = runs[-1][1]["flows"][0]["metrics"]
    return {"table_solve_s_one_core": min(solves), "table_solve_median_s": statistics.median(solves),
            "cell_lookup_ms_from_python": hp.lookup_time(table) * 1e3,
            "session_300s_wall_s": min(walls), "session_300s_x_real_time": 300 / min(walls),
            "session_dmr": m["dmr"], "session_bwc": m["bwc"]}


def learn() -> dict:
    """The learned-controller issue's figures: rtclab/ABR-v0 chunk steps per wall second through
    `gymnasium.make` (goal ≥ 100,000 on one core) and per-decision latency of a tree against the
    Pensieve DNN (Rust both; numpy DNN for reference). Skipped without the `learn` extra or the
    released model."""
    try:
        import gymnasium
        import numpy as np

        import rtclab.gym  # noqa: F401
        from rtclab.metis.pensieve import DataMissing, PensieveTeacher
    except ImportError as e:
        return {"skipped": f"learn extra not installed ({e.name})"}
    try:
        env = gymnasium.make("rtclab/ABR-v0")
        teacher = PensieveTeacher()
    except DataMissing as e:
        return {"skipped": str(e)}
    env.reset(seed=1)
    n, t0 = 0, time.perf_counter()
    while n < 200_000:
        _, _, done, _, _ = env.step(n % 6)
        n += 1
        if done:
            env.reset()
    steps = n / (time.perf_counter() - t0)
    from sklearn.tree import DecisionTreeClassifier

    from rtclab.metis.evaluate import collect_states, policies
    from rtclab.metis.pensieve import FEATURE_NAMES
    from rtclab.metis.tree import Tree
    seq = gymnasium.make("rtclab/ABR-v0", trace_order="sequential").unwrapped
    states = np.ascontiguousarray(collect_states(seq, policies(teacher)["pensieve-greedy"], list(range(40))))
    feats = np.empty((len(states), 25))
    _core.abr_features(states, feats)
    tree = Tree.from_sklearn(DecisionTreeClassifier(max_leaf_nodes=200, random_state=0)
                             .fit(feats, teacher.probs(states).argmax(axis=1)), FEATURE_NAMES).core()
    net = _core.PensieveNetCore(teacher.actor.arrays)
    lt = np.array(_core.decision_latency_ns(tree, feats, 5))
    ln = np.array(_core.decision_latency_ns(net, states, 5))
    return {"abr_gym_steps_per_wall_second": steps,
            "tree_decision_ns": {"p50": float(np.percentile(lt, 50)), "p99": float(np.percentile(lt, 99)),
                                 "leaves": tree.leaf_count, "memory_bytes": tree.memory_bytes},
            "dnn_decision_ns": {"p50": float(np.percentile(ln, 50)), "p99": float(np.percentile(ln, 99)),
                                "memory_bytes": net.parameter_count * 4},
            "dnn_over_tree_p50": float(np.percentile(ln, 50) / np.percentile(lt, 50))}


def bench_sim(repeat: int = 5, seed: int = 1, progress: bool | None = None) -> dict:
    from rtclab.progress import Stages

    st = Stages("bench sim", 9, enabled=progress)
    st.stage(f"foundation: 10 CUBIC flows, 60 s, {repeat} runs")
    runs = [run_once(seed) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["wall_time_s"])
    w = best["wall_time_s"]
    median_wall = statistics.median(r["wall_time_s"] for r in runs)
    st.stage("media call, 300 s (gcc)")
    gcc = [gcc_call("gcc", repeat, seed)]
    st.stage("media call, 300 s (gcc_paper)")
    gcc.append(gcc_call("gcc_paper", repeat, seed))
    st.stage("receiver pipeline, 300 s at 60 fps")
    receiver = receiver_call(repeat, seed)
    st.stage("Copa, 100 flows, 100 s")
    copa = copa_100_flows(min(repeat, 3), seed)
    st.stage("queue disciplines, 1,000 flows")
    qdiscs = qdiscs_1000_flows(min(repeat, 3), seed)
    st.stage("scaling: 1 and 1,000 flows, drop-tail and FQ-CoDel")
    scale = scaling(min(repeat, 3), seed)
    st.stage("Hairpin table and edge session")
    hp = hairpin(min(repeat, 3), seed)
    st.stage("learned controllers (ABR gym, tree vs DNN)")
    lrn = learn()
    st.done()
    return {
        "benchmark": "sim",
        "scenario": BENCH_SCENARIO,
        "description": "10 CUBIC flows, 100 Mbit/s, 20 ms RTT, 1 BDP drop-tail, 60 s simulated, one core",
        "sim_seconds_per_wall_second": best["sim_seconds"] / w,
        "delivered_packets_per_wall_second": best["delivered_packets"] / w,
        "events_per_wall_second": best["events"] / w,
        "ratio_vs_ns3": best["delivered_packets"] / w / NS3_DELIVERED_PER_WALL_SECOND,
        "median": {
            "sim_seconds_per_wall_second": best["sim_seconds"] / median_wall,
            "delivered_packets_per_wall_second": best["delivered_packets"] / median_wall,
        },
        "ns3_delivered_packets_per_wall_second": NS3_DELIVERED_PER_WALL_SECOND,
        "best": best,
        "runs_wall_time_s": [r["wall_time_s"] for r in runs],
        "gcc_call_300s_2mbps": gcc,
        "receiver_call_300s_60fps": receiver,
        "copa_100_flows_100s": copa,
        "qdiscs_1000_flows": qdiscs,
        "scaling_1_vs_1000_flows": scale,
        "hairpin": hp,
        "learn": lrn,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "rtclab_version": _core.__version__,
    }


def write_bench(result: dict, out_dir: str | os.PathLike) -> Path:
    def fill(d: Path) -> None:
        with open(d / "bench.json", "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")

    return write_atomically(out_dir, fill, kind="bench")


MAHIMAHI_GBPS = (0.45, 0.67)

EMU_THROUGHPUT = """
name = "bench-emu-throughput"
description = "one kernel CUBIC flow through a 10 Gbit/s emulated link, 20 ms each way, deep queue"
duration = "20s"
[link]
capacity = "10Gbps"
queue = { limit = "20000pkt" }
[metrics]
warmup = "5s"
[[flows]]
kind = "tcp"
cc = "%s"
rtt = "40ms"
"""

EMU_TIMING = """
name = "bench-emu-timing"
description = "one kernel CUBIC flow through a 100 Mbit/s emulated link, 20 ms each way, 1 BDP"
duration = "60s"
[link]
capacity = "100Mbps"
queue = { limit = "1bdp", bdp_rtt = "40ms" }
[metrics]
warmup = "5s"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
"""


def zhuge_overhead(progress: bool | None = None, duration_s: int = 20) -> dict:
    """The network issue's figure: what Zhuge at the bottleneck's hop adds to the emulator's
    per-packet release error at 100 Mbit/s (kernel CUBIC, 1 BDP): p50/p99 without a middlebox,
    with Zhuge predicting only (no feedback action; it already puts both directions in one
    forwarding loop), and with Zhuge delaying the ACKs."""
    from rtclab.runner import run

    base = EMU_TIMING.replace('duration = "60s"', f'duration = "{duration_s}s"')
    mb = '[[middleboxes]]\nkind = "zhuge"\nat = "bottleneck"\n'
    variants = {
        "none": base,
        "zhuge_predicting": base + mb + "in_band = false\nout_of_band = false\n",
        "zhuge": base + mb,
    }
    out = {}
    for name, text in variants.items():
        s = run(text, progress=progress, engine="emu").summary
        err = s["emulator"]["release_error_us"]
        out[name] = {"release_error_us_p50": err["p50"], "release_error_us_p99": err["p99"],
                     "utilization": s["link"]["utilization"],
                     "host_steal_percent": s["emulator"].get("host_steal_percent")}
    out["added_p99_us"] = out["zhuge"]["release_error_us_p99"] - out["none"]["release_error_us_p99"]
    return out


def veth_ceiling(seconds: float = 8.0, warmup: float = 2.0) -> dict:
    """This machine's ceiling for the throughput run, without the emulator: one kernel CUBIC
    connection between two fresh network namespaces joined by a veth pair (packets passed by
    reference, no delay, no model), the sender writing and the receiver reading 256 KiB at a
    time, both in threads of this process. Root only; the namespaces are removed afterwards."""
    import ctypes
    import socket
    import subprocess
    import threading
    import time

    tag = f"rtclab-veth-{os.getpid()}"
    ns = (f"{tag}-a", f"{tag}-b")

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True)

    libc = ctypes.CDLL(None, use_errno=True)

    def enter(name: str) -> None:
        fd = os.open(f"/var/run/netns/{name}", os.O_RDONLY)
        try:
            if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
                raise OSError(ctypes.get_errno(), f"setns {name}")
        finally:
            os.close(fd)

    got = [0]
    errors: list[BaseException] = []
    ready = threading.Event()

    def receive() -> None:
        try:
            enter(ns[1])
            with socket.socket() as lst:
                lst.bind(("10.78.0.2", 5001))
                lst.listen(1)
                ready.set()
                conn, _ = lst.accept()
                buf = memoryview(bytearray(256 * 1024))
                t0 = time.monotonic()
                with conn:
                    while n := conn.recv_into(buf):
                        if time.monotonic() - t0 >= warmup:
                            got[0] += n
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            ready.set()

    def send() -> None:
        try:
            enter(ns[0])
            chunk = b"\x5a" * (256 * 1024)
            with socket.create_connection(("10.78.0.2", 5001)) as s:
                end = time.monotonic() + warmup + seconds
                while time.monotonic() < end:
                    s.sendall(chunk)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    try:
        for n in ns:
            ip("netns", "add", n)
        ip("link", "add", f"{tag[-8:]}a", "netns", ns[0], "type", "veth", "peer", "name", f"{tag[-8:]}b",
           "netns", ns[1])
        for n, dev, addr in ((ns[0], f"{tag[-8:]}a", "10.78.0.1/24"), (ns[1], f"{tag[-8:]}b", "10.78.0.2/24")):
            ip("-n", n, "addr", "add", addr, "dev", dev)
            ip("-n", n, "link", "set", dev, "up")
        r = threading.Thread(target=receive)
        r.start()
        ready.wait(10)
        snd = threading.Thread(target=send)
        snd.start()
        snd.join()
        r.join(30)
    finally:
        for n in ns:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
    if errors:
        raise RuntimeError(f"veth ceiling: {errors[0]}")
    return {"throughput_gbps": got[0] * 8 / seconds / 1e9, "seconds": seconds}


def _emu_throughput(cc: str, offload: bool) -> dict:
    """One throughput run (EMU_THROUGHPUT) with the TUN offloads on or off
    (`RTCLAB_EMU_OFFLOAD`, read when the emulation starts)."""
    from rtclab.runner import run

    before = os.environ.get("RTCLAB_EMU_OFFLOAD")
    os.environ["RTCLAB_EMU_OFFLOAD"] = "1" if offload else "0"
    try:
        s = run(EMU_THROUGHPUT % cc, progress=False, engine="emu").summary
    finally:
        if before is None:
            del os.environ["RTCLAB_EMU_OFFLOAD"]
        else:
            os.environ["RTCLAB_EMU_OFFLOAD"] = before
    e = s["emulator"]
    fwd = e["device_io"][0]
    return {
        "throughput_gbps": s["link"]["delivered_mbps"] / 1000,
        "packets_per_second": s["link"]["delivered_packets_per_second"],
        "goodput_gbps": s["flows"][0]["goodput_mbps"] / 1000,
        "release_error_us": e["release_error_us"],
        "realtime_forwarder": e["realtime_forwarder"],
        "host_steal_percent": e.get("host_steal_percent"),
        "tun_offload": e["tun_offload"],
        "packets_per_read": fwd["packets_per_read"],
        "packets_per_write": fwd["packets_per_write"],
        "srtt_ms": (s["flows"][0].get("kernel_tcp") or {}).get("final_srtt_ms"),
    }


def bench_emu(progress: bool | None = None) -> dict:
    """`rtclab bench emu`: (1) throughput — kernel TCP (CUBIC, then BBR) through one emulated link
    whose 10 Gbit/s capacity leaves the emulator as the bottleneck, 20 ms one-way delay, a deep
    queue, 20 s (15 s measured), with the TUN offloads (super-packets cut into MTU packets and
    coalesced again), then CUBIC without them for the ratio; (2) timing — packet release error
    against the ideal schedule (serialization + delay) over 60 s at 100 Mbit/s. Goals: >= 10
    Gbit/s (mahimahi reaches 0.45-0.67 Gbit/s on this kind of machine) and p99 < 100 us
    (mahimahi quantizes to 1 ms)."""
    from rtclab.progress import Stages
    from rtclab.runner import run

    st = Stages("bench emu", 6, enabled=progress)
    tput = {}
    for cc in ("cubic", "bbr"):
        st.stage(f"throughput, kernel {cc.upper()} through a 10 Gbit/s link, 20 s")
        tput[cc] = _emu_throughput(cc, offload=True)
    st.stage("throughput without TUN offloads, kernel CUBIC, 20 s")
    plain = _emu_throughput("cubic", offload=False)
    best = max(tput.values(), key=lambda r: r["throughput_gbps"])
    st.stage("the machine's ceiling: kernel CUBIC over a veth pair, no emulator, 10 s")
    ceiling = veth_ceiling()
    st.stage("release timing at 100 Mbit/s, 60 s")
    t = run(EMU_TIMING, progress=False, engine="emu").summary
    err = t["emulator"]["release_error_us"]
    st.stage("Zhuge's added release error, 3 × 20 s")
    zhuge = zhuge_overhead(False)
    st.done()
    # Hypervisor steal during each emulation: a figure taken under steal is the machine's, not
    # the emulator's (docs/emulator.md, "Timing a virtual machine cannot protect").
    steals = [r["host_steal_percent"] for r in (*tput.values(), plain, t["emulator"], *zhuge.values())
              if isinstance(r, dict) and r.get("host_steal_percent") is not None]
    return {
        "benchmark": "emu",
        "throughput_gbps": best["throughput_gbps"],
        "packets_per_second": best["packets_per_second"],
        "release_error_us_p50": err["p50"],
        "release_error_us_p99": err["p99"],
        "release_error_us_max": err["max"],
        "throughput_by_cc": tput,
        "throughput_without_offload": plain,
        "veth_ceiling_gbps": ceiling["throughput_gbps"],
        "share_of_veth_ceiling": best["throughput_gbps"] / ceiling["throughput_gbps"]
        if ceiling["throughput_gbps"] else None,
        "offload_speedup_cubic": tput["cubic"]["throughput_gbps"] / plain["throughput_gbps"]
        if plain["throughput_gbps"] else None,
        "throughput_vs_mahimahi": [best["throughput_gbps"] / g for g in MAHIMAHI_GBPS],
        "host_steal_percent_max": max(steals) if steals else None,
        "zhuge_overhead": zhuge,
        "timing_run": {
            "utilization": t["link"]["utilization"],
            "queuing_delay_ms_p50": t["link"]["queuing_delay_ms"]["p50"],
            "packets_forwarded": t["emulator"]["packets_forwarded"],
            "host_steal_percent": t["emulator"].get("host_steal_percent"),
        },
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "rtclab_version": _core.__version__,
    }

