"""Draws every plot of a fixed set of runs with whichever `rtclab` is importable, one folder per
run, so two builds' images can be compared byte for byte:

    PYTHONPATH=/path/to/other/python python bench/draw_plots.py OUT_A
    python bench/draw_plots.py OUT_B
    diff -r OUT_A OUT_B

The runs: built-in scenarios, the shipped examples, and three made here for the plots' other
paths (16 flows, where the spread across flows replaces per-flow lines for TCP; 64 flows with 14
media flows; a capacity collapse with freezes and stalls). docs/benchmarks.md ("Plots and report
without numpy or Jinja2") used it for the numpy-free plots.
"""

import sys
from pathlib import Path

import rtclab
from rtclab import plots

HERE = Path(__file__).resolve().parent.parent
BUILT_IN = ["default", "bench-10-cubic", "gcc-vs-cubic"]
EXAMPLES = ["wifi-ap-zhuge", "fq-codel-mixed", "cellular-trace", "l4s-coexist", "parking-lot"]

MADE = {
    "flows-16": """
name = "flows-16"
duration = "20s"
[link]
capacity = "20Mbps"
queue = { limit = "1bdp" }
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "60ms"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = 14
start = "1s"
stop = "15s"
""",
    "flows-64": """
name = "flows-64"
duration = "6s"
[link]
capacity = "100Mbps"
queue = { limit = "1bdp" }
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
count = 14
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "20ms"
count = 50
start = "2s"
[metrics]
warmup = "1s"
""",
    "collapse": """
name = "collapse"
duration = "12s"
[link]
capacity = { schedule = [["0s", "3Mbps"], ["5s", "0.2Mbps"], ["8s", "3Mbps"]] }
queue = { limit = "300ms" }
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
media = { sender = "ideal" }
[metrics]
warmup = "1s"
""",
}


def main(out: Path) -> None:
    runs = [(name, name) for name in BUILT_IN]
    runs += [(name, str(HERE / "examples" / f"{name}.toml")) for name in EXAMPLES]
    runs += list(MADE.items())
    for name, scenario in runs:
        result = rtclab.run(scenario)
        folder = out / name
        folder.mkdir(parents=True, exist_ok=False)
        made = plots.plot_report(result, folder)
        print(f"{name}: {len(made)} plots", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python bench/draw_plots.py OUT_DIR (a folder that does not exist yet)")
    main(Path(sys.argv[1]))
