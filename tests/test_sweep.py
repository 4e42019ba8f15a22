"""`rtclab sweep`: axes over scenario fields and seeds on a process pool, a store keyed by run,
resume after SIGKILL with nothing lost or repeated, catalogs for DuckDB, bad sweeps."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rtclab.sweep import load_sweep, plan, run_sweep

BASE = """
name = "base"
duration = "{d}s"
[link]
capacity = "5Mbps"
queue = {{ limit = "1bdp" }}
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
"""

GRID = """
name = "cap-cc"
scenario = "base.toml"
seeds = {seeds}
[[axis]]
field = "link.capacity"
values = ["2Mbps", "5Mbps", "10Mbps"]
[[axis]]
field = "flows[0].cc"
values = ["cubic", "bbr"]
"""


def write(tmp_path, d=5, seeds=2, sweep=GRID):
    (tmp_path / "base.toml").write_text(BASE.format(d=d))
    p = tmp_path / "sweep.toml"
    p.write_text(sweep.format(seeds=seeds))
    return p


def test_grid_sweep_fills_a_store_and_a_catalog_duckdb_can_query(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    p = write(tmp_path)
    res = run_sweep(p, tmp_path / "out", workers=2, progress=False)
    assert (res.runs, res.already, res.ran) == (12, 0, 12)
    runs = [d for d in (tmp_path / "out" / "runs").iterdir()]
    assert len(runs) == 12 and all((d / "summary.json").is_file() and (d / "flows.parquet").is_file() for d in runs)
    cat = tmp_path / "out" / "catalog.parquet"
    rows = duckdb.sql(f"""select "axis:link.capacity" as cap, "axis:flows[0].cc" as cc, count(*) as n,
                              avg(utilization) as u from '{cat}' group by all order by cap, cc""").fetchall()
    assert len(rows) == 6 and all(r[2] == 2 for r in rows) and all(0.5 < r[3] <= 1.0 for r in rows)
    flows = tmp_path / "out" / "catalog_flows.parquet"
    n = duckdb.sql(f"select count(*) from '{flows}' f join '{cat}' c using (key) where f.kind = 'media'").fetchall()[0][0]
    assert n == 12
    # The same scenario and seed always have the same key; the axis value reached the run.
    s = json.loads(next(d for d in runs if json.loads((d / "point.json").read_text())["values"]["flows[0].cc"] == "bbr")
                   .joinpath("summary.json").read_text())
    assert s["flows"][0]["cc"] == "bbr"
    # The aggregated report: a figure per axis and the throughput-delay scatter.
    html = (tmp_path / "out" / "report.html").read_text()
    for caption in ("metrics vs link.capacity", "metrics vs flows[0].cc", "throughput vs delay per controller"):
        assert f"<figcaption>{caption}</figcaption>" in html, caption


def test_identical_runs_are_planned_once_and_random_and_lhs_draw_samples(tmp_path):
    p = write(tmp_path, sweep=GRID.replace('values = ["cubic", "bbr"]', 'values = ["cubic", "cubic"]'))
    assert len(plan(load_sweep(p))) == 3 * 2  # the duplicate axis value adds nothing
    lhs = write(tmp_path, sweep="""
