"""Whole `rtclab run` processes of two Python packages over one core library, alternating, with
the phases `rtclab bench process` reports (start-up, the loop, after the loop):

    git archive <commit> python/rtclab | tar -x -C /tmp/old
    cp python/rtclab/_core*.so /tmp/old/python/rtclab/
    python bench/ab_process.py /tmp/old/python 8 /tmp/b1000.toml --no-plots

A is the package at the given path (its `python/` folder), B the one importable here; N pairs,
the order alternating; the scenario and `rtclab run`'s options follow (default: bench-10-cubic
without plots). The old package must work with this core library (a core that only added
functions does). docs/benchmarks.md quotes its output where it compares Python-side changes.
"""

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from rtclab import bench_process as bp


def main(argv: list[str]) -> int:
    if len(argv) < 1 or not Path(argv[0], "rtclab").is_dir():
        print(__doc__.strip(), file=sys.stderr)
        print("error: the first argument must be a folder holding an `rtclab` package", file=sys.stderr)
        return 2
    old = str(Path(argv[0]).resolve())
    pairs = int(argv[1]) if len(argv) > 1 else 6
    scenario = argv[2] if len(argv) > 2 else "bench-10-cubic"
    extra = argv[3:] or ["--no-plots"]
    here = str(Path(bp.__file__).resolve().parent.parent)
    tmp = Path(tempfile.mkdtemp(prefix="rtclab-ab-"))
    runs: dict[str, list[dict]] = {"A": [], "B": []}
    for k in range(pairs):
        for who in ("A", "B") if k % 2 == 0 else ("B", "A"):
            stamps = tmp / f"{who}{k}.json"
            env = dict(os.environ, PYTHONPATH=old if who == "A" else here, RTCLAB_TIMINGS=str(stamps))
            r = bp._spawn([sys.executable, "-m", "rtclab.cli", "run", "--no-progress", scenario, *extra,
                           "--out", str(tmp / f"{who}{k}")], env=env)
            ph = bp._phases(r, json.loads(stamps.read_text()))
            ph["peak_rss_mib"] = r["peak_rss_mib"]
            runs[who].append(ph)
    for who, rs in runs.items():
        def fig(key: str) -> str:
            v = [r[key] for r in rs]
            return f"{key} min {min(v):.3f} med {statistics.median(v):.3f}"

        share = [r["after_loop_s"] / r["process_s"] for r in rs]
        print(f"{who} ({old if who == 'A' else here}): " + ", ".join(
            fig(k) for k in ("process_s", "start_up_s", "loop_s", "after_loop_s"))
            + f", after-loop share min {min(share):.3f} med {statistics.median(share):.3f} max {max(share):.3f}"
            + f", peak {max(r['peak_rss_mib'] for r in rs):.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
