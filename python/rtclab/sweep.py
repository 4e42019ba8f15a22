"""`rtclab sweep SWEEP.toml`: a base scenario run over axes of any scenario field and seeds, on
every core, into a resumable result store.

A sweep file::

    name = "capacity-vs-cc"
    scenario = "base.toml"        # a file (relative to this one) or a built-in; or [scenario] inline
    seeds = 3                     # seeds 1..3, or a list: [1, 7, 9]
    mode = "grid"                 # grid (every combination) | random | lhs (Latin hypercube)
    samples = 20                  # random / lhs: how many points
    sample_seed = 1               # random / lhs: the draw's seed
    harm = true                   # also run each flow entry alone; harm per flow in the catalog

    [[axis]]
    field = "link.capacity"       # any scenario field: "flows[0].cc", "link.queue.limit", ...
    values = ["1Mbps", "2Mbps"]   # grid: the values; random / lhs: drawn from them

    [[axis]]
    field = "flows[0].rtt"
    range = [10, 100]             # random / lhs: a number drawn in [lo, hi] ...
    unit = "ms"                   # ... written with this unit ("37.2ms")

Every run (point × seed) has a key derived from its whole scenario, its seed and the rtclab
version: identical runs are run once, and a run whose key is in the store is never run again.
The store (`--out DIR`)::

    DIR/sweep.toml                 the sweep as given
    DIR/runs/<key>/                one run: summary.json, flows/link/... .parquet, point.json
    DIR/catalog.parquet            one row per run: key, seed, the axes' values, run metrics
    DIR/catalog_flows.parquet      one row per run and flow: throughput, share, delay, QoE
    DIR/report.html, DIR/plots/    each run metric against each axis (mean, 95 % CI over seeds),
                                   throughput vs delay per controller (Pantheon's style)

Each run's folder is written atomically by the worker that ran it, so a sweep killed at any
point loses no finished run; `--resume` runs only the missing ones. The catalogs are rebuilt
from the run folders at the end (and whenever they are missing or unreadable), so they can be
queried with DuckDB (`duckdb.sql("select * from 'DIR/catalog.parquet'")`) or pandas. Memory
is bounded by the runs in flight: no result is kept by the parent.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import random
import re
import time
import tomllib
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from rtclab import _core
from rtclab.scenarios import ScenarioSource, load_scenario

STORE_MARKER = ".rtclab-sweep.json"
MODES = ("grid", "random", "lhs")


class SweepError(ValueError):
    """A sweep file or store that cannot be used (the message names the problem)."""


@dataclass
class Axis:
    field: str
    values: Optional[list] = None
    range: Optional[tuple[float, float]] = None
    unit: str = ""


@dataclass
class Sweep:
    name: str
    base: ScenarioSource
    axes: list[Axis]
    seeds: list[int]
    mode: str = "grid"
    samples: int = 0
    sample_seed: int = 1
    text: str = ""
    #: Also run every flow entry of every point alone, and report each flow's harm.
    harm: bool = False

    def point_count(self) -> int:
        """How many points `points()` gives, without drawing them."""
        if not self.axes:
            return 1
        if self.mode == "grid":
            return math.prod(len(a.values) for a in self.axes)
        return self.samples

    def run_count(self) -> int:
        """Runs the sweep asks for (points × seeds; `harm` adds each flow entry alone on top)."""
        return self.point_count() * len(self.seeds)

    def points(self) -> list[dict[str, Any]]:
        """The axis values of every point, in a fixed order."""
        if not self.axes:
            return [{}]
        if self.mode == "grid":
            combos = itertools.product(*[a.values for a in self.axes])
            return [{a.field: v for a, v in zip(self.axes, combo)} for combo in combos]
        rng = random.Random(self.sample_seed)
        n = self.samples
        columns = []
        for a in self.axes:
            if self.mode == "lhs":
                # One draw in each of n equal strata, the strata shuffled per axis.
                u = [(k + rng.random()) / n for k in range(n)]
                rng.shuffle(u)
            else:
                u = [rng.random() for _ in range(n)]
            columns.append([_value(a, x) for x in u])
        return [{a.field: col[k] for a, col in zip(self.axes, columns)} for k in range(n)]


def _value(a: Axis, u: float):
    """The axis value at quantile u in [0, 1)."""
    if a.values is not None:
        return a.values[min(int(u * len(a.values)), len(a.values) - 1)]
    lo, hi = a.range
    x = round(lo + u * (hi - lo), 6)
    return f"{x:g}{a.unit}" if a.unit else x


_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def _steps(path: str) -> list:
    steps, pos = [], 0
    for m in _STEP.finditer(path):
        if m.start() != pos and path[pos:m.start()] != ".":
            raise SweepError(f"axis field {path!r}: not a scenario field path (e.g. \"link.capacity\", \"flows[0].cc\")")
        steps.append(m.group(1) if m.group(1) else int(m.group(2)))
        pos = m.end()
    if not steps or pos != len(path):
        raise SweepError(f"axis field {path!r}: not a scenario field path (e.g. \"link.capacity\", \"flows[0].cc\")")
    return steps


def set_field(scenario: dict, path: str, value) -> None:
    """Sets `path` (e.g. `flows[0].cc`) in a scenario dict, creating tables on the way."""
    steps = _steps(path)
    node: Any = scenario
    for k, step in enumerate(steps[:-1]):
        nxt = steps[k + 1]
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise SweepError(f"axis field {path!r}: the scenario has no {'.'.join(map(str, steps[:k + 1]))}")
            node = node[step]
        else:
            if not isinstance(node, dict):
                raise SweepError(f"axis field {path!r}: {step} is not inside a table")
            if step not in node:
                if isinstance(nxt, int):
                    raise SweepError(f"axis field {path!r}: the scenario has no list {step}")
                node[step] = {}
            node = node[step]
    last = steps[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise SweepError(f"axis field {path!r}: index {last} is beyond the list")
        node[last] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise SweepError(f"axis field {path!r}: {last} is not inside a table")


def load_sweep(sweep: str | os.PathLike) -> Sweep:
    """Reads a sweep file (or TOML text)."""
    p = Path(sweep) if "\n" not in str(sweep) else None
    if p is not None:
        from rtclab.inputs import InputFileError, read_input_text

        try:
            text, base_dir = read_input_text(p, "sweep"), p.resolve().parent
        except InputFileError as e:
            raise SweepError(str(e)) from None
    else:
        text, base_dir = str(sweep), Path.cwd()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"sweep: invalid TOML: {e}") from None
    known = {"name", "scenario", "seeds", "mode", "samples", "sample_seed", "axis", "harm"}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise SweepError(f"sweep: unknown key {unknown[0]!r}; accepted: {', '.join(sorted(known))}")
    scn = doc.get("scenario")
    if scn is None:
        raise SweepError("sweep: scenario is required (a file, a built-in name or a [scenario] table)")
    if isinstance(scn, dict):
        base = ScenarioSource(json.dumps(scn), "json", str(base_dir), "<sweep scenario>")
    elif isinstance(scn, str):
        from rtclab.scenarios import ScenarioNotFound

        f = base_dir / scn
        try:
            base = load_scenario(f if f.is_file() else scn)
        except ScenarioNotFound as e:
            raise SweepError(f"sweep: scenario = {scn!r}: {e}") from None
    else:
        raise SweepError("sweep: scenario must be a file name, a built-in name or a table")
    seeds = doc.get("seeds", 1)
    if isinstance(seeds, bool) or not (isinstance(seeds, int) and seeds >= 1 or
                                       isinstance(seeds, list) and seeds and all(isinstance(s, int) and s >= 0 for s in seeds)):
        raise SweepError(f"sweep: seeds must be a count >= 1 or a non-empty list of seeds, got {seeds!r}")
    seeds = range(1, seeds + 1) if isinstance(seeds, int) else list(dict.fromkeys(seeds))
    mode = doc.get("mode", "grid")
    if mode not in MODES:
        raise SweepError(f"sweep: mode {mode!r} is unknown; accepted: {', '.join(MODES)}")
    samples = doc.get("samples", 0)
    if mode != "grid" and (not isinstance(samples, int) or samples < 1):
        raise SweepError(f"sweep: mode {mode} needs samples >= 1, got {samples!r}")
    axes = []
    for k, a in enumerate(doc.get("axis", [])):
        at = f"axis[{k}]"
        if not isinstance(a, dict) or "field" not in a:
            raise SweepError(f"sweep: {at} needs a field")
        extra = sorted(set(a) - {"field", "values", "range", "unit"})
        if extra:
            raise SweepError(f"sweep: {at}: unknown key {extra[0]!r}; accepted: field, values, range, unit")
        _steps(a["field"])
        values, rng = a.get("values"), a.get("range")
        if values is not None and (not isinstance(values, list) or not values):
            raise SweepError(f"sweep: {at} ({a['field']}): values must be a non-empty list")
        if rng is not None:
            if mode == "grid":
                raise SweepError(f"sweep: {at} ({a['field']}): a range needs mode = \"random\" or \"lhs\"; a grid takes values")
            if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, (int, float)) for x in rng) and rng[0] <= rng[1]):
                raise SweepError(f"sweep: {at} ({a['field']}): range must be [low, high] numbers, got {rng!r}")
        if (values is None) == (rng is None):
            raise SweepError(f"sweep: {at} ({a['field']}): give either values or range")
        axes.append(Axis(a["field"], values, tuple(rng) if rng else None, str(a.get("unit", ""))))
    fields = [a.field for a in axes]
    if len(set(fields)) != len(fields):
        raise SweepError("sweep: an axis field appears twice")
    harm = doc.get("harm", False)
    if not isinstance(harm, bool):
        raise SweepError(f"sweep: harm must be true or false, got {harm!r}")
    return Sweep(str(doc.get("name", Path(str(sweep)).stem if p else "sweep")), base, axes, seeds, mode,
                 samples, int(doc.get("sample_seed", 1)), text, harm)


def _base_dict(src: ScenarioSource) -> dict:
    return json.loads(src.text) if src.format == "json" else tomllib.loads(src.text)


@dataclass
class RunSpec:
    key: str
    point: int
    seed: int
    values: dict[str, Any]
    scenario: dict = field(repr=False)
    #: Harm sweeps: for a run with competing flows, the key of each flow entry's solo run;
    #: for a solo run, the entry of the run it is the baseline of.
    solo: dict[int, str] = field(default_factory=dict)
    solo_of_entry: int = -1


def plan(sweep: Sweep) -> list[RunSpec]:
    """Every run of the sweep, checked (a bad axis value fails here, before anything runs),
    without duplicates."""
    base = _base_dict(sweep.base)
    runs, seen = [], set()
    for k, values in enumerate(sweep.points()):
        scn = json.loads(json.dumps(base))
        for f, v in values.items():
            set_field(scn, f, v)
        try:
            _core.validate(json.dumps(scn), "json", sweep.base.base_dir)
        except _core.ConfigError as e:
            shown = ", ".join(f"{f} = {v!r}" for f, v in values.items())
            raise SweepError(f"sweep point {k} ({shown}): {e}") from None
        solos = _solo_scenarios(scn, sweep, k, values) if sweep.harm else {}
        for seed in sweep.seeds:
            key = run_key(scn, seed)
            solo_keys = {e: run_key(s, seed) for e, s in solos.items()}
            for e, s in solos.items():
                if solo_keys[e] not in seen:
                    seen.add(solo_keys[e])
                    runs.append(RunSpec(solo_keys[e], k, seed, values, s, solo_of_entry=e))
            if key in seen:
                continue
            seen.add(key)
            runs.append(RunSpec(key, k, seed, values, scn, solo=solo_keys))
    return runs


def _solo_scenarios(scn: dict, sweep: Sweep, k: int, values: dict) -> dict[int, dict]:
    """Each flow entry of a point with competing flows, alone: the baselines of harm (Ware et
    al.: what a flow gets without its competitors)."""
    flows = scn.get("flows", [])
    if len(flows) < 2:
        return {}
    out = {}
    for e in range(len(flows)):
        solo = json.loads(json.dumps(scn))
        solo["flows"] = [solo["flows"][e]]
        try:
            _core.validate(json.dumps(solo), "json", sweep.base.base_dir)
        except _core.ConfigError as err:
            raise SweepError(f"sweep point {k}: flow entry {e} cannot run alone for harm: {err}") from None
        out[e] = solo
    return out


def run_key(scenario: dict, seed: int) -> str:
    """The store key of a run: its whole scenario, seed and the rtclab version."""
    doc = json.dumps({"scenario": scenario, "seed": seed, "rtclab": _core.__version__}, sort_keys=True)
    return hashlib.sha256(doc.encode()).hexdigest()[:20]


def _complete(run_dir: Path) -> bool:
    return (run_dir / "summary.json").is_file() and (run_dir / "point.json").is_file()


# --- workers -------------------------------------------------------------------------------

_BASE_DIR = "."


def _init_worker(base_dir: str) -> None:
    import ctypes
    import signal

    global _BASE_DIR
    _BASE_DIR = base_dir
    # A worker dies with the sweep (SIGKILL included) instead of running on as an orphan.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the pool
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _fill_run(d: Path, spec: RunSpec, base_dir: str) -> None:
    """Runs one point and writes its files into the folder `d`."""
    from rtclab.output import write_run_files
    from rtclab.runner import run

    src = ScenarioSource(json.dumps(spec.scenario), "json", base_dir, f"sweep run {spec.key}")
    result = run(src, seed=spec.seed, progress=False)
    write_run_files(result, d)
    point = {"key": spec.key, "point": spec.point, "seed": spec.seed, "values": spec.values,
             "solo": {str(e): k for e, k in spec.solo.items()}, "solo_of_entry": spec.solo_of_entry,
             "entries": [int(f.get("count", 1)) for f in spec.scenario.get("flows", [])]}
    (d / "point.json").write_text(json.dumps(point, indent=1) + "\n", encoding="utf-8")


def _run_one(store: str, spec: RunSpec, base_dir: Optional[str] = None) -> str:
    """In a worker: runs one point and writes its folder atomically; returns its key."""
    from rtclab.output import write_atomically

    base = _BASE_DIR if base_dir is None else base_dir
    write_atomically(Path(store) / "runs" / spec.key, lambda d: _fill_run(d, spec, base), kind="sweep-run")
    return spec.key


def _run_remote(specs: list[RunSpec], base_dir: str, store: Optional[str] = None,
                driver_node: Optional[str] = None) -> list[tuple[str, Optional[dict[str, bytes]]]]:
    """In a Ray worker: runs a batch of points. On the driver's own node it writes each run
    into the store itself, as a local worker does (files None); on any other node it returns
    the files, which the driver writes (so the store needs no shared file system)."""
    import tempfile

    import ray

    out: list[tuple[str, Optional[dict[str, bytes]]]] = []
    here = store is not None and ray.get_runtime_context().get_node_id() == driver_node
    for spec in specs:
        if here:
            out.append((_run_one(store, spec, base_dir), None))
            continue
        with tempfile.TemporaryDirectory(prefix="rtclab-ray-run-") as tmp:
            _fill_run(Path(tmp), spec, base_dir)
            out.append((spec.key, {p.name: p.read_bytes() for p in Path(tmp).iterdir()}))
    return out


#: Most runs per Ray task: short runs are batched so that Ray's per-task cost is shared.
RAY_BATCH = 8
#: Ray workers on the driver's own node write their runs into the store themselves (as the
#: local pool's workers do) instead of sending the files to the driver; False: the driver
#: writes every run (what it always does for runs from other nodes).
RAY_NODE_LOCAL_WRITES = True


def _check_ray_address(address: str) -> None:
    """A clear error, before Ray's own long retries, when the head cannot be reached."""
    import socket

    if address in ("auto", "local") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=3).close()
    except (OSError, ValueError) as e:
        raise SweepError(f"--address {address}: cannot reach a Ray head there ({e}); start one with "
                         f"`ray start --head` or give its address (host:port)") from None


