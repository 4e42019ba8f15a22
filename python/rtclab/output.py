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

The marker also records each file's size and modification time: a file changed since rtclab
wrote it (a user's edit to `summary.json`, a note added to `report.html`) counts as the user's,
so the folder is not replaced and the message names the file. One process at a time writes to an
output folder: `lock_out` takes an advisory lock (`.NAME.lock` beside the folder, flock) for the
whole command, and a second command aimed at the same folder is refused at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from rtclab import _core, runner
from rtclab.runner import RunResult
from rtclab.timings import stamp

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
    """Removes temporary directories and lock files of killed rtclab runs in `parent` (only
    rtclab's own), from one listing of the folder (a sweep's `runs/` is listed at every run)."""
    removed = []
    try:
        hidden = [p for p in parent.iterdir() if p.name.startswith(".")]
    except OSError:
        return removed
    _stale_locks([p for p in hidden if p.name.endswith(".lock")])
    for p in hidden:
        if ".tmp-" not in p.name and ".old-" not in p.name:
            continue
        pid = _leftover_pid(p)
        if pid is None:
            continue  # not ours (or not readable): leave it
        if pid == os.getpid() or _pid_alive(pid):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def _stale_locks(names: list[Path]) -> None:
    """Removes those of `names` that are lock files of rtclab processes that were killed (their
    lock is free again)."""
    for p in names:
        try:
            with open(p, "r+") as f:
                if not f.read(64).startswith(LOCK_TAG):
                    continue  # not ours
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its process is alive and writing
                os.unlink(p)
        except OSError:
            continue


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
    edited = [name for name, stamp in (marker.get("stamps") or {}).items() if _stamp(out / name) != stamp]
    if edited:
        shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if len(edited) > 5 else "")
        raise OutputError(
            f"--out {out_arg}: {shown} changed since rtclab wrote {'them' if len(edited) > 1 else 'it'} (your edits?); "
            f"rtclab will not replace a changed file: {hint}"
        )


def _stamp(p: Path) -> list[int] | None:
    """A written file's [size, mtime in ns]: what tells a later edit apart (None: gone or a directory)."""
    try:
        st = p.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns] if p.is_file() else None


#: How rtclab's lock files begin (so that only ours are ever cleaned up).
LOCK_TAG = "rtclab lock, pid"
#: Locks this process holds (path -> open file), kept until it exits or `unlock_out`.
_LOCKS: dict[str, object] = {}


