"""Reproductions of published experiments: `rtclab repro <paper>`.

A reproduction is a list of runs (scenario dicts) and a function that turns their results into
rows {experiment, variant, metric, ours, paper}. Runs execute in parallel on a thread pool:
each simulation releases the GIL, so threads use every core.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rtclab.progress import ProgressBar
from rtclab.runner import RunResult, run


@dataclass
class Job:
    key: tuple
    scenario: dict[str, Any]
    seed: int = 1


#: every `rtclab repro PAPER`, each a module of this package with `build(runs=...)`
PAPERS = ("gcc", "copa", "qlibra", "fairness", "zhuge", "confucius", "hairpin", "afr", "metis")
#: The shipped data sets (`rtclab.datasets`) a paper's reproduction reads, checked before any run
#: so that a missing set costs a message (exit 2), not a reproduction cut short at the end.
DATA_SETS = {"hairpin": ("hairpin",), "metis": ("pensieve", "wireless-zhuge")}


def check_data(paper: str) -> None:
    """Raises `rtclab.datasets.DataMissing` if a data set the paper's reproduction reads is missing."""
    from rtclab import datasets

    for name in DATA_SETS.get(paper, ()):
        datasets.locate(name)


WITHIN = "within tolerance"
DIRECTION = "direction only"
MISSED = "not reproduced"


@dataclass
class Row:
    """One published number next to ours. `verdict` is judged from `paper` when it is a number,
    a bound ("< 3", "> 0.9") or a range ("1120-1160"): within `tol` (relative) or `abs_tol`
    (absolute) of it, or not; rows whose published result is qualitative, or whose comparison is
    an ordering between variants, set it themselves (`DIRECTION` when only the ordering holds).
    A row with no published number ("–") has no verdict."""

    experiment: str
    variant: str
    metric: str
    ours: float | None
    paper: str
    note: str = ""
    verdict: str | None = None
    tol: float = 0.15
    abs_tol: float = 0.0

    def __post_init__(self) -> None:
        if self.verdict is None:
            self.verdict = judge(self.ours, self.paper, self.tol, self.abs_tol)

    def as_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "variant": self.variant, "metric": self.metric,
                "ours": self.ours, "paper": self.paper, "verdict": self.verdict, "note": self.note}


_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"


def judge(ours: float | None, paper: str, tol: float = 0.15, abs_tol: float = 0.0) -> str:
    """The verdict for a published value written as "X", "≈ X", "< X", "> X", "<= X", ">= X" or
    "X-Y" / "X to Y" (leading text only; anything after the number is a remark): `WITHIN` or
    `MISSED`, "" when the published value is not a number (qualitative, or "–"), "not measured"
    when ours is missing. A number written with "%" (with or without a space) is a fraction
    ("-50%" = "-50 %" = -0.5, as such rows give ours); a range may run either way ("-14% to -64%")."""
    import math
    import re

    text = paper.strip().replace("≤", "<=").replace("≥", ">=").replace("−", "-")
    num = rf"({_NUM})(\s*%)?"
    m_bound = re.match(rf"^(<=|>=|<|>)\s*{num}", text)
    m_range = re.match(rf"^{num}\s*(?:-|–|to)\s*{num}", text)
    m_value = re.match(rf"^(?:≈|~|about)?\s*{num}", text)
    if not (m_bound or m_range or m_value):
        return ""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return "not measured"

    def value(m: re.Match, i: int) -> float:
        return float(m.group(i)) / (100.0 if m.group(i + 1) else 1.0)

    if m_bound:
        op, x = m_bound.group(1), value(m_bound, 2)
        ok = {"<": ours < x, "<=": ours <= x, ">": ours > x, ">=": ours >= x}[op]
        return WITHIN if ok else MISSED
    # One "%" after a range ("0.47-0.49 %") covers both ends.
    scale = 100.0 if m_range and (m_range.group(2) or m_range.group(4)) else 1.0
    if m_range and float(m_range.group(1)) != float(m_range.group(3)):
        lo, hi = sorted((float(m_range.group(1)) / scale, float(m_range.group(3)) / scale))
        slack = max(tol * max(abs(lo), abs(hi)), abs_tol)
        return WITHIN if lo - slack <= ours <= hi + slack else MISSED
    x = value(m_value, 1) if m_value else float("nan")
    return WITHIN if abs(ours - x) <= max(tol * abs(x), abs_tol) else MISSED


@dataclass
class Reproduction:
    name: str
    title: str
    jobs: list[Job]
    evaluate: Callable[[dict[tuple, RunResult]], list[Row]]
    #: (figure title, [job keys]) for the report
    figures: list[tuple[str, list[tuple]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: extra plots (results, output dir) -> [(title, png path)]
    extra_plots: Callable[[dict[tuple, RunResult], Path], list[tuple[str, Path]]] | None = None


def run_jobs(jobs: list[Job], workers: int | None = None, progress: bool | None = None,
             store: str | os.PathLike | None = None) -> dict[tuple, RunResult]:
    """Every job's result. With a `store` (a sweep store: `rtclab.sweep`), the jobs are runs of
    it: each runs once on a process pool, a killed reproduction resumes where it stopped, and
    runs already in the store (from this paper or any other sweep) are not run again."""
    if store is not None:
        return _run_jobs_in_store(jobs, Path(store), workers, progress)
    workers = workers or os.cpu_count() or 1
    bar = ProgressBar("reproducing", len(jobs), unit="runs", enabled=progress)
    results: dict[tuple, RunResult] = {}
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run, j.scenario, j.seed, False): j for j in jobs}
        try:
            for fut in futures:
                results[futures[fut].key] = fut.result()
                done += 1
                bar.update(done)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
        finally:
            bar.close()
    return results


