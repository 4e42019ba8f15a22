"""Running a scenario through the simulator core."""

from __future__ import annotations

import json
import os
import time
from array import array
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Optional

from rtclab import _core
from rtclab.progress import ProgressBar
from rtclab.scenarios import ScenarioLike, config_values, load_scenario
from rtclab.timings import stamp

if TYPE_CHECKING:  # pandas is imported only when a DataFrame is asked for
    import pandas as pd

    from rtclab.summary import Summary

# Events per GIL-free chunk: ~20-50 ms of work, so Ctrl-C and the progress bar stay responsive.
CHUNK_EVENTS = 200_000

#: Metric codes of the `distributions` table (rtclab_harness::media_meter::DISTRIBUTION_METRICS).
#: The stages of a displayed frame's latency breakdown (rtclab_core::FRAME_STAGES).
FRAME_STAGES = ["encode", "pacing", "retransmission", "queue", "propagation", "jitter_buffer", "decoder_queue", "decode"]
DISTRIBUTION_METRICS = ["queuing_delay", "one_way_delay", "frame_delay", "display_delay"] + [f"stage_{s}" for s in FRAME_STAGES]

#: Kind codes of the `interruptions` table (rtclab_harness::media_meter::INTERRUPTION_KINDS).
INTERRUPTION_KINDS = ["freeze", "stall"]

#: Integer columns per table (stored as float64 by the engines).
INT_COLUMNS = {"flows": ("flow",), "fairness": ("active_flows",), "interruptions": ("flow",), "distributions": ("flow",)}


def floats(raw: Any) -> array:
    """A column's little-endian float64 bytes as an array of floats (no numpy needed)."""
    a = array("d")
    a.frombytes(raw)
    return a


def _frame(columns: dict[str, Any], ints: tuple[str, ...] = ()) -> "pd.DataFrame":
    import numpy as np
    import pandas as pd

    df = pd.DataFrame({name: np.frombuffer(raw, dtype="<f8") for name, raw in columns.items()})
    for c in ints:
        if c in df and len(df):
            df[c] = df[c].astype(int)
    return df