def _execute_ray(out: Path, todo: list[RunSpec], workers: int, address: Optional[str], base_dir: str, on_done) -> None:
    """Runs `todo` as Ray tasks (one CPU each), at most two per CPU in flight; each finished
    run's files are written into the store atomically as they come back."""
    try:
        import ray
    except ImportError:
        raise SweepError("--backend ray needs Ray: pip install 'ray>=2.40'") from None
    from rtclab.output import write_atomically

    started = not ray.is_initialized()
    if started:
        kwargs = dict(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        if not address:
            kwargs["num_cpus"] = workers
        try:
            ray.init(**kwargs)
        except (ConnectionError, RuntimeError, ValueError) as e:
            last = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            raise SweepError(f"--address {address}: cannot connect to the Ray cluster ({last}); check the address, "
                             f"and that this machine runs the cluster's Ray version with its auth token") from None
    try:
        task = ray.remote(num_cpus=1)(_run_remote)
        # Through Ray Client (ray://) the driver is not on a cluster node: every run comes back.
        client = bool(address) and address.startswith("ray://")
        store = str(out.resolve()) if RAY_NODE_LOCAL_WRITES and not client else None
        node = ray.get_runtime_context().get_node_id()
        capacity = max(1, int(ray.cluster_resources().get("CPU", workers)))
        # Batches small enough that every CPU gets several (balance), large enough to share
        # the per-task cost.
        size = max(1, min(RAY_BATCH, len(todo) // (8 * capacity)))
        batches = iter([todo[k:k + size] for k in range(0, len(todo), size)])
        pending = [task.remote(b, base_dir, store, node) for b in itertools.islice(batches, 2 * capacity)]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for key, files in ray.get(ready[0]):
                if files is not None:  # from another node: the driver writes it

                    def fill(d: Path, files=files) -> None:
                        for name, data in files.items():
                            (d / name).write_bytes(data)

                    write_atomically(out / "runs" / key, fill, kind="sweep-run")
                elif not (out / "runs" / key).is_dir():
                    raise SweepError(f"run {key}: a Ray worker on this node wrote it, but it is not in "
                                     f"{out / 'runs'} (does the worker see another file system?)")
                on_done()
            nxt = next(batches, None)
            if nxt is not None:
                pending.append(task.remote(nxt, base_dir, store, node))
    finally:
        if started:
            ray.shutdown()


# --- the store -----------------------------------------------------------------------------


def _open_store(out: Path, sweep: Sweep, resume: bool) -> None:
    from rtclab.output import MARKER, OutputError

    marker = out / STORE_MARKER
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out}: exists and is not a directory; choose another --out")
    if out.exists() and any(out.iterdir()):
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise OutputError(f"--out {out}: exists and is not an rtclab sweep store; choose another --out") from None
        if not resume:
            raise OutputError(f"--out {out}: holds a sweep already; add --resume to run what is missing, or choose another --out")
        if info.get("sweep_hash") != _sweep_hash(sweep):
            raise OutputError(f"--out {out}: holds a different sweep (its sweep.toml differs); choose another --out")
        return
    if (out / MARKER).exists():
        raise OutputError(f"--out {out}: is a run's result folder, not a sweep store; choose another --out")
    try:
        (out / "runs").mkdir(parents=True, exist_ok=True)
        (out / "sweep.toml").write_text(sweep.text, encoding="utf-8")
        marker.write_text(json.dumps({"rtclab_version": _core.__version__, "sweep_hash": _sweep_hash(sweep),
                                      "name": sweep.name}, indent=1) + "\n", encoding="utf-8")
    except OSError as e:
        raise OutputError(f"--out {out}: cannot create the sweep store there: {e.strerror or e}") from None


def _sweep_hash(sweep: Sweep) -> str:
    return hashlib.sha256(sweep.text.encode()).hexdigest()[:20]


def build_catalog(out: str | os.PathLike) -> tuple[Path, Path]:
    """(Re)writes DIR/catalog.parquet and DIR/catalog_flows.parquet from the run folders (one
    summary at a time, so memory does not grow with what the runs wrote), through the core's
    Parquet writer (no pandas)."""
    out = Path(out)
    runs, flows = [], []
    solo_cache: dict[str, Optional[dict]] = {}
    for d in sorted((out / "runs").iterdir()) if (out / "runs").is_dir() else []:
        if d.name.startswith(".") or not _complete(d):
            continue
        point = json.loads((d / "point.json").read_text(encoding="utf-8"))
        s = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        row = {"key": point["key"], "point": point["point"], "seed": point["seed"],
               "solo_of_entry": point.get("solo_of_entry", -1)}
        row.update({f"axis:{k}": str(v) for k, v in point["values"].items()})
        link, fair = s["link"], s["fairness"]
        row.update({
            "utilization": link["utilization"], "loss_ratio": link["loss_ratio"],
            "queuing_delay_ms_p50": link["queuing_delay_ms"]["p50"], "queuing_delay_ms_p95": link["queuing_delay_ms"]["p95"],
            "jain": fair["jain"], "jain_windows_mean": fair["jain_windows_mean"], "wall_time_s": s["wall_time_s"],
        })
        for scale in (s.get("rfc8868") or {}).get("fairness_ratios", []):
            row[f"within_guideline_{scale['window_s']}s"] = scale["within_guideline"]
            row[f"ratio_median_{scale['window_s']}s"] = scale["ratio_median"]
        runs.append(row)
        entry_of = [e for e, n in enumerate(point.get("entries", [])) for _ in range(n)]
        baselines = {int(e): _solo_baseline(out, k, solo_cache) for e, k in (point.get("solo") or {}).items()}
        for f in s["flows"]:
            m = f.get("media") or {}
            e = entry_of[f["id"]] if f["id"] < len(entry_of) else None
            flows.append({
                "key": point["key"], "flow": f["id"], "name": f["name"], "kind": f["kind"], "cc": f["cc"],
                "throughput_mbps": f["throughput_mbps"], "goodput_mbps": f["goodput_mbps"], "share": f["share"],
                "loss_ratio": f["loss_ratio"], "queuing_delay_ms_p95": f["queuing_delay_ms"]["p95"],
                "one_way_delay_ms_p50": f["one_way_delay_ms"]["p50"],
                "frame_delay_ms_p50": (m.get("frame_delay_ms") or {}).get("p50"),
                "frame_delay_ms_p95": (m.get("frame_delay_ms") or {}).get("p95"),
                "frame_rate": m.get("frame_rate"), "freezes": m.get("freezes"),
                "convergence_s": (f.get("rfc8868") or {}).get("convergence_s"),
                "oscillations": (f.get("rfc8868") or {}).get("oscillations"),
                "throughput_cv": (f.get("rfc8868") or {}).get("throughput_cv"),
                "entry": -1 if e is None else e,
                **_harm(f, baselines.get(e)),
            })
    paths = (out / "catalog.parquet", out / "catalog_flows.parquet")
    for rows, path in ((runs, paths[0]), (flows, paths[1])):
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        _core.write_parquet(str(tmp), _columns(rows))
        os.replace(tmp, path)
    return paths


#: Harm's metrics: (catalog column, how to read it from a flow summary, more is better?).
HARM_METRICS = [
    ("throughput", lambda f: f["throughput_mbps"], True),
    ("queuing_delay", lambda f: f["queuing_delay_ms"]["p95"], False),
    ("loss", lambda f: f["loss_ratio"], False),
    ("frame_delay", lambda f: ((f.get("media") or {}).get("frame_delay_ms") or {}).get("p95"), False),
]


def _solo_baseline(out: Path, key: str, cache: dict) -> Optional[dict]:
    """The mean of each harm metric over the flows of a solo run (None while it is missing)."""
    if key not in cache:
        try:
            s = json.loads((out / "runs" / key / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # not run yet (a killed sweep): harm stays empty until it is
        base = {}
        for name, get, _ in HARM_METRICS:
            xs = [get(f) for f in s["flows"] if get(f) is not None]
            base[name] = sum(xs) / len(xs) if xs else None
        cache[key] = base
    return cache[key]


def _harm(flow: dict, base: Optional[dict]) -> dict:
    """Ware et al.'s harm of each metric for a flow against its solo baseline: (solo − x) / solo
    for a more-is-better metric, (x − solo) / x for a less-is-better one; 0 is no harm, 1 the
    most; negative means the competition helped. None where undefined."""
    out = {}
    for name, get, more_is_better in HARM_METRICS:
        x = get(flow)
        solo = None if base is None else base[name]
        h = None
        if x is not None and solo is not None:
            if more_is_better and solo > 0:
                h = (solo - x) / solo
            elif not more_is_better and x > 0:
                h = (x - solo) / x
        out[f"harm_{name}"] = h
    return out


def _columns(rows: list[dict]) -> list[tuple[str, str, Any]]:
    """Rows as typed columns for `_core.write_parquet`: whole numbers as int64, numbers (None
    as NaN) as float64, anything else as text (None as "")."""
    from array import array

    names = list(dict.fromkeys(k for r in rows for k in r))
    if not names:
        return [("key", "str", [])]  # no run finished yet: an empty catalog
    cols = []
    for n in names:
        vals = [r.get(n) for r in rows]
        present = [v for v in vals if v is not None]
        if present and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            cols.append((n, "i64", array("d", vals).tobytes()))
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            cols.append((n, "f64", array("d", [float("nan") if v is None else float(v) for v in vals]).tobytes()))
        else:
            cols.append((n, "str", ["" if v is None else str(v) for v in vals]))
    return cols


def catalog(out: str | os.PathLike, flows: bool = False):
    """The store's catalog as a DataFrame, rebuilt from the run folders if it is missing or
    unreadable."""
    import pandas as pd

    path = Path(out) / ("catalog_flows.parquet" if flows else "catalog.parquet")
    try:
        return pd.read_parquet(path)
    except Exception:  # missing or corrupt: the run folders are the truth
        build_catalog(out)
        return pd.read_parquet(path)


@dataclass
class SweepOutcome:
    out: Path
    runs: int
    already: int
    ran: int
    wall_s: float


def run_sweep(sweep: Sweep | str | os.PathLike, out: str | os.PathLike, workers: Optional[int] = None,
              resume: bool = False, progress: bool | None = None, report: bool = True,
              backend: str = "local", address: Optional[str] = None, force: bool = False) -> SweepOutcome:
    """Runs every missing run of the sweep into the store `out` on `workers` processes
    (default: every core), or with `backend="ray"` as Ray tasks (`address`: a cluster's head,
    host:port; none: a Ray instance on this machine with `workers` CPUs); rebuilds the
    catalog and (unless `report=False`) the report. A sweep of more than MAX_RUNS runs is
    refused (SweepError with the estimate) unless `force=True`."""
    if backend not in ("local", "ray"):
        raise SweepError(f"--backend {backend}: unknown; accepted: local, ray")
    if address and backend != "ray":
        raise SweepError("--address applies to --backend ray only")
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    check_size(sweep.run_count(), f"sweep {sweep.name}", _size_detail(sweep), sweep.base, workers, force)
    runs = plan(sweep)
    if backend == "ray":  # before the store exists: a bad address leaves nothing behind
        try:
            import ray  # noqa: F401
        except ImportError:
            raise SweepError("--backend ray needs Ray: pip install 'ray>=2.40'") from None
        if address:
            _check_ray_address(address)
    out = Path(out)
    _open_store(out, sweep, resume)
    t0 = time.perf_counter()
    already, ran = execute(runs, out, workers, progress, f"sweep {sweep.name}", sweep.base.base_dir, backend, address)
    build_catalog(out)
    if report:
        write_report(out)
    return SweepOutcome(out, len(runs), already, ran, time.perf_counter() - t0)


#: Runs beyond which a sweep or a suite needs `--force` (as a run beyond its cost limits does):
#: a typo such as `samples = 1000000` or `--seeds 1000000` should not start at once.
MAX_RUNS = 10_000


def _size_detail(sweep: Sweep) -> str:
    pts = (" × ".join(str(len(a.values)) for a in sweep.axes) + " grid points" if sweep.mode == "grid" and sweep.axes
           else f"{sweep.point_count():,} {sweep.mode} samples" if sweep.axes else "1 point")
    return f"{pts} × {len(sweep.seeds):,} seed(s)"


def check_size(runs: int, what: str, detail: str, base: Any, workers: Optional[int], force: bool,
               narrow: str = "the axes, samples or seeds") -> None:
    """Refuses more than MAX_RUNS runs unless `force`, printing what they would cost: the base
    scenario's cost bound (`rtclab validate`) times the runs, spread over the workers."""
    if runs <= MAX_RUNS or force:
        return
    est = ""
    try:
        from rtclab.scenarios import validate

        one = validate(base)["cost"]["seconds"] if base is not None else None
    except Exception:  # the estimate is a courtesy; the refusal stands without it
        one = None
    if one:
        cores = workers or os.cpu_count() or 1
        secs = one * runs / cores
        est = f"; at most about {_human(secs)} on {cores} core(s) (the base scenario's cost bound × runs)"
    raise SweepError(f"{what}: {runs:,} runs ({detail}), above the limit of {MAX_RUNS:,}{est}; add --force to run "
                     f"it anyway, or narrow {narrow}")


def _human(secs: float) -> str:
    for unit, n in (("days", 86400), ("h", 3600), ("min", 60)):
        if secs >= 2 * n:
            return f"{secs / n:,.0f} {unit}"
    return f"{secs:.0f} s"


def _cost_estimate(spec: RunSpec) -> float:
    """A run's relative cost for ordering only: simulated seconds × flows (stable for ties)."""
    import re

    sc = spec.scenario
    m = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|min|m|h)?\s*", str(sc.get("duration", "60s")))
    scale = {"ms": 1e-3, "s": 1.0, None: 1.0, "min": 60.0, "m": 60.0, "h": 3600.0}
    secs = float(m.group(1)) * scale[m.group(2)] if m else 60.0
    flows = sum(int(f.get("count", 1)) for f in sc.get("flows", []) if isinstance(f, dict)) or 1
    return secs * flows


class Interrupted(KeyboardInterrupt):
    """A sweep or suite stopped by Ctrl-C or SIGTERM: what it kept in its store and how to go on."""

    def __init__(self, kept: int, total: int, out: Path):
        from rtclab import runner

        self.kept, self.total, self.out = kept, total, out
        cmd = runner.COMMAND_LINE or "the same command"
        if runner.COMMAND_LINE and "--resume" not in runner.COMMAND_LINE.split():
            cmd += " --resume"
        self.message = (f"{kept:,} of {total:,} runs are kept in {out} (every finished run is stored); "
                        f"`{cmd}` runs the rest")
        super().__init__(self.message)


def execute(runs: list[RunSpec], out: Path, workers: Optional[int], progress: bool | None, label: str, base_dir: str,
            backend: str = "local", address: Optional[str] = None) -> tuple[int, int]:
    """Runs those of `runs` whose folder is not yet in the store `out` (its `runs/` exists);
    returns (already there, run now). Ctrl-C or SIGTERM raises `Interrupted` with the count kept."""
    try:
        return _execute(runs, out, workers, progress, label, base_dir, backend, address)
    except Interrupted:
        raise
    except KeyboardInterrupt:
        import signal

        # The count takes a moment: a second Ctrl-C or SIGTERM must not cut it with a traceback.
        prev = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            kept = sum(_complete(out / "runs" / r.key) for r in runs)
        finally:
            signal.signal(signal.SIGINT, prev[0])
            signal.signal(signal.SIGTERM, prev[1])
        raise Interrupted(kept, len(runs), out) from None


def _execute(runs: list[RunSpec], out: Path, workers: Optional[int], progress: bool | None, label: str, base_dir: str,
             backend: str = "local", address: Optional[str] = None) -> tuple[int, int]:
    from rtclab.output import sweep_leftovers
    from rtclab.progress import ProgressBar

    (out / "runs").mkdir(parents=True, exist_ok=True)
    sweep_leftovers(out / "runs")
    todo = [r for r in runs if not _complete(out / "runs" / r.key)]
    # Longest first (LPT): a long run started last would leave the other workers idle at the end.
    todo.sort(key=_cost_estimate, reverse=True)
    already = len(runs) - len(todo)
    workers = max(1, min(workers or os.cpu_count() or 1, len(todo) or 1))
    bar = ProgressBar(label, len(runs), unit="runs", enabled=progress, delay=0.5)
    done = already
    bar.update(done)
    if todo and backend == "ray":

        def step() -> None:
            nonlocal done
            done += 1
            bar.update(done)

        try:
            _execute_ray(out, todo, workers, address, base_dir, step)
        finally:
            bar.close()
    elif todo:
        import multiprocessing as mp

        pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"), initializer=_init_worker,
                                   initargs=(base_dir,))
        try:
            pending = set()
            it = iter(todo)
            # At most two runs queued per worker: memory stays bounded by the runs in flight.
            for spec in itertools.islice(it, 2 * workers):
                pending.add(pool.submit(_run_one, str(out), spec))
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    f.result()  # a failed run stops the sweep with its error
                    done += 1
                    bar.update(done)
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(pool.submit(_run_one, str(out), nxt))
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                # Stopped: the workers stop too, now (a run cut short leaves only its temporary
                # folder, removed by the next sweep), so that what the store keeps is final when
                # it is counted.
                procs = list((getattr(pool, "_processes", None) or {}).values())
                for proc in procs:
                    proc.kill()
                for proc in procs:
                    proc.join(timeout=10)
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            bar.close()
        pool.shutdown()
    else:
        bar.close()
    return already, len(todo)


def load_run(run_dir: str | os.PathLike):
    """A stored run as a `RunResult` (summary and tables; DataFrames as after `rtclab.run`)."""
    import pyarrow.parquet as pq

    from rtclab.runner import DISTRIBUTION_METRICS, INTERRUPTION_KINDS, RunResult

    d = Path(run_dir)
    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    codes = {("distributions", "metric"): DISTRIBUTION_METRICS, ("interruptions", "kind"): INTERRUPTION_KINDS}
    tables = {}
    for table in ("flows", "link", "fairness", "interruptions", "distributions"):
        t = pq.read_table(d / f"{table}.parquet")
        cols = {}
        for name in t.column_names:
            if (table, name) in codes:
                names = codes[(table, name)]
                values = [float(names.index(v)) for v in t.column(name).to_pylist()]
            elif name == "flow_name":
                continue  # derived from the summary when a DataFrame is made
            else:
                values = t.column(name).to_numpy().astype("<f8")
            import numpy as np

            cols[name] = np.asarray(values, dtype="<f8").tobytes()
        tables[table] = cols
    return RunResult(summary, tables, scenario_origin=summary.get("scenario_source", ""),
                     scenario_text=summary.get("scenario_text", ""))


# --- the aggregated report -----------------------------------------------------------------

#: Run metrics plotted against each axis: (catalog column, label).
RUN_METRICS = [("utilization", "bottleneck utilization"), ("jain", "Jain index (run)"),
               ("within_guideline_5s", "5 s windows within 0.333-3"),
               ("queuing_delay_ms_p95", "queuing delay p95 (ms)"), ("loss_ratio", "loss ratio")]
#: Metrics that are shares: their confidence intervals are clipped to [0, 1].
BOUNDED = {"utilization", "jain", "within_guideline_5s", "loss_ratio"}
#: Most curves per axis plot (one per combination of the other axes); beyond, all pooled.
MAX_CURVES = 8


def _ci95(xs) -> tuple[float, float]:
    """Mean and the half-width of its 95 % confidence interval (Student's t over seeds)."""
    import math

    import numpy as np

    xs = np.asarray([x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))], dtype=float)
    if len(xs) == 0:
        return float("nan"), float("nan")
    if len(xs) == 1:
        return float(xs[0]), 0.0
    from statistics import NormalDist

    # t quantiles for small samples (df 1..30), else the normal's.
    t = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         15: 2.131, 20: 2.086, 30: 2.042}
    df = len(xs) - 1
    q = t.get(df) or (t[max(k for k in t if k <= df)] if df < 30 else NormalDist().inv_cdf(0.975))
    return float(xs.mean()), float(q * xs.std(ddof=1) / math.sqrt(len(xs)))


