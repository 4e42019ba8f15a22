"""`rtclab suite rfc8867`: RFC 8867's wired cases for one or more controllers, through the run
store, with RFC 8868's metrics per case; cases rtclab cannot run yet are named, not faked."""

import json

from rtclab.suites import rfc8867


def test_rfc8867_runs_every_runnable_case_per_controller(cli, tmp_path):
    out = tmp_path / "s"
    r = cli("suite", "rfc8867", "--cc", "gcc", "--cc", "gcc_paper", "--out", out, "--no-progress", timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "suite.json").read_text())
    cases = [c.section for c in rfc8867.CASES]
    assert cases == ["5.1", "5.2", "5.3", "5.4", "5.5", "5.6", "5.7", "5.8"]
    assert [(row["case"], row["cc"]) for row in doc["rows"]] == [(c, cc) for c in cases for cc in ("gcc", "gcc_paper")]
    assert doc["not_run"] == [] and "not run" not in r.stdout and "5.6" in r.stdout
    rows = {(row["case"], row["cc"]): row for row in doc["rows"]}
    # Single-flow case: no fairness ratio; multi-flow cases have one; 5.6 has TCP cross traffic.
    assert rows[("5.1", "gcc")]["within_guideline_5s"] is None
    assert 0 <= rows[("5.4", "gcc")]["within_guideline_5s"] <= 1
    assert rows[("5.6", "gcc")]["cross_traffic_mbps"] > 0.5
    # 5.7: the short downloads (≈ 270 of 30-50 KB, 10 slots, 10 s mean idle) carry ≈ 0.3 Mbit/s.
    assert 0.2 < rows[("5.7", "gcc")]["cross_traffic_mbps"] < 0.5
    assert all(0.3 < row["utilization"] <= 1.0 for row in doc["rows"])
    # The 5.1 run follows the case's capacity timeline.
    run = next(d for d in (out / "runs").iterdir()
               if json.loads((d / "point.json").read_text())["values"] == {"case": "5.1", "cc": "gcc"})
    s = json.loads((run / "summary.json").read_text())
    assert s["duration_s"] == 100 and s["flows"][0]["rtt_ms"] == 100
    html = (out / "report.html").read_text()
    assert html.count("<tr>") == 1 + len(doc["rows"])
    # 5.3: the backward flow's data crosses the reverse direction, with its own timeline.
    run = next(d for d in (out / "runs").iterdir()
               if json.loads((d / "point.json").read_text())["values"] == {"case": "5.3", "cc": "gcc"})
    s = json.loads((run / "summary.json").read_text())
    rev = next(link for link in s["links"] if link["direction"] == "reverse")
    assert rev["delivered_mbps"] > 0.5 and s["flows"][1]["throughput_mbps"] > 0.5
    # Resuming runs nothing new; without --resume the store is not touched.
    r = cli("suite", "rfc8867", "--cc", "gcc", "--out", out, "--no-progress")
    assert r.returncode == 2 and "--resume" in r.stderr
    stamps = {d.name: (d / "summary.json").stat().st_mtime_ns for d in (out / "runs").iterdir()}
    r = cli("suite", "rfc8867", "--cc", "gcc", "--out", out, "--resume", "--no-progress")
    assert r.returncode == 0
    assert {d.name: (d / "summary.json").stat().st_mtime_ns for d in (out / "runs").iterdir()} == stamps


def test_a_controller_that_cannot_run_media_is_named(cli, tmp_path):
    r = cli("suite", "rfc8867", "--cc", "nope", "--out", tmp_path / "s")
    assert r.returncode == 2 and "nope" in r.stderr and "case 5.1" in r.stderr
    assert not (tmp_path / "s").exists()