class RunResult:
    """What a run produced. Unpacks as `(summary, timeseries)`.

    The tables are kept as the engine's column bytes (`tables`) and become pandas DataFrames
    when first asked for (`flows`, `link`, ...), so that a run that only writes its results
    never imports pandas.

    Attributes (and constructor arguments, in this order):

    - `summary`: the summary as a dict (`summary.json`);
    - `tables`: {table: {column: little-endian float64 bytes}} for flows, link, fairness,
      interruptions, distributions, as the engine produced them: `_core.Column` objects (the
      engine's vectors lent without a copy; bytes-like: numpy.frombuffer, memoryview, bytes())
      or, for a run read back from its files, bytes;
    - `scenario_origin`, `scenario_text`; `scenario_base_dir`: where the scenario's relative
      file names (traces) are resolved;
    - `capture_path`: emulator runs with a capture, the pcap of the bottleneck (moved into the
      output directory);
    - `flows_ahead`: `rtclab run`'s simulations, the `flows` table's Parquet file encoded on a
      second thread while the summary was built (`FlowsAhead`); used only if the table is
      still the run's.

    A plain class with a dataclass's constructor, equality and repr (not a dataclass:
    `dataclasses` imports `inspect`, a tenth of `rtclab run`'s start-up).
    """

    #: The fields equality compares and their order (`flows_ahead` is not compared).
    _FIELDS = ("summary", "tables", "scenario_origin", "scenario_text", "scenario_base_dir", "capture_path")
    __hash__ = None  # mutable, compared by value

    def __init__(self, summary: dict[str, Any], tables: dict[str, dict[str, Any]], scenario_origin: str = "",
                 scenario_text: str = "", scenario_base_dir: str = "", capture_path: Optional[str] = None,
                 flows_ahead: Optional["FlowsAhead"] = None):
        self.summary = summary
        self.tables = tables
        self.scenario_origin = scenario_origin
        self.scenario_text = scenario_text
        self.scenario_base_dir = scenario_base_dir
        self.capture_path = capture_path
        self.flows_ahead = flows_ahead

    def __repr__(self) -> str:
        shown = ("summary", "scenario_origin", "scenario_base_dir", "capture_path")
        return f"RunResult({', '.join(f'{k}={getattr(self, k)!r}' for k in shown)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    def flow_names(self) -> dict[int, str]:
        return {f["id"]: f["name"] for f in self.summary["flows"]}

    @property
    def typed(self) -> "Summary":
        """The summary with attribute access to the fields the schema names (`rtclab.Summary`)."""
        from rtclab.summary import Summary

        return Summary(self.summary)

    @cached_property
    def flows(self) -> "pd.DataFrame":
        """One row per (200 ms bin, active flow): throughput, goodput, delays, cwnd..."""
        df = _frame(self.tables["flows"], INT_COLUMNS["flows"])
        if len(df):
            df.insert(2, "flow_name", df["flow"].map(self.flow_names()))
        return df

    @cached_property
    def link(self) -> "pd.DataFrame":
        """One row per bin for the forward bottleneck: capacity, delivered, queue occupancy..."""
        return _frame(self.tables["link"])

    @cached_property
    def fairness(self) -> "pd.DataFrame":
        """One row per fairness window: Jain's index over the flows active for the whole window."""
        return _frame(self.tables["fairness"], INT_COLUMNS["fairness"])

    @cached_property
    def interruptions(self) -> "pd.DataFrame":
        """One row per freeze of a media flow's display (`kind` "freeze": no frame shown for
        longer than the freeze threshold) or stall of its frames (`kind` "stall": no frame
        completed for longer than the stall threshold): flow, kind, start_s, duration_s."""
        import pandas as pd

        df = _frame(self.tables["interruptions"], INT_COLUMNS["interruptions"])
        if len(df):
            df["kind"] = pd.Categorical.from_codes(df["kind"].astype(int), categories=INTERRUPTION_KINDS)
        return df

    @property
    def freezes(self) -> "pd.DataFrame":
        """The freezes among the interruptions."""
        df = self.interruptions
        return df[df["kind"] == "freeze"].reset_index(drop=True) if len(df) else df

    @cached_property
    def distributions(self) -> "pd.DataFrame":
        """Per flow and delay metric (queuing_delay, one_way_delay, frame_delay, display_delay),
        the delay in ms at percentiles 0, 2, ..., 100, 99 and 99.9 over the measurement window."""
        import pandas as pd

        df = _frame(self.tables["distributions"], INT_COLUMNS["distributions"])
        if len(df):
            df["metric"] = pd.Categorical.from_codes(df["metric"].astype(int), categories=DISTRIBUTION_METRICS)
        return df

    @property
    def timeseries(self) -> "pd.DataFrame":
        return self.flows

    def __iter__(self):
        yield self.summary
        yield self.flows


#: How this process was started, recorded in every summary (`command_line`); the CLI sets it to
#: its own command line, otherwise it is the Python process's.
COMMAND_LINE: Optional[str] = None


def _command_line() -> str:
    import shlex
    import sys

    if COMMAND_LINE is not None:
        return COMMAND_LINE
    return "python " + shlex.join(sys.argv) if sys.argv and sys.argv[0] else "python"


class MemoryLimitExceeded(MemoryError):
    """The run's memory grew past its bound (`max_memory`, RTCLAB_MAX_MEMORY, default 75 % of
    physical memory); it was stopped before the kernel's OOM killer would have, and nothing
    was written."""


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


