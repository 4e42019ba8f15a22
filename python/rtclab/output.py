"""Writing a run's results into a directory, atomically.

Everything is written into a temporary sibling directory that is renamed into place only
once complete, so a failing or interrupted run never leaves a half-written directory and
never replaces an earlier result.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from rtclab.runner import RunResult


class OutputError(OSError):
    """The output directory cannot be written."""


def write_atomically(out_dir: str | os.PathLike, fill: Callable[[Path], None]) -> Path:
    """Calls `fill(tmp)` to populate a temporary directory, then moves it to `out_dir`.

    An existing `out_dir` is replaced only after `fill` succeeded.
    """
    out = Path(out_dir).absolute()
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out_dir}: exists and is not a directory")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as e:
        raise OutputError(f"--out {out_dir}: cannot create the output directory: {e.strerror or e}") from e
    try:
        fill(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        old.rmdir()
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)
    return out


def write_result(result: RunResult, out_dir: str | os.PathLike, plots: bool = True) -> Path:
    """summary.json, Parquet time series, scenario copy, PNG plots and report.html."""

    def fill(d: Path) -> None:
        with open(d / "summary.json", "w", encoding="utf-8") as f:
            json.dump(result.summary, f, indent=2)
            f.write("\n")
        result.flows.to_parquet(d / "flows.parquet", index=False)
        result.link.to_parquet(d / "link.parquet", index=False)
        result.fairness.to_parquet(d / "fairness.parquet", index=False)
        if result.scenario_text:
            (d / "scenario.toml" if not result.scenario_text.lstrip().startswith("{") else d / "scenario.json").write_text(
                result.scenario_text, encoding="utf-8"
            )
        if result.capture_path:
            shutil.move(result.capture_path, d / "bottleneck.pcap")
        if plots:
            from rtclab import plots as plotting
            from rtclab import report

            images = plotting.plot_all(result, d)
            report.write_report(result, images, d / "report.html")

    return write_atomically(out_dir, fill)
