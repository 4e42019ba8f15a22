"""SCReAM v2 in rtclab against its reference simulator, case by case.

    python bench/scream/compare.py REF_DIR RTCLAB_OUT [PERIODS]

REF_DIR holds one case's reference logs (bench/scream/reference.sh: log.txt, txrx.txt);
RTCLAB_OUT is `rtclab run bench/scream/<case>.toml --out RTCLAB_OUT`. Prints, per second and
per period, the rate the receiver got and the queuing delay of every packet (one-way delay less
the smallest), from each side's per-packet record. PERIODS: "from-to,from-to" in seconds
(default: the simulator case's capacity periods).
"""

import json
import sys

import numpy as np
import pandas as pd

# The periods of scream_simulator.cpp's capacity: 10 Mbit/s, 5 Mbit/s in [3 s, 6 s), 10 Mbit/s;
# the first second of each is left out (ramp-up and the step's transient).
PERIODS = "1-3,3.5-6,7-20"


def q16(field: str) -> float:
    """A time the reference writes as `%d.%04d` of seconds and 1/10,000 s; the fraction is
    rounded, so it can read 10000 (`1.10000` is 2.0 s), which a float parse would misread."""
    whole, frac = field.split(".")
    return int(whole) + int(frac) / 10_000


def reference(ref_dir: str) -> pd.DataFrame:
    """One row per packet received: send time (s, the sender's clock, as the log's) and queuing
    delay (ms)."""
    rows = []
    with open(f"{ref_dir}/txrx.txt") as f:
        for line in f:
            p = [x.strip() for x in line.split(",")]
            if len(p) < 5 or p[3].startswith("-"):
                continue
            tx, rx = q16(p[2]), q16(p[3])
            rows.append((tx, rx - tx))
    d = pd.DataFrame(rows, columns=["t", "owd"])
    d["qdelay_ms"] = (d.owd - d.owd.min()) * 1e3
    log = pd.read_csv(f"{ref_dir}/log.txt", header=None, skipinitialspace=True).iloc[:, :14]
    d.attrs["log"] = log.rename(columns={0: "t", 13: "rate_acked"})
    return d


def main() -> None:
    ref_dir, out = sys.argv[1], sys.argv[2]
    periods = [(float(a), float(b), f"{a}-{b} s") for a, b in
               (p.split("-") for p in (sys.argv[3] if len(sys.argv) > 3 else PERIODS).split(","))]
    ref = reference(ref_dir)
    log = ref.attrs["log"]
    flows = pd.read_parquet(f"{out}/flows.parquet")
    print(f"{'second':>6} | {'ref Mbit/s':>10} {'ref qdelay ms':>13} | {'rtclab Mbit/s':>13} {'rtclab qdelay ms':>16}")
    for s in range(int(flows.time_s.max()) + 1):
        a = log[(log.t >= s) & (log.t < s + 1)]
        q = ref[(ref.t >= s) & (ref.t < s + 1)]
        b = flows[(flows.time_s >= s) & (flows.time_s < s + 1)]
        print(f"{s:>6} | {a.rate_acked.mean() / 1e6:10.2f} {q.qdelay_ms.mean():13.1f} | "
              f"{b.throughput_mbps.mean():13.2f} {b.queuing_delay_ms_mean.mean():16.1f}")
    print()
    print(f"{'period':<20} | {'ref Mbit/s':>10} {'qdelay mean':>11} {'p95':>6} | {'rtclab Mbit/s':>13} {'qdelay mean':>11}")
    for lo, hi, name in periods:
        a = log[(log.t >= lo) & (log.t < hi)]
        q = ref[(ref.t >= lo) & (ref.t < hi)]
        b = flows[(flows.time_s >= lo) & (flows.time_s < hi)]
        print(f"{name:<20} | {a.rate_acked.mean() / 1e6:10.2f} {q.qdelay_ms.mean():11.1f} "
              f"{np.percentile(q.qdelay_ms, 95):6.1f} | {b.throughput_mbps.mean():13.2f} "
              f"{b.queuing_delay_ms_mean.mean():11.1f}")
    print()
    summary = json.load(open(f"{out}/summary.json"))
    mine = summary["flows"][0]["queuing_delay_ms"]
    steady = ref[ref.t >= ref.t.min() + 1.0]
    theirs = {f"p{k}": np.percentile(steady.qdelay_ms, k) for k in (50, 95, 99)}
    print("queuing delay over the whole run, every packet (ms; the reference's first second left out):")
    print("  " + "  ".join(f"{k} ref {theirs[k]:.1f} / rtclab {mine[k]:.1f}" for k in theirs))


if __name__ == "__main__":
    main()
