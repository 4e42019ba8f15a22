"""Standard test suites as built-ins: `rtclab suite rfc8867` (RMCAT test cases), `rtclab suite
rfc8869` (RMCAT's Wi-Fi and cellular cases), `rtclab suite l4s` (scalable and classic flows
through DualPI2) and `rtclab suite rmcat-l4s` (the RMCAT cases through DualPI2, media Not-ECT
and ECT(1)), run through the sweep machinery (`rtclab.sweep.execute`: a process pool, a
resumable store keyed by run). The RMCAT suites report RFC 8868's metrics per case and
controller; a suite module may define its own `case_metrics(summaries, case)` and `COLUMNS`
(as `l4s` does) and `DEFAULT_CCS` (the controllers run when none is given)."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any, Optional

from rtclab.scenarios import with_sender

SUITES = ("rfc8867", "rfc8869", "l4s", "rmcat-l4s")


class SuiteError(ValueError):
    """A suite that cannot be run as asked (the message says why)."""


def _load(name: str):
    if name == "rfc8867":
        from rtclab.suites import rfc8867

        return rfc8867
    if name == "rfc8869":
        from rtclab.suites import rfc8869

        return rfc8869
    if name == "l4s":
        from rtclab.suites import l4s

        return l4s
    if name == "rmcat-l4s":
        from rtclab.suites import rmcat_l4s

        return rmcat_l4s
    raise SuiteError(f"unknown suite {name!r}: accepted {', '.join(SUITES)}")


def _mean(xs) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def _utilization(s: dict, bottleneck, shared: bool = False) -> Optional[float]:
    if bottleneck is None:
        return s["link"]["utilization"]
    links = {(l["name"], l.get("direction", "forward")): l for l in s.get("links", [])}
    missing = [b for b in bottleneck if tuple(b) not in links]
    if missing:
        raise SuiteError(f"{s['scenario']}: bottleneck {missing} is not among the run's links {sorted(links)}")
    vals = [links[tuple(b)]["utilization"] for b in bottleneck]
    return sum(vals) if shared else _mean(vals)


def _case_metrics(summaries: list[dict], bottleneck=None, shared: bool = False) -> dict[str, Any]:
    """One case and controller over its seeds: RFC 8868's metrics and the media QoE;
    utilization at the case's bottleneck (see `Case.bottleneck`)."""
    def per_run(s):
        media = [f for f in s["flows"] if f.get("media")]
        other = [f for f in s["flows"] if not f.get("media")]
        five = next((r for r in s["rfc8868"]["fairness_ratios"] if r["window_s"] == 5), {})
        return {
            "utilization": _utilization(s, bottleneck, shared),
            "loss_ratio": s["link"]["loss_ratio"],
            "media_mbps": _mean(f["throughput_mbps"] for f in media),
            "media_queuing_delay_ms_p95": _mean(f["queuing_delay_ms"]["p95"] for f in media),
            "frame_delay_ms_p95": _mean(f["media"]["frame_delay_ms"]["p95"] for f in media),
            "freezes": sum(f["media"]["freezes"] for f in media),
            "within_guideline_5s": five.get("within_guideline"),
            "ratio_median_5s": five.get("ratio_median"),
            "convergence_s": _mean(f["rfc8868"]["convergence_s"] for f in media),
            "oscillations": sum(f["rfc8868"]["oscillations"] for f in media),
            # All cross traffic together, over the run (5.7's short flows are many and brief).
            "cross_traffic_mbps": (sum(f["throughput_mbps"] * f["active_s"] for f in other) / s["duration_s"]
                                   if other else None),
        }
    runs = [per_run(s) for s in summaries]
    return {k: _mean(r[k] for r in runs) for k in runs[0]} if runs else {}


