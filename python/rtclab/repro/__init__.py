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
from rtclab.scenarios import with_sender


@dataclass
class Job:
    key: tuple
    scenario: dict[str, Any]
    seed: int = 1

    def __post_init__(self) -> None:
        # The reproductions were calibrated with the ideal sender; a paper's media flow keeps it
        # unless its module names another (`media.sender`).
        self.scenario = with_sender(self.scenario)


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
#: A published gain (a reduction, a speed-up, a ratio) that ours meets and passes in the claim's
#: own direction: "27× shorter" met by 91×. Rows say which way is a gain with `better`.
BEYOND = "beyond published"
DIRECTION = "direction only"
MISSED = "not reproduced"
NOT_MEASURED = "not measured"
#: The verdicts that count as a reproduced published figure.
REPRODUCED = (WITHIN, BEYOND)
#: The `cause` of a row that is not reproduced (or not measured) and that no experiment explains yet;
#: "open: <reason>" says why it cannot be settled here.
OPEN = "open"


@dataclass(frozen=True)
class Kind:
    """How a published figure of one kind of metric is judged when a row does not say."""

    name: str
    tol: float
    abs_tol: float


#: Metric kinds, audited once for every reproduction (tests/test_repro.py has a case per kind):
#: (regular expression searched in the metric's name, kind). The first match wins; a metric of
#: no kind is judged within 15 % relative. A fairness index lives in [1/n, 1] and sits near 1,
#: where 15 % spans "fair" to "unfair": ± 0.05 absolute. A ratio of one policy's QoE to
#: another's sits near 1 and the papers quote it to a per cent or two: ± 0.03 absolute.
KINDS: tuple[tuple[str, Kind], ...] = (
    (r"\b(Jain|JFI)\b", Kind("fairness index", 0.0, 0.05)),
    (r"^tree(-O)? / DNN\b.*QoE$|\bQoE ratio$", Kind("QoE ratio", 0.0, 0.03)),
    # A baseline's error over Metis' ("1.2-1.7× lower"): ± 0.05 absolute, so a ratio under 1 (the
    # baseline the more faithful) never passes a claim of a wide range.
    (r"^baseline / Metis\b", Kind("fidelity ratio", 0.0, 0.05)),
)


def kind_of(metric: str) -> Kind | None:
    import re

    return next((k for pat, k in KINDS if re.search(pat, metric)), None)


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
    #: relative and absolute tolerance; None: the metric's kind's (`KINDS`), else 15 % relative
    tol: float | None = None
    abs_tol: float | None = None
    #: For a published gain, the direction in which passing the published value still meets the
    #: claim ("lower": a reduction, a cost at most so much; "higher": a speed-up, a share of wins);
    #: None for a published behaviour, which is judged both ways.
    better: str | None = None
    #: For a row that is not reproduced or not measured: what explains it (the experiment, its
    #: rows or doc section and the command) or `OPEN`; filled from the paper's `GAP_CAUSES` when left
    #: None (`explain`).
    cause: str | None = None

    def __post_init__(self) -> None:
        if self.better not in (None, "lower", "higher"):
            raise ValueError(f"Row.better must be 'lower', 'higher' or None, got {self.better!r}")
        kind = kind_of(self.metric)
        if self.tol is None:
            self.tol = kind.tol if kind else 0.15
        if self.abs_tol is None:
            self.abs_tol = kind.abs_tol if kind else 0.0
        if self.verdict is None:
            self.verdict = judge(self.ours, self.paper, self.tol, self.abs_tol, self.better)

    def as_dict(self) -> dict[str, Any]:
        d = {"experiment": self.experiment, "variant": self.variant, "metric": self.metric,
             "ours": self.ours, "paper": self.paper, "verdict": self.verdict, "note": self.note}
        if self.verdict in (MISSED, NOT_MEASURED):
            d["cause"] = self.cause or OPEN
        return d


_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"


def judge(ours: float | None, paper: str, tol: float = 0.15, abs_tol: float = 0.0,
          better: str | None = None) -> str:
    """The verdict for a published value written as "X", "≈ X", "< X", "> X", "<= X", ">= X" or
    "X-Y" / "X to Y" (leading text only; anything after the number is a remark): `WITHIN` or
    `MISSED`, "" when the published value is not a number (qualitative, or "–"), "not measured"
    when ours is missing. A number written with "%" (with or without a space) is a fraction
    ("-50%" = "-50 %" = -0.5, as such rows give ours); a range may run either way ("-14% to -64%").

    Direction: a value or range is a behaviour, met within `tol` (relative) or `abs_tol` on both
    sides, unless `better` says it is a gain: then a figure past it on the `better` side is
    `BEYOND` (met, and more), one short of it by more than the tolerance `MISSED`. A bound ("<",
    ">=") is one-sided as written and needs no `better`."""
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
        return NOT_MEASURED

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
    else:
        lo = hi = value(m_value, 1) if m_value else float("nan")
        slack = max(tol * abs(lo), abs_tol)
    if lo - slack <= ours <= hi + slack:
        return WITHIN
    if (better == "lower" and ours < lo) or (better == "higher" and ours > hi):
        return BEYOND
    return MISSED


