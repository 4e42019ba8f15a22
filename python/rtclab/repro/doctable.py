"""Keep a document's reproduction tables equal to a `repro.json`.

The algorithm docs (docs/algorithms/*.md) quote `rtclab repro PAPER` rows as Markdown tables
`| experiment | variant | metric | ours | paper | verdict |`. When a change moves a figure, the
quoted table goes stale unless someone copies the new value in; this tool does the copying, and
with `--check` says which cells differ (exit 1) without writing.

    python -m rtclab.repro.doctable docs/algorithms/copa.md rtclab-out/repro-copa/repro.json --check
    python -m rtclab.repro.doctable docs/algorithms/copa.md rtclab-out/repro-copa/repro.json

With `--table` it prints instead a table of the repro's rows that carry a published figure, to
paste into a doc once (the tool keeps it current from then on):

    python -m rtclab.repro.doctable --table rtclab-out/repro-afr/repro.json

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
import re
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
        cells = _split(body)
        key = tuple(_unescape(c) for c in cells[:3])
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


def quoted_rows(doc_text: str, rows: list[dict]) -> int:
    """How many of the document's table lines quote one of `rows` (matched as `update` does)."""
    keys = {(r["experiment"].strip(), r["variant"].strip(), r["metric"].strip()) for r in rows}
    n = 0
    for line in doc_text.splitlines():
        body = line.rstrip()
        if body.startswith("|") and body.endswith("|"):
            cells = _split(body)
            n += len(cells) >= 6 and tuple(_unescape(c) for c in cells[:3]) in keys
    return n


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


#: Metrics measured on the machine's clock (a solve time, a decision latency): they differ from
#: run to run, so a doc quotes them in prose with their date, not in a table the guard checks.
MACHINE_DEPENDENT = r"(solve|lookup|conversion|page-load) time|latency|heap"


def published_table(rows: list[dict]) -> str:
    """A Markdown table of the rows that carry a published figure (a verdict), `ours` to three
    significant digits; "–" where ours is missing. Rows measured on the clock are left out
    (`MACHINE_DEPENDENT`)."""
    lines = ["| experiment | variant | metric | ours | paper | verdict |", "|---|---|---|---|---|---|"]
    for r in rows:
        if not r.get("verdict") or re.search(MACHINE_DEPENDENT, r["metric"]):
            continue
        ours = r["ours"]
        if isinstance(ours, (int, float)) and not (isinstance(ours, float) and math.isnan(ours)):
            mag = abs(float(ours))
            decimals = 0 if mag >= 100 else 1 if mag >= 10 else 2 if mag >= 1 else 3
            text = f"{float(ours):.{decimals}f}"
            text = text[1:] if text in ("-0", "-0.0", "-0.00", "-0.000") else text
        else:
            text = "–"
        lines.append(f"| {_cell(r['experiment'])} | {_cell(r['variant'])} | {_cell(r['metric'])} | {text} | "
                     f"{_cell(r['paper'])} | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def _split(line: str) -> list[str]:
    """The cells of a Markdown table line "| a | b \\| c |" (a "\\|" is part of a cell)."""
    return re.split(r"(?<!\\)\|", line[1:-1])


def _unescape(cell: str) -> str:
    return cell.strip().replace("\\|", "|")


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
    ap.add_argument("doc", type=Path, nargs="?", help="Markdown document quoting repro rows")
    ap.add_argument("repro_json", type=Path, nargs="+", help="repro.json written by `rtclab repro PAPER`")
    ap.add_argument("--check", action="store_true", help="only list the cells that differ; exit 1 if any")
    ap.add_argument("--table", action="store_true",
                    help="print a table of the rows with a published figure (no document)")
    args = ap.parse_args(argv)
    if args.table and args.doc is not None:
        # `--table A.json B.json`: argparse took the first file for `doc`.
        args.repro_json.insert(0, args.doc)
        args.doc = None
    if args.doc is None and not args.table:
        ap.error("give the document to update (or --table to print a new table)")
    if args.doc is not None and not args.doc.is_file():
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
    if args.table:
        sys.stdout.write(published_table(rows))
        return 0
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
