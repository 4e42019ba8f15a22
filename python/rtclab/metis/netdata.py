"""`rtclab metis dataset`: a data set of simulator runs for learned network models
(RouteNet-style per-path delay predictors), made by rtclab itself.

Each sample is one simulation: a topology (every undirected edge two directed links of one
capacity, drop-tail queues), a routing (one path per ordered node pair, drawn from the k
shortest paths), and a traffic matrix (one Poisson source per pair, `kind = "poisson"`). The
label is each path's measured mean one-way delay, its median, 95th percentile and loss ratio,
taken from the run's summary. This is how RouteNet's own data sets were made (Rusek et al., IEEE
JSAC 2020, §V: OMNeT++ runs over NSFNet, GEANT2 and synthetic graphs, shortest-path variants,
random traffic matrices at varied intensity), here with rtclab's packet-level simulator — which
also lets a change the model suggests be run for real (`rtclab metis explain`).

Traffic matrices: each pair's rate is U(0.1, 1) times a scale chosen so the busiest link runs at
a load ρ drawn from U(`load`) of its capacity (RouteNet varies its "traffic intensity" the same
way), so queues are busy but the network is not overloaded.

The store is a folder: `dataset.json` (what was asked) and `samples.jsonl` (one JSON object per
line, written as each run finishes, so an interrupted generation keeps what it made and
`--resume` completes it). Samples are numbered and each one's seed is derived from the data
set's seed and its number: the same command gives the same data set on any machine.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from rtclab.metis.topologies import Topology, routing, topology

#: Capacities a link may get, Mbit/s (RouteNet's `bw` data sets vary link capacity too).
CAPACITIES_MBPS = (5.0, 10.0, 20.0)
PACKET_BYTES = 1000
QUEUE_PACKETS = 64
#: Each hop's propagation delay: small beside queueing and transmission (RouteNet's delays are
#: queueing + transmission), but rtclab wants a path to have one.
HOP_DELAY_MS = 0.1

DATASET_FILE = "dataset.json"
SAMPLES_FILE = "samples.jsonl"


class DatasetError(ValueError):
    """A data set that cannot be made or read as asked."""


@dataclass
class DatasetSpec:
    """What a data set is made of (stored in `dataset.json`)."""

    topologies: list[str] = field(default_factory=lambda: ["nsfnet"])
    samples: int = 100
    k: int = 3
    load: tuple[float, float] = (0.3, 0.9)
    duration_s: float = 10.0
    seed: int = 1

    def check(self) -> None:
        if self.samples < 1:
            raise DatasetError(f"samples must be 1 or more, got {self.samples}")
        if not 1 <= self.k <= 20:
            raise DatasetError(f"k must be in 1..=20, got {self.k}")
        check_load_and_duration(self.load, self.duration_s)
        if not self.topologies:
            raise DatasetError("name at least one topology")
        for t in self.topologies:
            topology(t)  # raises TopologyError (a ValueError) naming the accepted forms


def check_load_and_duration(load: tuple[float, float], duration_s: float) -> None:
    """The busiest link's load range and the simulated seconds a network state may be run with
    (the data set's samples and `rtclab metis explain`'s checks alike)."""
    lo, hi = load
    if not 0.01 <= lo <= hi <= 1.5:
        raise DatasetError(f"load must be one number or LO,HI with 0.01 <= LO <= HI <= 1.5, got {lo},{hi}")
    if not 0.5 <= duration_s <= 3600:
        raise DatasetError(f"duration must be in 0.5..=3600 s, got {duration_s}")


def link_loads(paths: list[list[int]], rates: list[float], n_links: int) -> list[float]:
    """Offered traffic per directed link: the sum of the rates of the paths crossing it."""
    loads = [0.0] * n_links
    for r, p in zip(rates, paths):
        for link in p:
            loads[link] += r
    return loads


def sample_plan(spec: DatasetSpec, i: int) -> dict[str, Any]:
    """Sample `i`'s inputs: topology, routing, capacities, traffic, seed (no simulation)."""
    rng = random.Random(f"{spec.seed}/{i}")
    topo = topology(spec.topologies[i % len(spec.topologies)])
    paths = routing(topo, spec.k, rng.randrange(2**31))
    return traffic_plan(topo, paths, rng, spec.load, index=i)


def traffic_plan(topo: Topology, paths: list[list[int]], rng: random.Random, load: tuple[float, float],
                 index: int = 0) -> dict[str, Any]:
    """Capacities and a traffic matrix for a topology and routing, drawn from `rng`."""
    caps_edge = [rng.choice(CAPACITIES_MBPS) for _ in topo.edges]
    caps = [c for c in caps_edge for _ in (0, 1)]  # both directions of an edge
    raw = [rng.uniform(0.1, 1.0) for _ in paths]
    loads = link_loads(paths, raw, len(topo.links))
    rho = rng.uniform(*load)
    scale = rho / max(ld / c for ld, c in zip(loads, caps) if ld > 0)
    return {
        "index": index,
        "topology": topo.name,
        "nodes": topo.nodes,
        "edges": [list(e) for e in topo.edges],
        "capacity_mbps": caps,
        "paths": paths,
        "rate_mbps": [r * scale for r in raw],
        "max_load": rho,
        "seed": rng.randrange(2**32),
    }


