"""Hairpin's offline table from Python: `rtclab hairpin table` and `rtclab hairpin cell`.

The solver is ours (`crates/rtclab-transport/src/hairpin/`, docs/algorithms/hairpin.md); the
tables the authors published (hkust-spark/hairpin `model/`, shipped in `rtclab/data/hairpin/`) are only
compared against, cell by cell.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rtclab import _core, datasets

LOSS_STEPS, FRAME_SIZES, LAYERS, PACKETS = 51, 11, 15, 55
CELLS = LOSS_STEPS * FRAME_SIZES * LAYERS * PACKETS

#: spec afr-hairpin-confucius.md §3.11: (λ, loss) → k for n = 1, 5, 25 at L = 1..4, F = 25.
GOLDEN = {
    (1e-4, 0.01): [[2, 3, 5], [0, 0, 0], [0, 0, 0], [0, 0, 0]],
    (1e-4, 0.05): [[4, 5, 9], [0, 0, 1], [0, 0, 0], [0, 0, 0]],
    (1e-4, 0.10): [[5, 10, 14], [0, 1, 4], [0, 0, 0], [0, 0, 0]],
    (1e-4, 0.20): [[5, 10, 22], [1, 3, 9], [0, 0, 0], [0, 0, 0]],
    (1e-4, 0.30): [[5, 15, 50], [4, 5, 15], [0, 2, 0], [0, 0, 0]],
    (1e-7, 0.10): [[5, 10, 19], [2, 2, 5], [0, 0, 0], [0, 0, 0]],
    (1e-7, 0.30): [[5, 25, 50], [5, 10, 16], [3, 4, 0], [0, 1, 0]],
}


def published_name(lam: float) -> str:
    return f"beta-array-rtx1-cap0-coeff{lam:.0e}.bin"


def published_dir() -> Path:
    """Where the published tables are: the copy shipped with rtclab, or $RTCLAB_HAIRPIN_TABLES
    (`rtclab.datasets`; raises DataMissing)."""
    return datasets.locate("hairpin")


def solve(lam: float, threads: int = 0) -> tuple[bytes, float]:
    """(table, wall seconds to solve it)."""
    t0 = time.perf_counter()
    table = _core.hairpin_table(lam, threads)
    return table, time.perf_counter() - t0


def coordinates(i: int) -> dict:
    per_loss, per_fs = FRAME_SIZES * LAYERS * PACKETS, LAYERS * PACKETS
    return {"loss": round((i // per_loss) * 0.01, 2), "frame": 5 * ((i % per_loss) // per_fs + 1),
            "layers": (i % per_fs) // PACKETS + 1, "packets": i % PACKETS + 1}


def compare(ours: bytes, theirs: bytes) -> dict:
    """Cells that differ, and the first few of them."""
    if len(theirs) != CELLS:
        raise ValueError(f"a Hairpin table has {CELLS} one-byte cells, this one has {len(theirs)} bytes")
    diff = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    first = [{**coordinates(i), "ours": ours[i], "theirs": theirs[i]} for i in diff[:10]]
    return {"cells": CELLS, "matching": CELLS - len(diff), "mismatches": len(diff), "first": first}


def golden_check(table: bytes, lam: float) -> tuple[int, int]:
    """(cells of §3.11 matching, cells checked) for the rows of weight `lam`."""
    ok = n = 0
    for (l, loss), rows in GOLDEN.items():
        if l != lam:
            continue
        for layer, row in enumerate(rows, start=1):
            for packets, k in zip((1, 5, 25), row):
                n += 1
                ok += _core.hairpin_cell(table, loss, 25, layer, packets) == k
    return ok, n


def lookup_time(table: bytes, lookups: int = 20_000) -> float:
    """Mean seconds per strict cell lookup from Python (binding overhead included)."""
    t0 = time.perf_counter()
    for i in range(lookups):
        _core.hairpin_cell(table, (i % 51) * 0.01, 25, 1 + i % 15, 1 + i % 55)
    return (time.perf_counter() - t0) / lookups


def table_report(lam: float, compare_with: str | None) -> tuple[bytes, dict]:
    table, secs = solve(lam)
    info: dict = {"lambda": lam, "cells": CELLS, "solve_seconds": secs}
    ok, n = golden_check(table, lam)
    if n:
        info["golden_vectors"] = {"matching": ok, "checked": n}
    path = Path(compare_with) if compare_with else None
    if path is None and (shipped := published_dir() / published_name(lam)).is_file():
        path = shipped
    if path is not None:
        info["published"] = {"file": str(path), **compare(table, path.read_bytes())}
    return table, info


def write_table(out: str, lam: float, table: bytes, info: dict) -> Path:
    from rtclab.output import write_atomically

    def fill(tmp: Path) -> None:
        (tmp / f"hairpin-table-coeff{lam:.0e}.bin").write_bytes(table)
        (tmp / "table.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")

    return write_atomically(out, fill, kind="hairpin table")
