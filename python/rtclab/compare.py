"""`rtclab compare SCENARIO`: the same scenario in both engines, metric by metric.

The simulator runs our own TCP and media stacks in simulated time; the emulator runs the same
media stack and the same link/queue code on real packets with the kernel's TCP. The comparison
reports, per metric, both values, the difference and whether it is within the tolerance the
emulator issue states (utilization 0.05, median queuing delay 2 ms, flow shares 0.1); other
metrics are shown without a tolerance.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

TOLERANCES = {"utilization": 0.05, "queuing delay p50 ms": 2.0, "share": 0.1}


@dataclass
class Diff:
    scope: str
    metric: str
    sim: float | None
    emu: float | None
    tolerance: float | None

    @property
    def delta(self) -> float | None:
        if self.sim is None or self.emu is None or any(map(math.isnan, (self.sim, self.emu))):
            return None
        return self.emu - self.sim

    @property
    def ok(self) -> bool | None:
        if self.tolerance is None or self.delta is None:
            return None
        return abs(self.delta) <= self.tolerance

    def as_dict(self) -> dict:
        return {"scope": self.scope, "metric": self.metric, "sim": self.sim, "emu": self.emu,
                "delta": self.delta, "tolerance": self.tolerance, "within_tolerance": self.ok}


def _f(x) -> float | None:
    return None if x is None else float(x)


def diff_summaries(sim: dict, emu: dict) -> list[Diff]:
    out = [
        Diff("link", "utilization", _f(sim["link"]["utilization"]), _f(emu["link"]["utilization"]), TOLERANCES["utilization"]),
        Diff("link", "queuing delay p50 ms", _f(sim["link"]["queuing_delay_ms"]["p50"]),
             _f(emu["link"]["queuing_delay_ms"]["p50"]), TOLERANCES["queuing delay p50 ms"]),
        Diff("link", "queuing delay p95 ms", _f(sim["link"]["queuing_delay_ms"]["p95"]),
             _f(emu["link"]["queuing_delay_ms"]["p95"]), None),
        Diff("link", "loss ratio", _f(sim["link"]["loss_ratio"]), _f(emu["link"]["loss_ratio"]), None),
        Diff("all", "Jain index", _f(sim["fairness"]["jain"]), _f(emu["fairness"]["jain"]), None),
    ]
    for fs, fe in zip(sim["flows"], emu["flows"]):
        scope = f"flow {fs['id']} {fs['name']} ({fs['cc']})"
        out.append(Diff(scope, "share", _f(fs["share"]), _f(fe["share"]), TOLERANCES["share"]))
        out.append(Diff(scope, "throughput Mbit/s", _f(fs["throughput_mbps"]), _f(fe["throughput_mbps"]), None))
        out.append(Diff(scope, "queuing delay p50 ms", _f(fs["queuing_delay_ms"]["p50"]),
                        _f(fe["queuing_delay_ms"]["p50"]), None))
        if fs.get("media") and fe.get("media"):
            out.append(Diff(scope, "frame delay p50 ms", _f(fs["media"]["frame_delay_ms"]["p50"]),
                            _f(fe["media"]["frame_delay_ms"]["p50"]), None))
            out.append(Diff(scope, "frame rate", _f(fs["media"]["frame_rate"]), _f(fe["media"]["frame_rate"]), None))
    return out


def format_diffs(diffs: list[Diff]) -> str:
    def num(x):
        return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4g}"

    rows = [("scope", "metric", "sim", "emu", "emu − sim", "tolerance", "")]
    for d in diffs:
        mark = {True: "ok", False: "OUTSIDE", None: ""}[d.ok]
        rows.append((d.scope, d.metric, num(d.sim), num(d.emu), num(d.delta),
                     num(d.tolerance) if d.tolerance is not None else "", mark))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _mean(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None and not math.isnan(x)]
    return sum(vals) / len(vals) if vals else None


def mean_diffs(per_run: list[list[Diff]]) -> list[Diff]:
    """Averages each metric's two sides over runs (same scenario, different seeds)."""
    first = per_run[0]
    return [Diff(d.scope, d.metric, _mean([r[i].sim for r in per_run]), _mean([r[i].emu for r in per_run]), d.tolerance)
            for i, d in enumerate(first)]


def compare(scenario, seed: int | None = None, progress: bool | None = None,
            runs: int = 1) -> tuple[dict, dict, list[Diff]]:
    """Runs the scenario in both engines `runs` times (seeds seed, seed+1, ...) and compares
    the per-metric means; returns the first run's summaries and the diffs. Shares of competing
    loss-based flows vary from run to run in both engines (two CUBIC flows over 40 s: 0.41-0.67
    with 1 ms of jitter), so a share comparison wants several runs."""
    from rtclab.runner import run

    base = 1 if seed is None else seed
    per_run, first = [], None
    for k in range(max(1, runs)):
        sim = run(scenario, seed=base + k, progress=progress).summary
        emu = run(scenario, seed=base + k, progress=progress, engine="emu").summary
        first = first or (sim, emu)
        per_run.append(diff_summaries(sim, emu))
    return first[0], first[1], mean_diffs(per_run)


def write_compare(sim: dict, emu: dict, diffs: list[Diff], out_dir, inputs=()) -> Path:
    from rtclab.output import write_atomically

    def fill(d: Path) -> None:
        (d / "compare.json").write_text(json.dumps({"diffs": [x.as_dict() for x in diffs]}, indent=2) + "\n")
        (d / "summary-sim.json").write_text(json.dumps(sim, indent=2) + "\n")
        (d / "summary-emu.json").write_text(json.dumps(emu, indent=2) + "\n")

    return write_atomically(out_dir, fill, inputs, kind="compare")