def _run_jobs_in_store(jobs: list[Job], store: Path, workers: int | None, progress: bool | None) -> dict[tuple, RunResult]:
    from rtclab.sweep import RunSpec, execute, load_run, run_key

    specs, by_key = [], {}
    for j in jobs:
        key = run_key(j.scenario, j.seed)
        if key not in by_key:
            specs.append(RunSpec(key, len(specs), j.seed, {"repro job": " / ".join(map(str, j.key))}, j.scenario))
        by_key.setdefault(key, []).append(j.key)
    execute(specs, store, workers, progress, "reproducing", str(Path.cwd()))
    results = {}
    for key, job_keys in by_key.items():
        r = load_run(store / "runs" / key)
        for k in job_keys:
            results[k] = r
    return results


@dataclass
class Outcome:
    """A reproduction that ran: what was built, its rows, the runs' results, wall seconds."""
    repro: "Reproduction"
    rows: list
    results: dict
    wall: float


def reproduce_paper(paper: str, runs: int = 10, jobs: int | None = None, only: str | set | None = None,
                    store: str | Path | None = None, progress: bool | None = None) -> Outcome:
    """`rtclab repro PAPER` without its printing and writing: the one orchestration the CLI and
    `rtclab.reproduce` share. Checks the request (paper, runs, `only` against the paper's
    experiments, its data sets, the store) before any run; raises ValueError (bad request),
    `rtclab.datasets.DataMissing` or `rtclab.output.OutputError` (a store that is not one)."""
    import inspect
    import time
    from importlib import import_module

    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}: accepted {', '.join(PAPERS)}")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"--runs must be at least 1, got {runs!r}")
    module = import_module(f"rtclab.repro.{paper}")
    kw = {}
    if only is not None:
        parts = getattr(module, "PARTS", None)
        if parts is None or "only" not in inspect.signature(module.build).parameters:
            raise ValueError(f"repro {paper}: --only is not supported (it runs its experiments as one set)")
        given = {p.strip() for p in (only.split(",") if isinstance(only, str) else only) if p.strip()}
        if not given or given - set(parts):
            bad = ", ".join(sorted(given - set(parts))) or "nothing"
            shown = only if isinstance(only, str) else ",".join(sorted(only))
            raise ValueError(f"repro {paper} --only {shown!r}: unknown experiment(s) {bad} "
                             f"(accepted: {', '.join(parts)})")
        kw["only"] = given
    check_data(paper)
    if store is not None:
        _open_repro_store(Path(store), paper)
    built = module.build(runs=runs, **kw)
    t0 = time.perf_counter()
    results = run_jobs(built.jobs, workers=jobs, progress=progress, store=str(store) if store is not None else None)
    wall = time.perf_counter() - t0
    return Outcome(built, built.evaluate(results), results, wall)


def _open_repro_store(store: Path, paper: str) -> None:
    from rtclab import _core
    from rtclab.output import OutputError
    from rtclab.sweep import STORE_MARKER

    if store.exists() and not store.is_dir():
        raise OutputError(f"--store {store}: exists and is not a directory; choose another --store")
    if store.exists() and any(store.iterdir()) and not (store / STORE_MARKER).is_file() and not (store / "runs").is_dir():
        raise OutputError(f"--store {store}: exists and is not an rtclab run store; choose another --store")
    try:
        store.mkdir(parents=True, exist_ok=True)
        if not (store / STORE_MARKER).is_file():
            (store / STORE_MARKER).write_text(json.dumps({"rtclab_version": _core.__version__, "name": f"repro-{paper}",
                                                          "kind": "run store"}) + "\n", encoding="utf-8")
    except OSError as e:
        raise OutputError(f"--store {store}: cannot create the run store there: {e.strerror or e}") from None


def format_table(rows: list[Row]) -> str:
    head = ("experiment", "variant", "metric", "ours", "paper", "verdict")
    body = [(r.experiment, r.variant, r.metric, "–" if r.ours is None else f"{r.ours:.3g}", r.paper, r.verdict or "")
            for r in rows]
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(6)]
    line = lambda cols: "  ".join(str(c).ljust(w) for c, w in zip(cols, widths))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, body)])


def write_outputs(repro: Reproduction, rows: list[Row], results: dict[tuple, RunResult], out_dir: str, wall: float) -> Path:
    from rtclab import plots, reporting
    from rtclab.output import write_atomically

    def fill(d: Path) -> None:
        with open(d / "repro.json", "w", encoding="utf-8") as f:
            json.dump([r.as_dict() for r in rows], f, indent=2)
            f.write("\n")
        images = []
        for i, (title, keys) in enumerate(repro.figures):
            for k in keys:
                if k in results:
                    name = f"fig{i}-" + "-".join(str(x) for x in k).replace("/", "_") + ".png"
                    images.append((f"{title}: {' / '.join(str(x) for x in k)}", plots.plot_throughput(results[k], d / name)))
        if repro.extra_plots is not None:
            images.extend(repro.extra_plots(results, d))
        reporting.write_repro_report(repro, rows, images, d / "report.html", wall)

    return write_atomically(out_dir, fill, kind="repro")
