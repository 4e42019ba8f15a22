"""The data that ships with rtclab (`rtclab data list|verify`): every command finds it in the
project itself, never beside the checkout, and says so with exit 2 when it is missing."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import rtclab
from rtclab import datasets

PACKAGE = Path(rtclab.__file__).resolve().parent
DATA_VARS = ("RTCLAB_PENSIEVE_DATA", "RTCLAB_HAIRPIN_TABLES", "RTCLAB_ZHUGE_TRACES")


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in DATA_VARS}
    env.update(extra)
    return env


def test_every_set_is_found_inside_the_package_and_verifies(cli, monkeypatch):
    for v in DATA_VARS:
        monkeypatch.delenv(v, raising=False)
    for name in ("pensieve", "hairpin", "wireless-zhuge"):
        assert datasets.locate(name).is_relative_to(PACKAGE / "data"), name
    assert datasets.verify() == []
    r = cli("data", "verify", env=clean_env())
    assert r.returncode == 0 and f"all {len(datasets.files())} files match" in r.stdout, r.stderr
    r = cli("data", "list", env=clean_env())
    assert r.returncode == 0, r.stderr
    for name, licence in (("pensieve", "MIT"), ("hairpin", "GPL-2.0"), ("wireless-zhuge", "AGPL-3.0")):
        assert re.search(rf"^{name}\s+\d+\s+.*{licence}.*shipped", r.stdout, re.M), r.stdout


def test_the_manifest_names_source_commit_and_licence_of_every_file():
    m = json.loads(datasets.MANIFEST.read_text())
    for s in m["sets"]:
        assert re.fullmatch(r"[0-9a-f]{40}", s["commit"]) and s["licence"] and "/" in s["source"], s
        assert next((datasets.DATA_ROOT / s["folder"]).glob(s["marker"]), None) is not None, s
    for f in m["files"]:
        assert re.fullmatch(r"[0-9a-f]{64}", f["sha256"]) and f["bytes"] > 0, f
    # Licence texts for every licence named, and the tree's README naming every set.
    licences = {p.name for p in (datasets.DATA_ROOT / "licenses").iterdir()}
    assert {"MIT-pensieve.txt", "GPL-2.0.txt", "AGPL-3.0.txt"} <= licences
    readme = (datasets.DATA_ROOT / "README.md").read_text()
    assert all(f"`{s['folder']}/`" in readme for s in m["sets"])


def test_no_code_looks_for_a_shared_folder_beside_the_checkout():
    """What runs here runs from a fresh clone: no module searches `shared/` (the hand-off folder
    beside a developer's checkout, absent on a user's machine)."""
    offenders = []
    repo = PACKAGE.parents[1]
    code = [*PACKAGE.rglob("*.py"), *(repo / "crates").rglob("*.rs"), *(repo / "tests").glob("*.py")]
    lookup = re.compile(r"""["']shared["']|["'][^"']*\bshared/(data|traces)""")
    for p in code:
        if p.name == "test_data.py":
            continue
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if not line.lstrip().startswith(("//", "#")) and lookup.search(line):
                offenders.append(f"{p.relative_to(repo)}:{i}: {line.strip()}")
    assert offenders == []


def test_verify_names_a_damaged_a_missing_and_an_unlisted_file(tmp_path, monkeypatch, cli):
    root = tmp_path / "data"
    shutil.copytree(datasets.DATA_ROOT, root)
    monkeypatch.setattr(datasets, "DATA_ROOT", root)
    monkeypatch.setattr(datasets, "MANIFEST", root / "manifest.json")
    (root / "hairpin" / "beta-array-rtx1-cap0-coeff1e-04.bin").write_bytes(b"\0" * 462825)
    (root / "pensieve" / "video_size_3").unlink()
    (root / "wireless-zhuge" / "extra.txt").write_text("x")
    got = {(p.path, p.what.split(" ")[0]) for p in datasets.verify()}
    assert got == {("hairpin/beta-array-rtx1-cap0-coeff1e-04.bin", "content"), ("pensieve/video_size_3", "missing"),
                   ("wireless-zhuge/extra.txt", "not")}


@pytest.mark.parametrize("argv,var", [
    (["repro", "metis", "--runs", "1"], "RTCLAB_PENSIEVE_DATA"),
    (["metis", "convert", "--iterations", "1"], "RTCLAB_PENSIEVE_DATA"),
    (["repro", "zhuge", "--runs", "1", "--only", "S1"], "RTCLAB_ZHUGE_TRACES"),
    (["repro", "hairpin", "--runs", "1"], "RTCLAB_HAIRPIN_TABLES"),
    (["hairpin", "table"], "RTCLAB_HAIRPIN_TABLES"),
])
def test_a_command_whose_data_is_missing_exits_2_and_writes_nothing(cli, tmp_path, argv, var):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    r = cli(*argv, "--out", out, env=clean_env(**{var: str(empty)}), timeout=300)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert var in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not out.exists()


def test_the_bad_data_override_message_names_the_variable_and_the_file(monkeypatch, tmp_path):
    monkeypatch.setenv("RTCLAB_PENSIEVE_DATA", str(tmp_path))
    with pytest.raises(datasets.DataMissing, match=r"RTCLAB_PENSIEVE_DATA=.*pensieve_actor_critic.npz does not exist"):
        datasets.locate("pensieve")
