"""The third-party data that ships with rtclab: `rtclab data list|verify`, and where each set is.

Everything rtclab's commands and tests read from outside a scenario file lives in
`python/rtclab/data/` (installed with the package), described by `data/manifest.json`: per set its
source repository and commit, its licence and who uses it; per file its size and SHA-256. Every set
may be redistributed (MIT, GPL-2.0, AGPL-3.0), so none has to be downloaded; `data/README.md` says
what each is and `data/licenses/` holds their licence texts.

A user may point a set elsewhere with its environment variable (e.g. a larger trace collection in
the same format): `RTCLAB_PENSIEVE_DATA`, `RTCLAB_HAIRPIN_TABLES`, `RTCLAB_ZHUGE_TRACES`. Nothing
else is searched: in particular no `shared/` folder beside a checkout, so what runs on a developer's
machine runs the same from a fresh clone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

DATA_ROOT = Path(__file__).resolve().parent / "data"
MANIFEST = DATA_ROOT / "manifest.json"


class DataMissing(FileNotFoundError):
    """A data set (or a file of it) is not where rtclab looks: the message says which and why."""


class DataSet(NamedTuple):
    name: str
    folder: str
    env: str
    #: a file (or glob pattern) whose presence makes a folder this set, so that a wrong override
    #: is caught at once
    marker: str
    title: str
    source: str
    commit: str
    licence: str
    used_by: str


def _manifest() -> dict:
    try:
        return json.loads(MANIFEST.read_text())
    except FileNotFoundError:
        raise DataMissing(f"rtclab's data manifest {MANIFEST} is missing: the installation is incomplete "
                          "(reinstall rtclab, or `git checkout -- python/rtclab/data` in a clone)") from None


def sets() -> dict[str, DataSet]:
    """The shipped data sets by name, as the manifest describes them."""
    return {s["name"]: DataSet(**{k: s[k] for k in DataSet._fields}) for s in _manifest()["sets"]}


def files() -> list[dict]:
    """Every shipped file: {"set", "path" (relative to the data root), "bytes", "sha256"}."""
    return _manifest()["files"]


def locate(name: str) -> Path:
    """The folder of data set `name`: its environment variable if set, else the shipped copy.
    Raises DataMissing naming the variable or the missing shipped folder."""
    ds = sets().get(name)
    if ds is None:
        raise KeyError(f"unknown data set {name!r} (known: {', '.join(sets())})")
    env = os.environ.get(ds.env)
    if env:
        folder = Path(env)
        if not _has_marker(folder, ds.marker):
            what = f"holds no {ds.marker}" if "*" in ds.marker else f"{folder / ds.marker} does not exist"
            raise DataMissing(f"{ds.env}={env} is not a {ds.title} folder: {what} "
                              f"(unset {ds.env} to use the copy shipped with rtclab)")
        return folder
    folder = DATA_ROOT / ds.folder
    if not _has_marker(folder, ds.marker):
        raise DataMissing(f"the {ds.title} shipped with rtclab is missing ({folder}/{ds.marker}): the installation "
                          "is incomplete; `rtclab data verify` lists what is missing")
    return folder


def _has_marker(folder: Path, marker: str) -> bool:
    if "*" in marker:
        return folder.is_dir() and next(folder.glob(marker), None) is not None
    return (folder / marker).exists()


def sha256(path: Path) -> str:
    import hashlib  # only when verifying: 5 ms of every command's start-up otherwise

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Problem(NamedTuple):
    path: str
    what: str


def verify() -> list[Problem]:
    """Each shipped file checked against the manifest (present, size, SHA-256), and each file of
    the data tree that the manifest does not list. Empty when everything is intact."""
    problems = []
    listed = set()
    for f in files():
        listed.add(f["path"])
        p = DATA_ROOT / f["path"]
        if not p.is_file():
            problems.append(Problem(f["path"], "missing"))
        elif p.stat().st_size != f["bytes"]:
            problems.append(Problem(f["path"], f"{p.stat().st_size} bytes, the manifest says {f['bytes']}"))
        elif sha256(p) != f["sha256"]:
            problems.append(Problem(f["path"], "content differs from the manifest's SHA-256"))
    for p in sorted(DATA_ROOT.rglob("*")):
        rel = p.relative_to(DATA_ROOT).as_posix()
        if p.is_file() and rel not in listed and rel not in _UNLISTED:
            problems.append(Problem(rel, "not in the manifest"))
    return problems


#: the manifest does not list itself
_UNLISTED = {"manifest.json"}


def summary_rows() -> list[dict]:
    """One row per set for `rtclab data list`: files, size, licence, source, where it is read from."""
    by_set: dict[str, list[dict]] = {}
    for f in files():
        by_set.setdefault(f["set"], []).append(f)
    rows = []
    for name, ds in sets().items():
        fs = by_set.get(name, [])
        env = os.environ.get(ds.env)
        rows.append({"set": name, "files": len(fs), "bytes": sum(f["bytes"] for f in fs), "licence": ds.licence,
                     "source": ds.source, "commit": ds.commit[:12], "used by": ds.used_by,
                     "read from": f"${ds.env}" if env else "shipped"})
    return rows


def rebuild_manifest() -> int:
    """Developers only (`python -m rtclab.datasets --rebuild-manifest`): rewrites the file list of
    `manifest.json` from the data tree, keeping the sets' descriptions. Files outside a set's
    folder (the tree's README and licence texts) are listed with set null."""
    m = _manifest()
    folders = {s["folder"]: s["name"] for s in m["sets"]}
    listed = []
    for p in sorted(DATA_ROOT.rglob("*")):
        rel = p.relative_to(DATA_ROOT).as_posix()
        if not p.is_file() or rel in _UNLISTED:
            continue
        top = rel.split("/", 1)[0]
        listed.append({"set": folders.get(top), "path": rel, "bytes": p.stat().st_size, "sha256": sha256(p)})
    m["files"] = listed
    tmp = MANIFEST.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(m, indent=1) + "\n")
    tmp.replace(MANIFEST)
    return len(listed)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--rebuild-manifest"]:
        raise SystemExit("usage: python -m rtclab.datasets --rebuild-manifest (developers; users: rtclab data list|verify)")
    print(f"{rebuild_manifest()} files listed in {MANIFEST}")