def scenario(plan: dict[str, Any], duration_s: float) -> dict[str, Any]:
    """The rtclab scenario of a sample: a link per directed link, a Poisson flow per path."""
    topo = Topology(plan["topology"], plan["nodes"], [tuple(e) for e in plan["edges"]])
    links = [
        {"name": topo.link_name(i), "capacity": f"{c}Mbps", "delay": f"{HOP_DELAY_MS}ms",
         "queue": {"kind": "droptail", "limit": f"{QUEUE_PACKETS}pkt"}}
        for i, c in enumerate(plan["capacity_mbps"])
    ]
    flows = [
        {"kind": "poisson", "name": f"p{s}-{d}", "path": [topo.link_name(x) for x in p],
         "packet_size": f"{PACKET_BYTES}B", "params": {"rate_mbps": r}}
        for (s, d), p, r in zip(topo.pairs(), plan["paths"], plan["rate_mbps"])
    ]
    return {"description": f"metis dataset sample {plan['index']} ({topo.name})",
            "duration": f"{duration_s}s", "seed": plan["seed"], "links": links, "flows": flows}


def measure(plan: dict[str, Any], duration_s: float) -> dict[str, Any]:
    """Runs a sample in the simulator; returns the plan with each path's measured delay."""
    from rtclab.runner import run

    summary, _ = run(scenario(plan, duration_s), progress=False)
    out = dict(plan)
    flows = summary["flows"]
    # A path whose every packet was dropped has no delay: its loss says so, its delay is None.
    out["delay_ms"] = [f["one_way_delay_ms"]["mean"] if f["packets_received"] else None for f in flows]
    out["delay_p50_ms"] = [f["one_way_delay_ms"]["p50"] if f["packets_received"] else None for f in flows]
    out["delay_p95_ms"] = [f["one_way_delay_ms"]["p95"] if f["packets_received"] else None for f in flows]
    out["loss"] = [f["loss_ratio"] for f in flows]
    out["packets"] = sum(f["packets_received"] for f in flows)
    return out


def _measure_one(args: tuple[DatasetSpec, int]) -> dict[str, Any]:
    spec, i = args
    return measure(sample_plan(spec, i), spec.duration_s)


def _spec_json(spec: DatasetSpec) -> dict[str, Any]:
    d = asdict(spec)
    d["load"] = list(spec.load)
    return {"format": "rtclab-metis-dataset/1", **d}


def read_samples(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """The finished samples of a data set, by index. A last line cut short by an interrupted
    write is ignored (it is made again by `--resume`)."""
    folder = Path(folder)
    path = folder / SAMPLES_FILE
    if not (folder / DATASET_FILE).is_file():
        raise DatasetError(f"{folder}: not an rtclab metis data set (no {DATASET_FILE}); make one with `rtclab metis dataset`")
    out: dict[int, dict] = {}
    if path.exists():
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines, 1):
            try:
                s = json.loads(line)
            except json.JSONDecodeError:
                if n == len(lines):
                    break
                raise DatasetError(f"{path}:{n}: not a JSON sample (the file was edited?)") from None
            out[s["index"]] = s
    return [out[i] for i in sorted(out)]


def read_spec(folder: str | os.PathLike) -> DatasetSpec:
    folder = Path(folder)
    try:
        d = json.loads((folder / DATASET_FILE).read_text())
    except FileNotFoundError:
        raise DatasetError(f"{folder}: not an rtclab metis data set (no {DATASET_FILE})") from None
    if d.get("format") != "rtclab-metis-dataset/1":
        raise DatasetError(f"{folder / DATASET_FILE}: not an rtclab metis data set description")
    return DatasetSpec(d["topologies"], d["samples"], d["k"], tuple(d["load"]), d["duration_s"], d["seed"])


def generate(spec: DatasetSpec, out: str | os.PathLike, workers: Optional[int] = None, resume: bool = False,
             progress: bool | None = None) -> Path:
    """Makes (or, with `resume`, completes) the data set in `out`. Refuses a folder that holds
    anything else, and a different data set, so nothing of the user's is overwritten."""
    from rtclab.progress import ProgressBar

    spec.check()
    out = Path(out)
    desc = _spec_json(spec)
    if out.exists() and any(out.iterdir()):
        old = out / DATASET_FILE
        if not old.is_file():
            raise DatasetError(f"{out} exists and is not an rtclab metis data set: choose another --out")
        if not resume:
            raise DatasetError(f"{out} already holds a data set: pass --resume to complete it, or choose another --out")
        have = json.loads(old.read_text())
        if {**have, "samples": 0} != {**desc, "samples": 0}:
            raise DatasetError(f"{out} holds a different data set ({old}); --resume continues only the same one "
                               f"(it may ask for more samples)")
        if spec.samples < have["samples"]:
            raise DatasetError(f"{out} was asked for {have['samples']} samples; --resume may ask for more, not fewer")
    out.mkdir(parents=True, exist_ok=True)
    if not (out / DATASET_FILE).exists() or json.loads((out / DATASET_FILE).read_text()) != desc:
        tmp = out / (DATASET_FILE + ".tmp")
        tmp.write_text(json.dumps(desc, indent=2) + "\n")
        tmp.replace(out / DATASET_FILE)
    done = {s["index"] for s in read_samples(out)}
    _trim_partial_line(out / SAMPLES_FILE)
    todo = [i for i in range(spec.samples) if i not in done]
    bar = ProgressBar("dataset", spec.samples, unit="samples", enabled=progress)
    bar.update(len(done))
    with open(out / SAMPLES_FILE, "a") as f:
        for k, s in enumerate(_map(_measure_one, [(spec, i) for i in todo], workers), 1):
            f.write(json.dumps(s, separators=(",", ":")) + "\n")
            f.flush()
            bar.update(len(done) + k)
    bar.close()
    return out


def _trim_partial_line(path: Path) -> None:
    """Drops a last line an interrupted write left without its newline."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def _map(fn, items: list, workers: Optional[int]) -> Iterable:
    n = workers or os.cpu_count() or 1
    if n <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(min(n, len(items))) as pool:
        yield from pool.imap_unordered(fn, items)