_SIZE = {"": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
         "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


def parse_memory(text: str) -> int:
    """"2GiB", "512M", "1073741824" -> bytes (binary multiples; "GB" is read as GiB)."""
    import re

    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _SIZE or float(m.group(1)) <= 0:
        raise ValueError(f"invalid memory size {text!r}: expected a positive number with K, M, G or T (e.g. \"4GiB\")")
    return int(float(m.group(1)) * _SIZE[unit])


def memory_bound(max_memory: int | str | None = None) -> int:
    """The bound in bytes: the argument, else RTCLAB_MAX_MEMORY, else 75 % of physical memory."""
    if max_memory is None:
        max_memory = os.environ.get("RTCLAB_MAX_MEMORY") or int(0.75 * _physical_memory())
    return max_memory if isinstance(max_memory, int) else parse_memory(max_memory)


def _rss() -> int:
    """This process's resident memory in bytes (Linux /proc; 0 where unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _check_memory(bound: int) -> None:
    rss = _rss()
    if rss > bound:
        raise MemoryLimitExceeded(
            f"the run was stopped: its memory reached {rss / 2**30:.2f} GiB, past the bound of {bound / 2**30:.2f} GiB "
            f"(set by max_memory / RTCLAB_MAX_MEMORY, default 75 % of physical memory); shorten the run, use fewer "
            f"flows or a longer metrics.bin, or raise the bound"
        )


class ScenarioWarning(UserWarning):
    """A valid scenario whose results would mean little (`Scenario::warnings` in the core):
    a flow outside the measurement window, a round trip long against the time measured, a
    fairness window that never completes. The run goes on."""


def _warn(src, texts: list[str]) -> None:
    import warnings

    for t in texts:
        warnings.warn(ScenarioWarning(f"{src.display}: {t}"), stacklevel=3)


#: Seeds are unsigned 64-bit integers (the root of every random stream).
MAX_SEED = 2**64 - 1


def run(
    scenario: ScenarioLike = "default",
    seed: Optional[int] = None,
    progress: bool | None = None,
    on_progress: Optional[Callable[[float, float], None]] = None,
    engine: str = "sim",
    capture: Optional[str] = None,
    snaplen: int = 0,
    force: bool = False,
    max_memory: int | str | None = None,
    capture_at: str = "delivered",
    encode_ahead: bool = False,
) -> RunResult:
    """Runs a scenario (path, built-in name, TOML text or dict) in the simulator, or with
    `engine="emu"` through the real-network emulator (root, TUN and network namespaces).

    `seed` overrides the scenario's `seed` (default 1). In the simulator the same scenario and
    seed give bit-identical results. Long runs release the GIL; Ctrl-C raises
    KeyboardInterrupt and leaves nothing half-done (the emulator removes its namespaces).
    `capture` (emulator only): write a pcap of the bottleneck, both directions, to this path
    (`snaplen` bytes per packet, 0 = whole packets), the packets as the link delivered them
    (`capture_at="delivered"`) or as the hosts sent them (`"sent"`: before any loss or queue
    drop, a sender-side capture such as `rtclab classify` needs). A run whose estimated cost is beyond
    rtclab's limits (`validate(...)["cost"]`) raises `RunTooLarge` (a `ConfigError`) unless
    `force=True`. A run whose memory grows past `max_memory` (bytes or "4GiB"; default
    RTCLAB_MAX_MEMORY, else 75 % of physical memory) stops with `MemoryLimitExceeded`.
    `encode_ahead` (simulator; for a caller that writes the result's files next, as
    `rtclab run` does): a large `flows` table is encoded as Parquet on a second thread while
    the summary is built (`RunResult.flows_ahead`).
    """
    bound = memory_bound(max_memory)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
        raise ValueError(f"seed must be a whole number in 0..={MAX_SEED}, got {seed!r}")
    if capture_at not in ("delivered", "sent"):
        raise ValueError(f"capture_at must be 'delivered' or 'sent', got {capture_at!r}")
    if engine == "emu":
        return _run_emu(scenario, seed, progress, on_progress, capture, snaplen, force, bound,
                        capture_at == "sent")
    if capture is not None:
        raise ValueError("capture needs engine='emu' (the simulator has no packets to capture)")
    if engine != "sim":
        raise ValueError(f"unknown engine {engine!r}: accepted 'sim', 'emu'")
    src = load_scenario(scenario)
    with config_values(src):
        sim = _core.Simulation(src.text, src.format, src.base_dir, seed, force)
    _warn(src, sim.warnings())
    now, end = sim.progress()
    bar = ProgressBar("simulating", end, enabled=progress)
    stamp("loop_start")
    t0 = time.perf_counter()
    try:
        while not sim.step(CHUNK_EVENTS):
            _check_memory(bound)
            now, end = sim.progress()
            bar.update(now)
            if on_progress is not None:
                on_progress(now, end)
        _check_memory(bound)
        bar.update(end)
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    stamp("loop_end")
    ahead = FlowsAhead.start(sim) if encode_ahead else None
    result = _result(sim.finish(), wall, src)
    if ahead is not None:
        result.tables["flows"] = ahead.flows  # the same vectors, as one set of objects
        result.flows_ahead = ahead
    stamp("finished")
    return result


#: A `flows` table with at least this many rows is encoded beside other work: 1,000 flows for a
#: minute (300,000 rows) take 0.04-0.06 s of two cores to encode.
PARALLEL_FLOWS_ROWS = 20_000


def table_rows(columns: dict) -> int:
    """Rows of a result table ({column: a `_core.Column` or float64 bytes})."""
    return len(next(iter(columns.values()), b"")) // 8


class FlowsAhead:
    """A finished simulation's `flows` table, encoded as `flows.parquet` on a second thread
    (the core encodes without the GIL) while this one builds and reads the summary: after a
    1,000-flow run the encoding is the largest piece of work, and the summary's does not need
    it. `take` hands the file's bytes to the writer if the result still holds the very table
    and flow names that were encoded (else the writer encodes the table itself)."""

    def __init__(self, flows: dict, names: dict[int, str]):
        import threading

        self.flows = flows
        self._columns = list(flows.items())
        self._names = names
        self._encoded: Optional[bytes] = None
        self._thread = threading.Thread(target=self._encode, name="rtclab-flows-parquet", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, sim) -> Optional["FlowsAhead"]:
        """Starts encoding `sim`'s table if it is large enough to be worth a thread."""
        flows = sim.flow_table()
        if table_rows(flows) < PARALLEL_FLOWS_ROWS:
            return None
        return cls(flows, dict(sim.flow_names()))

    def _encode(self) -> None:
        from rtclab.output import table_columns

        try:
            # All cores but the one building the summary: on two, the summary's thread would
            # otherwise share its core with an encoder, and the whole gained nothing.
            threads = max(1, (os.cpu_count() or 1) - 1)
            self._encoded = _core.encode_parquet(table_columns("flows", self.flows, lambda: self._names), threads)
        except Exception:  # the writer encodes the table itself and reports what is wrong
            self._encoded = None

    def __reduce__(self):
        # A pickled or copied result carries no thread: its writer encodes the table itself.
        return (_no_flows_ahead, ())

    def take(self, result: "RunResult") -> Optional[bytes]:
        """The encoded file, once ready, if `result`'s table and names are those encoded."""
        self._thread.join()
        flows = result.tables.get("flows")
        if flows is not self.flows or len(flows) != len(self._columns):
            return None
        if any(flows.get(k) is not v for k, v in self._columns):
            return None
        if result.flow_names() != self._names:
            return None
        return self._encoded


def _run_emu(scenario, seed, progress, on_progress, capture, snaplen, force=False, bound=None,
             capture_sent=False) -> RunResult:
    src = load_scenario(scenario)
    with config_values(src):
        emu = _core.Emulation(src.text, src.format, src.base_dir, seed, force=force,
                              capture=str(capture) if capture is not None else None, snaplen=snaplen,
                              capture_sent=capture_sent)
    _warn(src, emu.warnings())
    t0 = time.perf_counter()
    emu.start()
    _, end = emu.progress()
    bar = ProgressBar("emulating", end, enabled=progress)
    try:
        while not emu.is_done():
            time.sleep(0.1)
            if bound is not None:
                _check_memory(bound)
            now, end = emu.progress()
            bar.update(now)
            if on_progress is not None:
                on_progress(now, end)
        bar.update(end)
    except BaseException:
        # Ctrl-C or an error: stop the threads, remove the namespaces, then re-raise.
        emu.stop()
        try:
            emu.finish()
        except Exception:
            pass
        raise
    finally:
        bar.close()
    out = emu.finish()
    result = _result(out, time.perf_counter() - t0, src)
    result.capture_path = str(capture) if capture is not None else None
    return result


def _result(finished, wall: float, src) -> RunResult:
    summary_text, tables = finished
    summary = json.loads(summary_text)
    summary["wall_time_s"] = wall
    summary["scenario_source"] = src.origin
    summary["command_line"] = _command_line()
    summary["scenario_text"] = src.text
    return RunResult(summary, tables, src.origin, src.text, scenario_base_dir=src.base_dir)


def _no_flows_ahead() -> None:
    return None