@dataclass
class Cause:
    """Why rows are not reproduced (or not measured): the experiment that shows it, where its rows
    and write-up are, and the command. Matches a row when `experiment`, `variant` and `metric`
    (regular expressions, searched from the start; "" matches anything) all match."""

    experiment: str
    text: str
    variant: str = ""
    metric: str = ""

    def matches(self, row: "Row") -> bool:
        import re

        return all(re.match(pat, val) for pat, val in ((self.experiment, row.experiment),
                                                        (self.variant, row.variant), (self.metric, row.metric)))


def explain(rows: list["Row"], causes: list[Cause]) -> list["Row"]:
    """Fills `cause` on every row that is not reproduced or not measured and has none yet: the
    first matching entry of `causes` (a paper module's `GAP_CAUSES`), else `OPEN`. Returns the rows."""
    for r in rows:
        if r.verdict in (MISSED, NOT_MEASURED) and r.cause is None:
            r.cause = next((c.text for c in causes if c.matches(r)), OPEN)
    return rows


def note_follows(rows: list["Row"], rules: list[Cause]) -> list["Row"]:
    """Where a paper's text and its authors' released code disagree, says on each row that
    carries a published figure which of the two the row follows: the first matching entry of
    `rules` (a paper module's `TEXT_OR_CODE`; its `text` starts "follows ...") is added to the
    row's note, unless the note already says what it follows. Returns the rows."""
    for r in rows:
        if not r.verdict or "follows " in r.note:
            continue
        rule = next((c for c in rules if c.matches(r)), None)
        if rule is not None:
            r.note = f"{r.note}; {rule.text}" if r.note else rule.text
    return rows


def is_open(cause: str | None) -> bool:
    """A cause that explains nothing: `OPEN`, or "open: <why it cannot be settled here>"."""
    return cause is None or cause == OPEN or cause.startswith(OPEN + ":")


def tally(rows: list["Row"] | list[dict]) -> dict[str, int]:
    """Counts of a reproduction's rows that carry a published figure: `published` (all of them),
    `reproduced` (within tolerance or beyond it in the claim's direction), `direction` (only the
    ordering holds), `explained` and `open` (not reproduced or not measured, with a cause or not;
    `open_with_reason` of the open ones say why they cannot be settled here), `not_measured` (of
    which some are explained or open too)."""
    get = (lambda r, k: r.get(k)) if rows and isinstance(rows[0], dict) else getattr  # type: ignore[union-attr]
    t = {"published": 0, "reproduced": 0, "direction": 0, "explained": 0, "open": 0, "open_with_reason": 0,
         "not_measured": 0}
    for r in rows:
        v = get(r, "verdict")
        if not v:
            continue
        t["published"] += 1
        if v in REPRODUCED:
            t["reproduced"] += 1
        elif v == DIRECTION:
            t["direction"] += 1
        else:
            t["not_measured"] += v == NOT_MEASURED
            cause = get(r, "cause")
            t["open" if is_open(cause) else "explained"] += 1
            t["open_with_reason"] += bool(cause and cause.startswith(OPEN + ":"))
    return t


def tally_line(rows: list["Row"] | list[dict]) -> str:
    """"N of M published figures reproduced, K explained, J open" (and how many hold in
    direction only, and how many are not measured, when any)."""
    t = tally(rows)
    line = f"{t['reproduced']} of {t['published']} published figures reproduced"
    if t["direction"]:
        line += f", {t['direction']} in direction only"
    line += f", {t['explained']} explained, {t['open']} open"
    if t["open_with_reason"]:
        line += f" ({t['open_with_reason']} with a reason they cannot be settled here)"
    if t["not_measured"]:
        line += f"; {t['not_measured']} of the explained and open are not measured"
    return line


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
    rows = note_follows(built.evaluate(results), getattr(module, "TEXT_OR_CODE", []))
    return Outcome(built, explain(rows, getattr(module, "GAP_CAUSES", [])), results, wall)


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
