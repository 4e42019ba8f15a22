"""A user's files are never deleted or overwritten by `--out` (the trust issue's data-loss bug)."""

import json
import os
import stat
import subprocess

import pytest

from rtclab.output import MARKER, TMP_MARKER, OutputError, check_replaceable, sweep_leftovers

from conftest import GOOD


@pytest.fixture
def scenario(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(GOOD)
    return p


def _run(cli, scenario, out, cwd=None):
    return cli("run", scenario, "--out", out, "--no-plots", "--no-progress", "--seed", 1, cwd=cwd)


def test_refuses_a_folder_rtclab_did_not_write(cli, tmp_path, scenario):
    results = tmp_path / "results"
    (results / "earlier-run").mkdir(parents=True)
    (results / "earlier-run" / "summary.json").write_text("{}")
    (results / "thesis.tex").write_text("\\documentclass{article}")
    r = _run(cli, scenario, results)
    assert r.returncode == 2
    assert "was not written by rtclab" in r.stderr and "choose another --out" in r.stderr
    assert (results / "thesis.tex").read_text() == "\\documentclass{article}"
    assert (results / "earlier-run" / "summary.json").exists()
    assert not any(p.name.startswith(".results") for p in tmp_path.iterdir())


def test_refuses_the_current_directory(cli, tmp_path, scenario):
    r = _run(cli, scenario.name, ".", cwd=tmp_path)
    assert r.returncode == 2 and "current directory" in r.stderr
    assert scenario.read_text() == GOOD
    r = _run(cli, scenario, tmp_path.parent, cwd=tmp_path)
    assert r.returncode == 2 and "current directory or one above it" in r.stderr


def test_refuses_a_folder_holding_the_runs_input(cli, tmp_path):
    first = tmp_path / "exp"
    scen = tmp_path / "s.toml"
    scen.write_text(GOOD)
    assert _run(cli, scen, first).returncode == 0
    # Rerunning a result folder's own scenario.toml into that folder would replace the input.
    r = _run(cli, first / "scenario.toml", first)
    assert r.returncode == 2 and "holds this run's input" in r.stderr
    assert (first / "scenario.toml").exists()


def test_refuses_an_own_folder_the_user_added_files_to(cli, tmp_path, scenario):
    out = tmp_path / "o"
    assert _run(cli, scenario, out).returncode == 0
    (out / "notes.md").write_text("my notes")
    r = _run(cli, scenario, out)
    assert r.returncode == 2 and "notes.md" in r.stderr
    assert (out / "notes.md").read_text() == "my notes"


def test_replaces_its_own_folder_and_writes_into_an_empty_one(cli, tmp_path, scenario):
    out = tmp_path / "o"
    assert _run(cli, scenario, out).returncode == 0
    marker = json.loads((out / MARKER).read_text())
    assert "summary.json" in marker["files"] and marker["kind"] == "run"
    assert _run(cli, scenario, out).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run(cli, scenario, empty).returncode == 0
    assert (empty / "summary.json").exists()


def test_output_is_readable_by_others(cli, tmp_path, scenario):
    out = tmp_path / "o"
    old = os.umask(0o022)
    try:
        assert _run(cli, scenario, out).returncode == 0
    finally:
        os.umask(old)
    mode = stat.S_IMODE(out.stat().st_mode)
    assert mode & 0o055 == 0o055, oct(mode)


def test_leftovers_of_killed_runs_are_removed_only_if_ours(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    ours = tmp_path / ".o.tmp-abc123"
    ours.mkdir()
    (ours / TMP_MARKER).write_text(json.dumps({"pid": dead.pid}))
    (ours / "flows.parquet").write_text("half")
    alive = tmp_path / ".o.tmp-live"
    alive.mkdir()
    (alive / TMP_MARKER).write_text(json.dumps({"pid": os.getppid()}))
    foreign = tmp_path / ".thesis.tmp-backup"
    foreign.mkdir()
    (foreign / "chapter1.tex").write_text("x")
    # A writer killed between creating its directory and marking it (or after unmarking it,
    # before its rename) leaves only the name, which carries its pid.
    unmarked = tmp_path / f".o.tmp-{dead.pid}-x1y2"
    unmarked.mkdir()
    (unmarked / "summary.json").write_text("{}")
    unmarked_alive = tmp_path / f".o.tmp-{os.getppid()}-x1y2"
    unmarked_alive.mkdir()
    assert sorted(sweep_leftovers(tmp_path)) == sorted([ours, unmarked])
    assert not ours.exists() and not unmarked.exists()
    assert alive.exists() and foreign.exists() and unmarked_alive.exists()


def test_check_replaceable_names_the_problem(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(OutputError, match="exists and is not a directory"):
        check_replaceable(f, "file")
    check_replaceable(tmp_path / "missing", "missing")  # nothing there: fine


def test_default_names_of_two_scenario_files_named_alike_do_not_collide(cli, tmp_path):
    """exp1/scenario.toml and exp2/scenario.toml both default to rtclab-out/scenario: the second
    goes to rtclab-out/scenario-2 instead of replacing the first; a rerun of a file replaces its
    own result."""
    for exp, seed in (("exp1", 1), ("exp2", 2)):
        (tmp_path / exp).mkdir()
        (tmp_path / exp / "scenario.toml").write_text(GOOD.replace('name = "small"', f'name = "{exp}"\nseed = {seed}'))
    for exp in ("exp1", "exp2", "exp1"):
        r = cli("run", f"{exp}/scenario.toml", "--no-plots", "--no-progress", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    out = tmp_path / "rtclab-out"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["scenario", "scenario-2"]
    assert json.loads((out / "scenario" / "summary.json").read_text())["scenario"] == "exp1"
    assert json.loads((out / "scenario-2" / "summary.json").read_text())["scenario"] == "exp2"