def lock_out(out: str | os.PathLike, out_arg: str | None = None) -> None:
    """Takes the advisory lock of output folder `out` for this process (idempotent), or raises
    OutputError if another process holds it: two commands writing one folder would silently
    replace one result by the other. The lock file `.NAME.lock` sits beside the folder (the
    folder itself may not exist yet, and is swapped as a whole) and is removed on release."""
    out = Path(out).absolute()
    path = out.parent / f".{out.name}.lock"
    key = str(path)
    if key in _LOCKS:
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"--out {out_arg or out}: cannot create {out.parent}: {e.strerror or e}") from e
    while True:
        try:
            f = open(path, "a+")
        except OSError as e:
            raise OutputError(f"--out {out_arg or out}: cannot write beside it ({path}: {e.strerror or e})") from e
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            f.close()
            raise OutputError(f"--out {out_arg or out}: another rtclab command is writing it right now ({holder}); "
                              "wait for it to finish or choose another --out") from None
        # The file may have been removed by its previous holder between our open and our lock:
        # then the lock is on a name nobody else sees; take the new one instead.
        try:
            same = os.stat(path).st_ino == os.fstat(f.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        f.close()
    f.seek(0)
    found = f.read(256)
    if found and not found.startswith(LOCK_TAG):
        # A file of that name that rtclab did not write: never truncate or remove it.
        fcntl.flock(f, fcntl.LOCK_UN)
        f.close()
        raise OutputError(f"--out {out_arg or out}: {path} exists and was not written by rtclab; rtclab keeps its "
                          "lock there: move that file, or choose another --out")
    f.seek(0)
    f.truncate()
    f.write(f"{LOCK_TAG} {os.getpid()}\n")
    f.flush()
    _LOCKS[key] = f
    import atexit

    atexit.register(unlock_out, out)


@contextlib.contextmanager
def locked(out: str | os.PathLike, out_arg: str | None = None):
    """`lock_out` for a block: taken if this process does not hold it yet, and then released at
    the block's end (a lock the command took before is left to the command)."""
    path = Path(out).absolute()
    held = str(path.parent / f".{path.name}.lock") in _LOCKS
    lock_out(path, out_arg)
    try:
        yield
    finally:
        if not held:
            unlock_out(path)


def unlock_out(out: str | os.PathLike) -> None:
    """Releases `lock_out`'s lock of `out` (and removes its file) if this process holds it."""
    out = Path(out).absolute()
    path = out.parent / f".{out.name}.lock"
    f = _LOCKS.pop(str(path), None)
    if f is None:
        return
    try:
        os.unlink(path)  # still locked by us: nobody else can be using this name's file
    except OSError:
        pass
    f.close()


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
    with locked(out, str(out_dir)):  # the API's writers too: never two swaps of one folder at once
        return _write_locked(out, out_dir, fill, inputs, kind, source)


def _write_locked(out: Path, out_dir, fill, inputs, kind, source) -> Path:
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
        marker = {"rtclab_version": _core.__version__, "kind": kind, "files": files,
                  "stamps": {x: _stamp(tmp / x) for x in files if not x.endswith("/")}}
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
    _core.write_parquet(str(path), table_columns(table, result.tables[table], result.flow_names))


def table_columns(table: str, columns: dict, flow_names: Callable[[], dict[int, str]]) -> list:
    """`_core.write_parquet`'s columns for result table `table` ({column: float64 bytes});
    `flow_names()`: {flow id: name}, asked for only by the `flows` table."""
    from rtclab.runner import DISTRIBUTION_METRICS, INT_COLUMNS, INTERRUPTION_KINDS

    cols = []
    for name, raw in columns.items():
        if table == "distributions" and name == "metric":
            cols.append((name, "str_by_index", (list(DISTRIBUTION_METRICS), raw)))
            continue
        if table == "interruptions" and name == "kind":
            cols.append((name, "str_by_index", (list(INTERRUPTION_KINDS), raw)))
            continue
        cols.append((name, "i64" if name in INT_COLUMNS.get(table, ()) else "f64", raw))
        if table == "flows" and name == "flow":
            by_id = flow_names()
            names = [by_id.get(i, "") for i in range(max(by_id, default=-1) + 1)]
            cols.append(("flow_name", "str_by_index", (names, raw)))
    return cols


#: The tables a run writes, one Parquet file each.
RUN_TABLES = ("flows", "link", "fairness", "interruptions", "distributions")


def summary_text(summary: dict) -> str:
    """`json.dumps(summary, indent=2)`, byte for byte: Python's C encoder writes the compact
    text and the core lays it out (Python's indenting encoder is pure Python and took 0.07 s
    of a 1,000-flow run's output work). A summary with a non-finite float (which the strict
    re-layout does not expect) goes through Python's own encoder."""
    try:
        compact = json.dumps(summary, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return json.dumps(summary, indent=2)
    return _core.indent_json(compact)


def write_run_files(result: RunResult, d: Path) -> None:
    """The one writer of a run's `summary.json` and tables, into the (temporary) folder `d`:
    `rtclab run --out`, `rtclab.save` and each run of a sweep or suite write through it.

    A large `flows` table (1,000 flows for a minute: 300,000 rows, ~0.05 s to encode) was
    encoded while the summary was built if the run was asked to (`rtclab run`:
    `RunResult.flows_ahead`); otherwise it is written on a second thread beside the summary's
    text (~0.03 s of Python for its 1.3 MB), not after it (the core releases the GIL while it
    encodes). Both give the same bytes."""
    ahead = result.flows_ahead  # its `take` refuses a table that is not the one encoded
    background = None
    failed: list[BaseException] = []
    if ahead is None and runner.table_rows(result.tables.get("flows") or {}) >= runner.PARALLEL_FLOWS_ROWS:
        import threading

        def flows_table() -> None:
            try:
                write_table(result, "flows", d / "flows.parquet")
            except BaseException as e:  # re-raised on this thread below
                failed.append(e)

        background = threading.Thread(target=flows_table, name="rtclab-flows-parquet")
        background.start()
    try:
        with open(d / "summary.json", "w", encoding="utf-8") as f:
            f.write(summary_text(result.summary))
            f.write("\n")
        for table in RUN_TABLES:
            encoded = ahead.take(result) if ahead is not None and table == "flows" else None
            if encoded is not None:
                (d / "flows.parquet").write_bytes(encoded)
            elif background is None or table != "flows":
                write_table(result, table, d / f"{table}.parquet")
    finally:
        if background is not None:
            background.join()
    if failed:
        raise failed[0]


def write_result(
    result: RunResult, out_dir: str | os.PathLike, plots: bool = True, inputs: Iterable[str | os.PathLike] = ()
) -> Path:
    """summary.json, Parquet time series, scenario copy, PNG plots and report.html."""

    def fill(d: Path) -> None:
        write_run_files(result, d)
        stamp("files")
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
            stamp("plots")

    return write_atomically(out_dir, fill, inputs, source=source_key(result.scenario_origin))