def _axis_value_key(v: str):
    """Sort axis values numerically where they start with a number ("2Mbps" < "10Mbps")."""
    m = re.match(r"\s*(-?[0-9.]+)", v)
    return (0, float(m.group(1)), v) if m else (1, 0.0, v)


def write_report(out: str | os.PathLike) -> Path:
    """DIR/report.html: each run metric against each axis (mean and 95 % CI over seeds, a curve
    per combination of the other axes), and a throughput-vs-delay scatter per controller in
    Pantheon's style."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtclab.reporting import write

    out = Path(out)
    runs, flows = catalog(out), catalog(out, flows=True)
    axes = [c for c in runs.columns if c.startswith("axis:")]
    images = []
    pics = out / "plots"
    pics.mkdir(exist_ok=True)
    for a in axes:
        others = [o for o in axes if o != a]
        groups = list(runs.groupby(others, sort=True)) if others else [((), runs)]
        pooled = len(groups) > MAX_CURVES
        if pooled:
            groups = [(("all other axes pooled",), runs)]
        fig, axs = plt.subplots(1, len(RUN_METRICS), figsize=(4 * len(RUN_METRICS), 3.4), squeeze=False,
                                layout="constrained")
        xs_all = sorted(runs[a].unique(), key=_axis_value_key)
        for (label, g), color in zip(groups, plt.get_cmap("tab10").colors):
            label = label if isinstance(label, tuple) else (label,)
            name = ", ".join(f"{o[5:]}={v}" for o, v in zip(others, label)) if others and not pooled else label[0] if label else "runs"
            for ax, (col, ylabel) in zip(axs[0], RUN_METRICS):
                if col not in g:
                    continue
                stats = [_ci95(g[g[a] == x][col].tolist()) for x in xs_all]
                ms = [s[0] for s in stats]
                lo, hi = [s[1] for s in stats], [s[1] for s in stats]
                if col in BOUNDED:  # an interval of a share stays within [0, 1]
                    lo = [max(0.0, min(h, m)) for m, h in zip(ms, lo)]
                    hi = [max(0.0, min(h, 1 - m)) for m, h in zip(ms, hi)]
                ax.errorbar(range(len(xs_all)), ms, yerr=[lo, hi], color=color, marker="o", ms=4, capsize=3, lw=1.2,
                            label=name)
                ax.set_ylabel(ylabel)
        for ax in axs[0]:
            ax.set_xticks(range(len(xs_all)), xs_all, rotation=30, fontsize=8)
            ax.set_xlabel(a[5:])
            ax.grid(alpha=0.3)
        axs[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
        fig.suptitle(f"run metrics vs {a[5:]} (mean and 95 % CI over seeds)")
        path = pics / f"axis-{len(images)}.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        plt.close(fig)
        images.append((f"metrics vs {a[5:]}", path))
    if len(flows):
        fig, ax = plt.subplots(figsize=(8, 5))
        for (cc, g), color in zip(flows.groupby("cc", sort=True), plt.get_cmap("tab10").colors):
            ax.scatter(g["queuing_delay_ms_p95"], g["throughput_mbps"], s=14, alpha=0.5, color=color, label=cc)
            mx, my = g["queuing_delay_ms_p95"].mean(), g["throughput_mbps"].mean()
            ax.scatter([mx], [my], s=120, marker="*", color=color, edgecolor="black", zorder=3)
        ax.invert_xaxis()  # Pantheon's convention: better is up and to the right
        ax.set_xlabel("queuing delay p95 (ms; lower is better, axis reversed)")
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_title("throughput vs delay per controller (every flow of every run; star = mean)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
        path = pics / "throughput-delay.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        plt.close(fig)
        images.append(("throughput vs delay per controller", path))
    page = out / "report.html"
    tmp = out / f".report.html.tmp-{os.getpid()}"
    write(
        "sweep.html",
        tmp,
        name=json.loads((out / STORE_MARKER).read_text(encoding="utf-8")).get("name", out.name),
        runs=len(runs), axes=[a[5:] for a in axes], seeds=sorted(runs["seed"].unique().tolist()) if len(runs) else [],
        images=[(t, os.fspath(p)) for t, p in images], sweep_text=(out / "sweep.toml").read_text(encoding="utf-8"),
        version=_core.__version__)
    os.replace(tmp, page)
    return page
