"""Writing a run's results into a directory, atomically and without touching the user's files.

Everything is written into a temporary sibling directory that is renamed into place only
once complete, so a failing or interrupted run never leaves a half-written directory and
never replaces an earlier result.

A user's files are never deleted or overwritten. Every directory rtclab writes carries a
marker file (`.rtclab-output.json`) listing the files it wrote; an existing output directory
is replaced only when it holds that marker and nothing beyond the files the marker lists.
The current directory (or any directory above it) and a directory that holds the run's own
inputs are never replaced. A temporary directory left by a killed run carries a marker with
its process id and is removed by the next run writing beside it, once that process is gone.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from rtclab import _core
from rtclab.runner import RunResult

MARKER = ".rtclab-output.json"
TMP_MARKER = ".rtclab-tmp.json"


class OutputError(OSError):
    """The output directory cannot be written (the message says why and what to do)."""


def _listing(d: Path) -> list[str]:
    """Every file and directory under `d`, relative, sorted (directories with a trailing /)."""
    out = []
    for root, dirs, files in os.walk(d):
        rel = Path(root).relative_to(d)
        out.extend(f"{(rel / x).as_posix()}/" for x in dirs)
        out.extend((rel / x).as_posix() for x in files)
    return sorted(out)


def _pid_alive(pid: int) -> bool:
    """Whether the process runs; a zombie (dead, not yet reaped: common in containers whose
    init does not reap) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state != b"Z"
    except (OSError, IndexError):
        return True