def run_suite(name: str, ccs: list[str], seeds: int = 1, out: str | os.PathLike = "rtclab-out/suite",
              workers: Optional[int] = None, resume: bool = False, progress: bool | None = None,
              force: bool = False) -> list[dict]:
    """Runs every case of the suite for every controller and seed into the store `out`
    (resumable: `resume=True` runs only what is missing); returns one row per case and
    controller, and writes them to DIR/suite.json and DIR/report.html."""
    from rtclab import _core
    from rtclab.output import OutputError
    from rtclab.sweep import STORE_MARKER, RunSpec, SweepError, check_size, execute, run_key

    suite = _load(name)
    if not ccs:
        raise SuiteError("give at least one controller (--cc gcc)")
    if seeds < 1:
        raise SuiteError(f"seeds must be at least 1, got {seeds}")
    try:
        check_size(len(suite.CASES) * len(ccs) * seeds, f"suite {name}",
                   f"{len(suite.CASES)} cases × {len(ccs)} controller(s) × {seeds:,} seeds", None, workers, force,
                   "the seeds or controllers")
    except SweepError as e:
        raise SuiteError(str(e)) from None
    specs, plan = [], []
    for k, case in enumerate(suite.CASES):
        for cc in ccs:
            # The suites' media source is RFC 8593's synthetic codec, which meets its target:
            # the ideal sender, as the suites' tables were measured with.
            scn = with_sender(case.build(cc))
            try:
                _core.validate(json.dumps(scn), "json", ".")
            except _core.ConfigError as e:
                raise SuiteError(f"case {case.section} with cc {cc!r}: {e}") from None
            keys = []
            for seed in range(1, seeds + 1):
                key = run_key(scn, seed)
                specs.append(RunSpec(key, k, seed, {"case": case.section, "cc": cc}, scn))
                keys.append(key)
            plan.append((case, cc, keys))
    out = Path(out)
    marker = out / STORE_MARKER
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out}: exists and is not a directory; choose another --out")
    if out.exists() and any(out.iterdir()):
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise OutputError(f"--out {out}: exists and is not an rtclab store; choose another --out") from None
        if not resume:
            raise OutputError(f"--out {out}: holds results already; add --resume to run what is missing, or choose "
                              f"another --out")
        if info.get("suite") not in (None, name):
            raise OutputError(f"--out {out}: holds the {info.get('suite')} suite; choose another --out")
    else:
        try:
            out.mkdir(parents=True, exist_ok=True)
            marker.write_text(json.dumps({"rtclab_version": _core.__version__, "name": f"suite-{name}", "suite": name,
                                          "kind": "suite store"}) + "\n", encoding="utf-8")
        except OSError as e:
            raise OutputError(f"--out {out}: cannot create the suite store there: {e.strerror or e}") from None
    execute(specs, out, workers, progress, f"{name}", ".")
    rows = []
    for case, cc, keys in plan:
        summaries = [json.loads((out / "runs" / k / "summary.json").read_text(encoding="utf-8")) for k in keys]
        own = getattr(suite, "case_metrics", None)
        metrics = own(summaries, case) if own else _case_metrics(summaries, case.bottleneck, case.bottleneck_shared)
        rows.append({"case": case.section, "title": case.title, "cc": cc, "seeds": len(keys), **metrics})
    not_run = [{"case": sec, "why": why} for sec, why in suite.NOT_RUN.items()]
    doc = {"suite": name, "rows": rows, "not_run": not_run, "expected": expected(name)}
    (out / "suite.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    _write_report(out, name, rows, not_run, columns(name))
    return rows


def default_ccs(name: str) -> list[str]:
    """The controllers suite `name` runs when none is given."""
    return list(getattr(_load(name), "DEFAULT_CCS", ["gcc"]))


def expected(name: str) -> dict[str, str]:
    """The figures suite `name`'s rows are read against (row key -> what and where from)."""
    return dict(getattr(_load(name), "EXPECTED", {}))


def columns(name: str) -> list[tuple[str, str, str]]:
    """(row key, column title, format) of suite `name`'s table."""
    return getattr(_load(name), "COLUMNS", COLUMNS)


#: (row key, column title, format) of the suite table.
COLUMNS = [
    ("utilization", "util.", ".3f"), ("media_mbps", "media Mbit/s", ".2f"),
    ("media_queuing_delay_ms_p95", "qdelay p95 ms", ".0f"), ("frame_delay_ms_p95", "frame delay p95 ms", ".0f"),
    ("freezes", "freezes", ".1f"), ("within_guideline_5s", "within 0.333-3 (5 s)", ".2f"),
    ("ratio_median_5s", "ratio (5 s)", ".2f"), ("convergence_s", "converged s", ".1f"),
    ("oscillations", "osc.", ".1f"), ("cross_traffic_mbps", "TCP Mbit/s", ".2f"),
]


def format_rows(rows: list[dict], suite: str = "rfc8867") -> str:
    from tabulate import tabulate

    cols = columns(suite)
    body = [[r["case"], r["cc"], *["n/a" if r.get(k) is None else f"{r[k]:{fmt}}" for k, _, fmt in cols]]
            for r in rows]
    return tabulate(body, headers=["case", "cc", *[t for _, t, _ in cols]], tablefmt="simple",
                    disable_numparse=True)


def _write_report(out: Path, name: str, rows: list[dict], not_run: list[dict],
                  cols: list[tuple[str, str, str]]) -> None:
    from rtclab import _core
    from rtclab.reporting import render

    cells = [{"case": r["case"], "title": r["title"], "cc": r["cc"], "seeds": r["seeds"],
              "cells": ["n/a" if r.get(k) is None else format(r[k], f) for k, _, f in cols]} for r in rows]
    html = render("suite.html", name=name, rows=cells, columns=[title for _, title, _ in cols],
                  not_run=[{"case": n["case"], "why": n["why"]} for n in not_run], version=_core.__version__)
    tmp = out / f".report.html.tmp-{os.getpid()}"
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, out / "report.html")
