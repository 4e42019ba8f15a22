"""The scenario copy a result folder keeps, made to rerun exactly: `rtclab run DIR/scenario.toml`
gives the same result (same seed, same traces).

The copy pins the seed the run used (a `--seed` override included) and points every file the
scenario reads (`trace`, `frame_sizes`) at a copy under `inputs/` in the result folder, so the
folder stands on its own when moved. TOML text is edited in place — comments and layout kept —
by replacing the exact string literals that name those files and the top-level `seed` line;
JSON is rewritten whole.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from rtclab.scenarios import FILE_KEYS, file_references

INPUTS = "inputs"


class RerunCopy(NamedTuple):
    name: str  # "scenario.toml" or "scenario.json"
    text: str
    #: (file the scenario read, its name under inputs/)
    files: list[tuple[Path, str]]


def _local_names(refs: list[str]) -> dict[str, str]:
    """A distinct name under inputs/ for each referenced file (`2-x.down` where names clash)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for i, r in enumerate(refs):
        name = Path(r).name or f"file{i}"
        if name in used:
            name = f"{i}-{name}"
        used.add(name)
        out[r] = f"{INPUTS}/{name}"
    return out


def rerun_copy(text: str, base_dir: str, seed: int, version: str) -> RerunCopy:
    """The scenario as the result folder keeps it (see the module documentation)."""
    is_json = text.lstrip().startswith("{")
    data = json.loads(text) if is_json else tomllib.loads(text)
    refs = file_references(data)
    names = _local_names(refs)
    files = [(Path(base_dir) / r, names[r][len(INPUTS) + 1:]) for r in refs]
    if is_json:

        def fix(v: Any) -> Any:
            if isinstance(v, dict):
                return {k: (names.get(x, x) if k in FILE_KEYS and isinstance(x, str) else fix(x)) for k, x in v.items()}
            if isinstance(v, list):
                return [fix(x) for x in v]
            return v

        data = fix(data)
        data["seed"] = seed
        return RerunCopy("scenario.json", json.dumps(data, indent=2) + "\n", files)
    for r, local in names.items():
        for q in ('"', "'"):
            text = text.replace(f"{q}{r}{q}", f'"{local}"')
    # The seed: replace a top-level `seed = ...` line (before the first table), else add one.
    first_table = re.search(r"^\s*\[", text, flags=re.M)
    head_end = first_table.start() if first_table else len(text)
    head, rest = text[:head_end], text[head_end:]
    seed_line = re.compile(r"^(\s*seed\s*=\s*)[^#\n]*", flags=re.M)
    if "seed" in data and seed_line.search(head):
        head = seed_line.sub(lambda m: f"{m.group(1)}{seed}", head, count=1)
    else:
        head = f"seed = {seed}\n" + head
    header = (
        f"# Kept by rtclab {version} with its result: the seed the run used is pinned and the files\n"
        f"# it read are copied under {INPUTS}/, so `rtclab run <this folder>/scenario.toml` reruns it.\n"
    )
    text = header + head + rest
    tomllib.loads(text)  # never keep a copy that does not parse
    return RerunCopy("scenario.toml", text, files)