def _leftover_pid(p: Path) -> int | None:
    """The writer of an rtclab temporary directory: from its marker, else from its name
    (`.NAME.tmp-PID-XXXX`: a writer killed before writing the marker, or after removing it and
    before its final rename, leaves only the name); None if it is not ours."""
    try:
        return int(json.loads((p / TMP_MARKER).read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    m = re.search(r"\.(?:tmp|old)-(\d+)-[^/]*$", p.name)
    return int(m.group(1)) if m else None


def sweep_leftovers(parent: Path) -> list[Path]:
    """Removes temporary directories of killed rtclab runs in `parent` (only rtclab's own)."""
    removed = []
    try:
        candidates = [p for p in parent.iterdir() if p.name.startswith(".") and (".tmp-" in p.name or ".old-" in p.name)]
    except OSError:
        return removed
    for p in candidates:
        pid = _leftover_pid(p)
        if pid is None:
            continue  # not ours (or not readable): leave it
        if pid == os.getpid() or _pid_alive(pid):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def check_replaceable(out: Path, out_arg: str, inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Raises OutputError unless `out` may be replaced by rtclab without losing a user's file."""
    hint = "choose another --out, or move or delete it yourself"
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out_arg}: exists and is not a directory; {hint}")
    if not out.exists():
        return
    real = out.resolve()
    cwd = Path.cwd().resolve()
    if real == cwd or real in cwd.parents:
        raise OutputError(f"--out {out_arg}: is the current directory or one above it; rtclab never replaces it ({hint})")
    for p in inputs:
        try:
            ip = Path(p).resolve()
        except OSError:
            continue
        if ip == real or real in ip.parents:
            raise OutputError(f"--out {out_arg}: holds this run's input {p}; rtclab never replaces it ({hint})")
    present = _listing(out)
    if not present:
        return  # an empty directory: nothing to lose
    try:
        marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
        written = set(marker["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise OutputError(
            f"--out {out_arg}: exists and was not written by rtclab (no {MARKER}); rtclab only replaces its own "
            f"output directories: {hint}"
        ) from None
    foreign = [x for x in present if x not in written and x not in (MARKER, TMP_MARKER)]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise OutputError(
            f"--out {out_arg}: holds files rtclab did not write ({shown}); it will not replace them: {hint}"
        )


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(
    out_dir: str | os.PathLike, fill: Callable[[Path], None], inputs: Iterable[str | os.PathLike] = (), kind: str = "run",
    source: str | None = None,
) -> Path:
    """Calls `fill(tmp)` to populate a temporary directory, then moves it to `out_dir`.

    An existing `out_dir` is replaced only after `fill` succeeded, and only if rtclab wrote it
    (`check_replaceable`); `inputs` are the run's input files, whose directories are never
    replaced. The result is readable as the umask allows (not mkdtemp's 0700).
    """
    out = Path(out_dir).absolute()
    inputs = [Path(p) for p in inputs]
    check_replaceable(out, str(out_dir), inputs)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        sweep_leftovers(out.parent)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
        (tmp / TMP_MARKER).write_text(json.dumps({"pid": os.getpid()}), encoding="utf-8")
    except OSError as e:
        raise OutputError(f"--out {out_dir}: cannot create the output directory: {e.strerror or e}") from e
    try:
        fill(tmp)
        (tmp / TMP_MARKER).unlink()
        files = _listing(tmp)
        marker = {"rtclab_version": _core.__version__, "kind": kind, "files": files}
        if source is not None:
            marker["source"] = source
        (tmp / MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o777 & ~_umask())
        # Checked again just before the swap: the directory may have changed while we ran.
        check_replaceable(out, str(out_dir), inputs)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        # Marked first, so that a run killed between the two renames leaves a directory the
        # next run recognises as its own leftover.
        (out / TMP_MARKER).write_text(json.dumps({"pid": os.getpid()}), encoding="utf-8")
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{os.getpid()}-", dir=out.parent))
        old.rmdir()
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)
    return out


def source_key(origin: str) -> str:
    """What identifies a run's scenario in its folder's marker: the scenario file's absolute
    path, or the built-in's name / `<text>` / `<dict>`."""
    p = Path(origin)
    return str(p.resolve()) if p.is_file() else origin


def default_out(scenario_arg: str | None, origin: str, base: str = "rtclab-out") -> Path:
    """`rtclab-out/<file stem>`, unless that folder holds the result of another scenario (two
    files both named `scenario.toml`, say): then the first of `<stem>-2`, `<stem>-3`, ... that
    is free or holds this scenario's own earlier result. A rerun of the same file replaces its
    own result, as before."""
    stem = Path(scenario_arg).stem if scenario_arg else "default"
    key = source_key(origin)
    n = 1
    while True:
        cand = Path(base) / (stem if n == 1 else f"{stem}-{n}")
        try:
            marker = json.loads((cand / MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            if not cand.exists():
                return cand
            marker = None
        if isinstance(marker, dict) and marker.get("source") == key:
            return cand
        n += 1


def write_table(result: RunResult, table: str, path: Path) -> None:
    """One result table as Parquet, written by the core from the engine's columns (no pandas,
    no pyarrow): ids and counts as int64, `flows` with each flow's name, `distributions` and
    `interruptions` with their metric's and kind's names."""
    from rtclab.runner import DISTRIBUTION_METRICS, INT_COLUMNS, INTERRUPTION_KINDS, floats

    cols = []
    for name, raw in result.tables[table].items():
        if table == "distributions" and name == "metric":
            cols.append((name, "str", [DISTRIBUTION_METRICS[int(x)] for x in floats(raw)]))
            continue
        if table == "interruptions" and name == "kind":
            cols.append((name, "str", [INTERRUPTION_KINDS[int(x)] for x in floats(raw)]))
            continue
        cols.append((name, "i64" if name in INT_COLUMNS.get(table, ()) else "f64", raw))
        if table == "flows" and name == "flow":
            names = result.flow_names()
            cols.append(("flow_name", "str", [names[int(x)] for x in floats(raw)]))
    _core.write_parquet(str(path), cols)


def write_result(
    result: RunResult, out_dir: str | os.PathLike, plots: bool = True, inputs: Iterable[str | os.PathLike] = ()
) -> Path:
    """summary.json, Parquet time series, scenario copy, PNG plots and report.html."""

    def fill(d: Path) -> None:
        with open(d / "summary.json", "w", encoding="utf-8") as f:
            json.dump(result.summary, f, indent=2)
            f.write("\n")
        for table in ("flows", "link", "fairness", "interruptions", "distributions"):
            write_table(result, table, d / f"{table}.parquet")
        if result.scenario_text:
            from rtclab._core import __version__
            from rtclab.rerun import INPUTS, rerun_copy

            copy = rerun_copy(result.scenario_text, result.scenario_base_dir or ".", result.summary["seed"], __version__)
            (d / copy.name).write_text(copy.text, encoding="utf-8")
            for src, name in copy.files:
                (d / INPUTS).mkdir(exist_ok=True)
                shutil.copyfile(src, d / INPUTS / name)
        if result.capture_path:
            shutil.move(result.capture_path, d / "bottleneck.pcap")
        if plots:
            from rtclab import plots as plotting
            from rtclab import reporting

            made = plotting.plot_report(result, d)
            reporting.write_report(result, made, d / "report.html")

    return write_atomically(out_dir, fill, inputs, source=source_key(result.scenario_origin))
