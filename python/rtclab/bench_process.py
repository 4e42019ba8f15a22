"""`rtclab bench process`: whole `rtclab run` processes against ns-3 and htsim, side by side.

Three comparisons, each from paired runs on the same machine in the same minutes (a round runs
every program once; the order alternates between rounds, so a slow phase of a shared host falls
on both sides):

- **ns-3** (`--ns3 PROGRAM`, `bench/ns3/`): the foundation benchmark (ten CUBIC flows,
  100 Mbit/s, 20 ms, 1-BDP drop-tail, 60 s) as a user runs it — `rtclab run bench-10-cubic`
  with and without plots, each a fresh process — against the ns-3 program on the same
  dumbbell: wall time and peak memory (the largest resident set, from wait4). Build ns-3 from
  source, optimized (`bench/ns3/build-optimized.sh`, what the docs compare with); the PyPI
  wheel `make bench-ns3` installs is about 4x slower.
- **htsim** (`--htsim PROGRAM`, `bench/htsim/`): the simulation loop alone, CPU time per
  delivered data packet, on the workload htsim's TCP can run (ten NewReno flows, an ACK per
  packet, 100 Mbit/s, 20 ms, 250,000-byte drop-tail, 60 s); with `--instructions` also both
  programs' instructions per delivered packet under callgrind (valgrind needed).
- **1,000 flows**: `rtclab run` of 1,000 CUBIC flows (100 Mbit/s, 20 ms, 1 BDP, 60 s) without
  plots, split into its phases (`rtclab.timings`): how much of the process is the loop and how
  much the work after it.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from rtclab.bench import DUMBBELL_TOML
from rtclab.progress import Stages

#: Issue 45's goals: whole process >= 100x optimized ns-3 without plots, >= 50x with plots, peak
#: memory with plots at most ns-3's; the loop's CPU time per packet at most htsim's; at 1,000
#: flows the work after the loop under 15 % of the process.
GOALS = {"no_plots_speedup": 100.0, "plots_speedup": 50.0, "memory_ratio_plots": 1.0,
         "loop_cpu_ratio_vs_htsim": 1.0, "after_loop_share_1000_flows": 0.15}

#: The workload bench/htsim/dumbbell.cpp runs by default (bench/htsim/dumbbell-newreno.toml).
HTSIM_MATCHED = """
name = "htsim-dumbbell-newreno"
duration = "60s"
[link]
capacity = "100Mbps"
queue = { limit = "250000B" }
[[flows]]
kind = "tcp"
cc = "newreno"
rtt = "20ms"
count = 10
delayed_ack = false
"""

#: In a child process: runs a scenario's loop and prints its CPU time and delivered packets.
_LOOP_CHILD = """
import json, sys, time
from rtclab import _core
sim = _core.Simulation(sys.stdin.read(), "toml", ".", 1)
t0 = time.thread_time()
while not sim.step(10_000_000):
    pass