name = "lhs"
scenario = "base.toml"
mode = "lhs"
samples = 8
[[axis]]
field = "flows[0].rtt"
range = [10, 90]
unit = "ms"
""")
    pts = load_sweep(lhs).points()
    rtts = sorted(float(v["flows[0].rtt"][:-2]) for v in pts)
    # One draw in each tenth-wide stratum of [10, 90].
    assert len(rtts) == 8 and all(10 + 10 * k <= r < 10 + 10 * (k + 1) for k, r in enumerate(rtts))
    assert load_sweep(lhs).points() == pts  # the draw is seeded


def test_a_killed_sweep_resumes_without_losing_or_repeating_runs(tmp_path):
    p = write(tmp_path, d=120, seeds=4)  # about 0.1 s per run: the kill lands mid-sweep
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "rtclab.cli", "sweep", str(p), "--out", str(out), "--workers", "2",
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    runs = out / "runs"
    deadline = time.monotonic() + 120
    while True:
        done = [d for d in runs.iterdir() if not d.name.startswith(".")] if runs.is_dir() else []
        if len(done) >= 4:
            break
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)  # the sweep only: its workers die with it (PDEATHSIG)
    proc.wait()
    time.sleep(0.5)
    before = {d.name: (d / "summary.json").stat().st_mtime_ns for d in runs.iterdir() if not d.name.startswith(".")}
    assert 4 <= len(before) < 24, len(before)
    r = subprocess.run([sys.executable, "-m", "rtclab.cli", "sweep", str(p), "--out", str(out), "--resume", "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"24 runs ({len(before)} already in the store, {24 - len(before)} run now)" in r.stdout
    after = {d.name: (d / "summary.json").stat().st_mtime_ns for d in runs.iterdir() if not d.name.startswith(".")}
    assert len(after) == 24 and all(after[k] == v for k, v in before.items())  # none repeated, none lost
    assert not [d for d in runs.iterdir() if d.name.startswith(".")]  # the killed runs' leftovers are gone


def test_a_corrupt_catalog_is_rebuilt_from_the_runs(tmp_path):
    from rtclab.sweep import catalog

    p = write(tmp_path, seeds=1)
    run_sweep(p, tmp_path / "out", workers=1, progress=False)
    (tmp_path / "out" / "catalog.parquet").write_bytes(b"not parquet")
    assert len(catalog(tmp_path / "out")) == 6


@pytest.mark.parametrize("sweep, words", [
    (GRID.replace('field = "link.capacity"', 'field = "link.capacityy"'), ["link.capacityy", "unknown key"]),
    (GRID.replace('values = ["cubic", "bbr"]', "values = []"), ["axis[1]", "non-empty"]),
    (GRID.replace('values = ["cubic", "bbr"]', 'values = ["cubik"]'), ["flows[0].cc", "cubik"]),
    (GRID.replace('field = "flows[0].cc"', 'field = "flows[5].cc"'), ["flows[5].cc", "no flows.5"]),
    (GRID.replace('field = "flows[0].cc"', 'field = "flows..cc"'), ["not a scenario field path"]),
    (GRID + 'mode = "sobol"\n', ["mode"]),
    (GRID.replace("seeds = {seeds}", "seeds = 0"), ["seeds"]),
])
def test_bad_sweeps_are_named_before_anything_runs(cli, tmp_path, sweep, words):
    p = write(tmp_path, sweep=sweep)
    r = cli("sweep", p, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stdout
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    assert not (tmp_path / "out").exists()


def test_a_store_is_never_mixed_up(cli, tmp_path):
    p = write(tmp_path, seeds=1)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("keep")
    r = cli("sweep", p, "--out", tmp_path / "mine")
    assert r.returncode == 2 and "not an rtclab sweep store" in r.stderr
    assert cli("sweep", p, "--out", tmp_path / "out", "--no-progress").returncode == 0
    other = write(tmp_path, seeds=3)
    r = cli("sweep", other, "--out", tmp_path / "out", "--resume")
    assert r.returncode == 2 and "different sweep" in r.stderr


@pytest.mark.parametrize("node_local_writes", [True, False])
def test_ray_backend_gives_the_local_pools_results(tmp_path, monkeypatch, node_local_writes):
    """A Ray instance on this machine (started by the sweep): the same runs, the same numbers
    (runs are deterministic), in the same store layout — written by the workers on the
    driver's node, or by the driver from the files the workers return (as from other nodes)."""
    pytest.importorskip("ray")
    import pandas as pd

    import rtclab.sweep

    monkeypatch.setattr(rtclab.sweep, "RAY_NODE_LOCAL_WRITES", node_local_writes)
    p = write(tmp_path, seeds=2)
    a = run_sweep(p, tmp_path / "local", workers=2, progress=False, report=False)
    b = run_sweep(p, tmp_path / "ray", workers=2, progress=False, report=False, backend="ray")
    assert a.runs == b.runs == b.ran == 12
    cols = lambda df: df.drop(columns=["wall_time_s"]).sort_values("key").reset_index(drop=True)
    pd.testing.assert_frame_equal(cols(pd.read_parquet(tmp_path / "local" / "catalog.parquet")),
                                  cols(pd.read_parquet(tmp_path / "ray" / "catalog.parquet")))


def test_an_unreachable_ray_address_is_named_and_leaves_nothing(cli, tmp_path):
    pytest.importorskip("ray")
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # a port nobody listens on
    p = write(tmp_path, seeds=1)
    r = cli("sweep", p, "--out", tmp_path / "out", "--backend", "ray", "--address", f"127.0.0.1:{port}")
    assert r.returncode == 2 and "cannot reach a Ray head" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()
    r = cli("sweep", p, "--out", tmp_path / "out", "--address", f"127.0.0.1:{port}")
    assert r.returncode == 2 and "--address applies to --backend ray only" in r.stderr


def test_harm_schedules_solo_runs_and_measures_the_damage(tmp_path):
    """harm = true: every flow entry of every point also runs alone (once per distinct solo
    scenario and seed), and each flow's harm (Ware et al.) is in the flow catalog."""
    from rtclab.sweep import catalog

    p = write(tmp_path, seeds=2, sweep="""
name = "harm"
scenario = "base.toml"
seeds = {seeds}
harm = true
[[axis]]
field = "flows[0].cc"
values = ["cubic", "bbr"]
""")
    res = run_sweep(p, tmp_path / "out", workers=2, progress=False, report=False)
    # 2 points x 2 seeds, plus solos: the media flow alone is the same for both points.
    assert res.runs == 4 + 2 * 2 + 2
    runs, flows = catalog(tmp_path / "out"), catalog(tmp_path / "out", flows=True)
    assert (runs["solo_of_entry"] >= 0).sum() == 6
    main = flows.merge(runs[["key", "solo_of_entry"]], on="key")
    main = main[main["solo_of_entry"] == -1]
    gcc = main[main["cc"] == "gcc"]
    assert len(gcc) == 4 and (gcc["harm_throughput"] > 0.2).all() and (gcc["harm_frame_delay"] > 0).all()
    assert main["harm_throughput"].between(-1, 1).all()
