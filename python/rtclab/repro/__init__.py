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


@dataclass
class Row:
    experiment: str
    variant: str
    metric: str
    ours: float | None
    paper: str
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "variant": self.variant, "metric": self.metric,
                "ours": self.ours, "paper": self.paper, "note": self.note}


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


def format_table(rows: list[Row]) -> str:
    head = ("experiment", "variant", "metric", "ours", "paper")
    body = [(r.experiment, r.variant, r.metric, "–" if r.ours is None else f"{r.ours:.3g}", r.paper) for r in rows]
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(5)]
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