cpu = time.thread_time() - t0
st = json.loads(sim.finish()[0])["engine_stats"]
print(json.dumps({"cpu_s": cpu, "delivered_packets": st["delivered_packets"], "events": st["events"]}))
"""


def _spawn(argv: list[str], env: Optional[dict] = None, stdin: Optional[str] = None) -> dict:
    """Runs argv to completion, reaping it with wait4 (Popen.communicate would reap it first and
    lose its resource usage): its wall time, CPU time, peak RSS (MiB), stdout, and when it
    started and ended on the monotonic clock."""
    start = time.monotonic()
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env,
                             stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
        if stdin is not None:
            p.stdin.write(stdin.encode())
            p.stdin.close()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited with {p.returncode}: {stderr[-500:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mib": usage.ru_maxrss / 1024,
            "stdout": stdout, "started": start, "ended": time.monotonic()}


def _best(runs: list[dict], key: str = "wall_s") -> dict:
    vals = [r[key] for r in runs]
    return {
        key: min(vals),
        f"median_{key}": statistics.median(vals),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        f"runs_{key}": [round(v, 4) for v in vals],
    }


def _last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def _rtclab_cmd() -> list[str]:
    return [sys.executable, "-m", "rtclab.cli", "run", "--no-progress"]


def _phases(run: dict, stamps: dict) -> dict:
    """A whole `rtclab run`'s phases from its stamps (`rtclab.timings`) and when it was started
    and reaped."""
    return {
        "start_up_s": stamps["main"] - run["started"],
        "set_up_s": stamps["loop_start"] - stamps["main"],
        "loop_s": stamps["loop_end"] - stamps["loop_start"],
        "after_loop_s": run["ended"] - stamps["loop_end"],
        "process_s": run["ended"] - run["started"],
    }


def _timed_rtclab(args: list[str], tmp: Path, tag: str) -> dict:
    stamps = tmp / f"{tag}.stamps.json"
    env = dict(os.environ, RTCLAB_TIMINGS=str(stamps))
    r = _spawn([*_rtclab_cmd(), *args, "--out", str(tmp / tag)], env=env)
    r["phases"] = _phases(r, json.loads(stamps.read_text()))
    shutil.rmtree(tmp / tag, ignore_errors=True)
    return r


def _callgrind(argv: list[str], tmp: Path, toggle: Optional[str], stdin: Optional[str] = None) -> int:
    """Instructions the program executes (within `toggle`'s function if given), from callgrind."""
    out = tmp / "callgrind.out"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if toggle:
        cmd.append(f"--toggle-collect={toggle}")
    _spawn([*cmd, *argv], stdin=stdin)
    for line in out.read_text(errors="replace").splitlines():
        if line.startswith("summary:") or line.startswith("totals:"):
            n = int(line.split()[1])
            if n == 0:  # e.g. the function was inlined away: a 0 would read as "free"
                raise RuntimeError(f"callgrind counted no instructions inside {toggle!r}")
            return n
    raise RuntimeError("callgrind wrote no totals")


def bench_process(ns3: Optional[str] = None, htsim: Optional[str] = None, repeat: int = 3,
                  progress: bool | None = None, flows: int = 1000, instructions: bool = False) -> dict:
    """The comparisons above; `ns3`/`htsim`: the programs (paths), each optional. `repeat`
    rounds of each comparison. `flows`: the scaling case's flow count."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if flows < 1:
        raise ValueError(f"flows must be at least 1, got {flows}")
    if instructions and shutil.which("valgrind") is None:
        raise ValueError("--instructions needs valgrind (apt-get install valgrind)")
    steps = repeat * (1 + (htsim is not None) + 1) + (2 if instructions and htsim else 0)
    st = Stages("bench process", steps, enabled=progress)
    tmp = Path(tempfile.mkdtemp(prefix="rtclab-bench-process-"))
    res: dict = {"benchmark": "process", "scenario": "bench-10-cubic",
                 "description": "whole processes: rtclab run bench-10-cubic (60 s, 10 CUBIC flows, 100 Mbit/s) "
                                "with and without plots and ns-3 on the same benchmark; the loop against htsim on "
                                "a matched NewReno workload; a 1,000-flow run's phases",
                 "goals": GOALS}
    try:
        # 1. Whole processes against ns-3, paired rounds in alternating order.
        rounds: list[dict] = []
        for k in range(repeat):
            st.stage(f"round {k + 1}/{repeat}: rtclab with and without plots" + (", ns-3" if ns3 else ""))
            jobs = [("rtclab_no_plots", ["bench-10-cubic", "--no-plots"]), ("rtclab_plots", ["bench-10-cubic"])]
            if ns3:
                jobs.append(("ns3", None))
            if k % 2:
                jobs.reverse()
            rnd = {}
            for key, args in jobs:
                rnd[key] = _spawn([ns3]) if args is None else _timed_rtclab(args, tmp, f"{key}-{k}")
            rounds.append(rnd)
        for key in ("rtclab_no_plots", "rtclab_plots"):
            res[key] = _best([r[key] for r in rounds])
            res[key]["phases_best_run"] = min((r[key] for r in rounds), key=lambda x: x["wall_s"])["phases"]
        if ns3:
            res["ns3"] = _best([r["ns3"] for r in rounds])
            res["ns3"]["program"] = str(ns3)
            res["ns3"]["build"] = _ns3_build(ns3)
            res["ns3"]["output"] = _last_json(rounds[0]["ns3"]["stdout"])

            def paired(f) -> float:
                return statistics.median(f(r) for r in rounds)

            res["ratios"] = {
                "no_plots_speedup": res["ns3"]["wall_s"] / res["rtclab_no_plots"]["wall_s"],
                "plots_speedup": res["ns3"]["wall_s"] / res["rtclab_plots"]["wall_s"],
                "no_plots_speedup_paired_median": paired(lambda r: r["ns3"]["wall_s"] / r["rtclab_no_plots"]["wall_s"]),
                "plots_speedup_paired_median": paired(lambda r: r["ns3"]["wall_s"] / r["rtclab_plots"]["wall_s"]),
                "memory_ratio_no_plots": res["rtclab_no_plots"]["peak_rss_mib"] / res["ns3"]["peak_rss_mib"],
                "memory_ratio_plots": res["rtclab_plots"]["peak_rss_mib"] / res["ns3"]["peak_rss_mib"],
            }
        # 2. The loop against htsim, paired.
        if htsim:
            pairs = []
            for k in range(repeat):
                st.stage(f"round {k + 1}/{repeat}: loop against htsim (10 NewReno flows)")
                order = ["htsim", "rtclab"] if k % 2 == 0 else ["rtclab", "htsim"]
                pair = {}
                for who in order:
                    if who == "htsim":
                        r = _spawn([htsim])
                        out = _parse_htsim(r["stdout"])
                        pair["htsim"] = {"cpu_s": r["cpu_s"], **out}
                    else:
                        r = _spawn([sys.executable, "-c", _LOOP_CHILD], stdin=HTSIM_MATCHED)
                        pair["rtclab"] = _last_json(r["stdout"])
                for v in pair.values():
                    v["cpu_ns_per_packet"] = v["cpu_s"] / v["delivered_packets"] * 1e9
                pairs.append(pair)
            res["htsim"] = {
                "program": str(htsim),
                "workload": "10 NewReno flows, an ACK per packet, 100 Mbit/s, 20 ms, 250,000 B drop-tail, 60 s",
                "rtclab_cpu_ns_per_packet": min(p["rtclab"]["cpu_ns_per_packet"] for p in pairs),
                "htsim_cpu_ns_per_packet": min(p["htsim"]["cpu_ns_per_packet"] for p in pairs),
                "cpu_ratio_paired_median": statistics.median(
                    p["rtclab"]["cpu_ns_per_packet"] / max(p["htsim"]["cpu_ns_per_packet"], 1e-9) for p in pairs),
                "rtclab_delivered_packets": pairs[0]["rtclab"]["delivered_packets"],
                "htsim_delivered_packets": pairs[0]["htsim"]["delivered_packets"],
                "rtclab_events_per_packet": pairs[0]["rtclab"]["events"] / pairs[0]["rtclab"]["delivered_packets"],
                "htsim_events_per_packet": pairs[0]["htsim"]["events"] / pairs[0]["htsim"]["delivered_packets"],
                "pairs": pairs,
            }
            if instructions:
                st.stage("htsim under callgrind")
                hi = _callgrind([htsim], tmp, None)
                st.stage("rtclab's loop under callgrind")
                ri = _callgrind([sys.executable, "-c", _LOOP_CHILD], tmp, "*Simulation*step*", stdin=HTSIM_MATCHED)
                h = res["htsim"]
                h["htsim_instructions_per_packet"] = hi / h["htsim_delivered_packets"]
                h["rtclab_instructions_per_packet"] = ri / h["rtclab_delivered_packets"]
                h["instructions_ratio"] = h["rtclab_instructions_per_packet"] / h["htsim_instructions_per_packet"]
        # 3. A 1,000-flow run's phases.
        runs = []
        scen = tmp / f"bench-{flows}-cubic.toml"
        scen.write_text(DUMBBELL_TOML.format(kind="droptail", flows=flows, duration="60s", capacity="100Mbps"))
        for k in range(repeat):
            st.stage(f"round {k + 1}/{repeat}: {flows} flows, whole process without plots")
            runs.append(_timed_rtclab([str(scen), "--no-plots"], tmp, f"scale-{k}"))
        best = min(runs, key=lambda r: r["wall_s"])
        ph = best["phases"]
        res["flows_1000"] = {
            "flows": flows, "wall_s": best["wall_s"], "median_wall_s": statistics.median(r["wall_s"] for r in runs),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in runs), "phases": ph,
            "after_loop_share": ph["after_loop_s"] / ph["process_s"],
            "loop_share": ph["loop_s"] / ph["process_s"],
            "runs_after_loop_share": [round(r["phases"]["after_loop_s"] / r["phases"]["process_s"], 3) for r in runs],
        }
        st.done()
        from rtclab import _core

        res["machine"] = {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                          "platform": platform.platform()}
        res["rtclab_version"] = _core.__version__
        return _strip(res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _parse_htsim(stdout: str) -> dict:
    """bench/htsim/dumbbell.cpp's line: `flows N secs S delivered_packets P events E utilization U`."""
    words = stdout.strip().splitlines()[-1].split()
    kv = dict(zip(words[::2], words[1::2]))
    try:
        return {"delivered_packets": int(kv["delivered_packets"]), "events": int(kv["events"]),
                "utilization": float(kv["utilization"])}
    except (KeyError, ValueError):
        raise RuntimeError(f"htsim program printed {stdout.strip()[-200:]!r}, not bench/htsim/dumbbell.cpp's line") from None


def _ns3_build(program: str) -> str:
    """Which ns-3 the program is linked against: an optimized build from source (libraries named
    `-optimized`) or another (the PyPI wheel's are `libns3.44-core.so`)."""
    try:
        libs = subprocess.run(["ldd", program], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    core = [line for line in libs.splitlines() if "-core" in line and "libns3" in line]
    if not core:
        return "unknown"
    return "optimized (from source)" if "-optimized" in core[0] else "not optimized (PyPI wheel or default build)"


def _strip(res: dict) -> dict:
    """Drops the raw stdout and clock stamps from what is reported."""
    if isinstance(res, dict):
        return {k: _strip(v) for k, v in res.items() if k not in ("stdout", "started", "ended")}
    if isinstance(res, list):
        return [_strip(v) for v in res]
    return res
