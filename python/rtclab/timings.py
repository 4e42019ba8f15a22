"""Where a `rtclab run` process spends its wall time: start-up, the simulation loop, the
results (the core's tables and summary), the files, the plots and report, the console.

Each phase boundary is a `time.monotonic()` stamp (CLOCK_MONOTONIC, the same clock in every
process of the machine, so `rtclab bench process` can put the child's stamps against the moment
it started the process). `rtclab run --timings` prints the phases' durations to stderr;
RTCLAB_TIMINGS=<file> writes the stamps as JSON for a benchmark.
"""

from __future__ import annotations

import json
import os
import sys
import time

#: name -> monotonic seconds, in the order they were taken.
STAMPS: dict[str, float] = {}

#: The phases `rtclab run` stamps, in order: each lasts from the previous stamp to its own.
PHASES = (
    ("main", "start-up"),
    ("loop_start", "set-up"),
    ("loop_end", "simulation"),
    ("finished", "results"),
    ("files", "files"),
    ("plots", "plots and report"),
    ("exit", "console"),
)


def stamp(name: str) -> None:
    STAMPS[name] = time.monotonic()


def durations(stamps: dict[str, float], start: float | None = None) -> dict[str, float]:
    """Each phase's seconds from the stamps present (`start`: when the process began, for the
    start-up phase; without it that phase is left out)."""
    out: dict[str, float] = {}
    prev = start
    for key, label in PHASES:
        if key not in stamps:
            continue
        if prev is not None:
            out[label] = stamps[key] - prev
        prev = stamps[key]
    return out


def _process_start() -> float | None:
    """When this process began, on the monotonic clock (Linux: /proc/self/stat's start time in
    clock ticks after boot, against CLOCK_BOOTTIME; 10 ms resolution). None elsewhere."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started_after_boot
        return time.monotonic() - age
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def report(print_them: bool) -> None:
    """At the end of `rtclab run`: writes RTCLAB_TIMINGS if set; prints the phases if asked."""
    stamp("exit")
    path = os.environ.get("RTCLAB_TIMINGS")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(STAMPS, f)
    if print_them:
        d = durations(STAMPS, _process_start())
        total = sum(d.values())
        parts = ", ".join(f"{k} {v:.3f} s" for k, v in d.items())
        print(f"timings: {parts}; total {total:.3f} s", file=sys.stderr)
