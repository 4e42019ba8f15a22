"""`rtclab bench process`: whole `rtclab run` processes against ns-3, side by side.

The foundation benchmark (ten CUBIC flows, 100 Mbit/s, 20 ms, 1-BDP drop-tail, 60 s) as a
user runs it: `rtclab run bench-10-cubic --no-plots` and with plots, each a fresh process,
wall time and peak memory (the process's maximum resident set, from wait4) — and, given the
ns-3 program of `bench/ns3/` (`make bench-ns3` builds it against the PyPI `ns3` wheel and runs
this), the same figures for ns-3 in the same run, and the ratios. Issue 16 point 9's goals:
without plots at least 30x ns-3's wall time, with plots 15x, peak memory at most 2x ns-3's.
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

GOALS = {"no_plots_speedup": 30.0, "plots_speedup": 15.0, "memory_ratio": 2.0}


def _measure(argv: list[str], cwd: Optional[str] = None) -> dict:
    """Runs argv to completion; its wall time, peak RSS (MiB) and stdout."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {p.returncode}: {err.decode(errors='replace')[-500:]}")
    return {"wall_s": wall, "peak_rss_mib": usage.ru_maxrss / 1024, "stdout": out.decode(errors="replace")}


def _best(runs: list[dict]) -> dict:
    best = min(runs, key=lambda r: r["wall_s"])
    return {
        "wall_s": best["wall_s"],
        "median_wall_s": statistics.median(r["wall_s"] for r in runs),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "runs_wall_s": [round(r["wall_s"], 4) for r in runs],
    }


def bench_process(ns3: Optional[str] = None, repeat: int = 3) -> dict:
    """Best of `repeat` whole processes each: rtclab without plots, rtclab with plots, and the
    ns-3 program `ns3` (a path) if given. Peak memory is the largest resident set of the
    process (wait4 reports the largest of it and any child it waited for; rtclab draws its plots
    on threads of the same process, so nothing runs outside it)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    rtclab = [sys.executable, "-m", "rtclab.cli", "run", "bench-10-cubic", "--no-progress"]
    tmp = Path(tempfile.mkdtemp(prefix="rtclab-bench-process-"))
    try:
        res: dict = {"benchmark": "process", "scenario": "bench-10-cubic",
                     "description": "whole processes: rtclab run bench-10-cubic (60 s, 10 CUBIC flows, 100 Mbit/s) "
                                    "with and without plots, and ns-3 on the same benchmark"}
        for key, extra in (("rtclab_no_plots", ["--no-plots"]), ("rtclab_plots", [])):
            runs = []
            for k in range(repeat):
                runs.append(_measure([*rtclab, *extra, "--out", str(tmp / f"{key}-{k}")]))
            res[key] = _best(runs)
        if ns3:
            runs = [_measure([ns3]) for _ in range(repeat)]
            res["ns3"] = _best(runs)
            res["ns3"]["program"] = str(ns3)
            res["ns3"]["output"] = json.loads(runs[0]["stdout"].strip().splitlines()[-1])
            ns3_wall, ns3_mem = res["ns3"]["wall_s"], res["ns3"]["peak_rss_mib"]
            res["ratios"] = {
                "no_plots_speedup": ns3_wall / res["rtclab_no_plots"]["wall_s"],
                "plots_speedup": ns3_wall / res["rtclab_plots"]["wall_s"],
                "memory_ratio_no_plots": res["rtclab_no_plots"]["peak_rss_mib"] / ns3_mem,
                "memory_ratio_plots": res["rtclab_plots"]["peak_rss_mib"] / ns3_mem,
            }
            res["goals"] = GOALS
        from rtclab import _core

        res["machine"] = {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                          "platform": platform.platform()}
        res["rtclab_version"] = _core.__version__
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
