"""Keep a document's reproduction tables equal to a `repro.json`.

The algorithm docs (docs/algorithms/*.md) quote `rtclab repro PAPER` rows as Markdown tables
`| experiment | variant | metric | ours | paper | verdict |`. When a change moves a figure, the
quoted table goes stale unless someone copies the new value in; this tool does the copying, and
with `--check` says which cells differ (exit 1) without writing.

    python -m rtclab.repro.doctable docs/algorithms/copa.md rtclab-out/repro-copa/repro.json --check
    python -m rtclab.repro.doctable docs/algorithms/copa.md rtclab-out/repro-copa/repro.json

A table row is matched to a repro row by its first three cells (experiment, variant, metric).
The `ours` cell keeps the number of decimals it had (so a hand-chosen precision survives) and
its bold marks; the verdict cell takes the repro's verdict. Rows the repro does not have, and
every other line, are left exactly as they were. The document is replaced in one rename, so an
interrupted run leaves the old file whole.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path


def _format_like(old: str, value: float) -> str:
    """`value` written with the decimals of `old` (a cell such as "0.713", "**450**", "1.5e-3")."""
    core = old.strip()
    bold = core.startswith("**") and core.endswith("**") and len(core) > 4
    if bold:
        core = core[2:-2]
    if "e" in core.lower():
        mant = core.lower().split("e")[0]
        decimals = len(mant.split(".")[1]) if "." in mant else 0
        text = f"{value:.{decimals}e}"
    else:
        decimals = len(core.split(".")[1]) if "." in core else 0
        text = f"{value:.{decimals}f}"
        if text in ("-0", "-0.0", "-0.00", "-0.000"):
            text = text[1:]
    return f"**{text}**" if bold else text


def _is_number(cell: str) -> bool:
    try:
        float(cell.strip().strip("*"))
        return True
    except ValueError:
        return False


def update(doc_text: str, rows: list[dict]) -> tuple[str, list[str]]:
    """The document with its quoted rows brought up to date, and one line per changed cell."""
    by_key = {(r["experiment"].strip(), r["variant"].strip(), r["metric"].strip()): r for r in rows}
    out, changes = [], []
    for n, line in enumerate(doc_text.splitlines(keepends=True), 1):
        body = line.rstrip("\n")
        if not (body.startswith("|") and body.endswith("|")):
            out.append(line)
            continue
        cells = body[1:-1].split("|")
        key = tuple(c.strip() for c in cells[:3])
        row = by_key.get(key) if len(cells) >= 6 else None
        if row is None:
            out.append(line)
            continue
        ours = row["ours"]
        new = list(cells)
        if isinstance(ours, (int, float)) and not (isinstance(ours, float) and math.isnan(ours)) \
                and _is_number(cells[3]):
            text = _format_like(cells[3], float(ours))
            new[3] = f" {text} "
        verdict = row.get("verdict") or ""
        if verdict and cells[5].strip().strip("*") != verdict:
            new[5] = f" {verdict} "
        if new != cells:
            for i, label in ((3, "ours"), (5, "verdict")):
                if new[i] != cells[i]:
                    changes.append(f"line {n}: {' / '.join(key)}: {label} {cells[i].strip()} -> {new[i].strip()}")
            line = "|" + "|".join(new) + "|" + ("\n" if line.endswith("\n") else "")
        out.append(line)
    return "".join(out), changes


def _write_whole(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rtclab.repro.doctable", description=__doc__.split("\n\n")[0])
    ap.add_argument("doc", type=Path, help="Markdown document quoting repro rows")
    ap.add_argument("repro_json", type=Path, nargs="+", help="repro.json written by `rtclab repro PAPER`")
    ap.add_argument("--check", action="store_true", help="only list the cells that differ; exit 1 if any")
    args = ap.parse_args(argv)
    if not args.doc.is_file():
        ap.error(f"{args.doc}: no such document")
    rows: list[dict] = []
    for p in args.repro_json:
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            ap.error(f"{p}: not a readable repro.json ({e})")
        if not isinstance(data, list) or not all(isinstance(r, dict) and {"experiment", "variant", "metric", "ours"}
                                                 <= r.keys() for r in data):
            ap.error(f"{p}: not a repro.json (a list of rows with experiment, variant, metric, ours)")
        rows += data
    text = args.doc.read_text(encoding="utf-8")
    new, changes = update(text, rows)
    for c in changes:
        print(c)
    if args.check:
        return 1 if changes else 0
    if changes:
        _write_whole(args.doc, new)
        print(f"{args.doc}: {len(changes)} cell(s) updated")
    else:
        print(f"{args.doc}: up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
