"""`rtclab suite rfc8867` / `rfc8869`: RFC 8867's wired cases for one or more controllers, through the run
store, with RFC 8868's metrics per case; cases rtclab cannot run yet are named, not faked."""

import json
import os

from rtclab.suites import rfc8867


def test_rfc8867_runs_every_runnable_case_per_controller(cli, tmp_path):
    out = tmp_path / "s"
    r = cli("suite", "rfc8867", "--cc", "gcc", "--cc", "gcc_paper", "--out", out, "--no-progress", timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "suite.json").read_text())
    cases = [c.section for c in rfc8867.CASES]
    assert cases == ["5.1", "5.2", "5.3", "5.4", "5.5", "5.6", "5.7", "5.8"]
    assert [(row["case"], row["cc"]) for row in doc["rows"]] == [(c, cc) for c in cases for cc in ("gcc", "gcc_paper")]
    # §6's cases are named as not run, with the reason, in suite.json and on the terminal.
    assert [n["case"] for n in doc["not_run"]] == ["6.1", "6.2", "6.3"] and "5.6" in r.stdout
    assert all("could not be read" in n["why"] for n in doc["not_run"])
    assert r.stdout.count("not run: 6.") == 3
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


def test_rfc8869_runs_the_wifi_cases_and_the_cellular_ones_on_traces(cli, tmp_path):
    """`rtclab suite rfc8869`: ns3-rmcat's Wi-Fi cases through the access point model with a
    station per flow on the channel (`uplink`), the cellular cases on capacity traces (here one
    short synthetic trace per case, in the sets' format)."""
    traces = tmp_path / "traces"
    traces.mkdir()
    # abc4g_0: 4-8 Mbit/s steps (the load case); abc4g_22 at 0.5 Mbit/s and abc4g_3 at 2 Mbit/s:
    # the edge case must pick the one with the lowest mean.
    (traces / "abc4g_0.pitree-trace").write_text(
        "".join(f"{0.2 * j:.1f} {4 + (j // 50) % 5}\n" for j in range(700)))
    (traces / "abc4g_22.pitree-trace").write_text("".join(f"{0.2 * j:.1f} 0.5\n" for j in range(700)))
    (traces / "abc4g_3.pitree-trace").write_text("".join(f"{0.2 * j:.1f} 2\n" for j in range(700)))
    env = dict(os.environ, RTCLAB_ZHUGE_TRACES=str(traces))
    out = tmp_path / "s"
    r = cli("suite", "rfc8869", "--cc", "gcc", "--out", out, "--no-progress", env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "suite.json").read_text())
    rows = {row["case"]: row for row in doc["rows"]}
    wifi42 = [f"4.2.{v}-n{n}" for v in "abc" for n in (16, 24, 32)] + ["4.2.d-n24", "4.2.e-n24"]
    assert list(rows) == [f"4.1.{v}" for v in "abcdefg"] + wifi42 + ["cellular-load", "cellular-edge"]
    assert doc["not_run"] == [] and "not run" not in r.stdout
    # 4.1: the 1 Mbit/s wired link is the bottleneck in the directions that carry media.
    for case in ("4.1.a", "4.1.b", "4.1.c"):
        assert 0.8 < rows[case]["utilization"] <= 1.0 and 0.7 < rows[case]["media_mbps"] <= 1.0, rows[case]
    assert 0.05 < rows["4.1.d"]["cross_traffic_mbps"] < 0.15  # 300 kbit/s for 40 of 120 s
    assert rows["4.1.f"]["cross_traffic_mbps"] > 0.1
    # 4.2: more flows on the channel, less for each; the uplink CBR flows carry 4 x 600 kbit/s for
    # 40 of 120 s, the uplink TCP flows take more.
    for v in "abc":
        assert rows[f"4.2.{v}-n32"]["media_mbps"] < rows[f"4.2.{v}-n16"]["media_mbps"], v
    assert 0.6 < rows["4.2.d-n24"]["cross_traffic_mbps"] < 0.9
    assert rows["4.2.e-n24"]["cross_traffic_mbps"] > 1.0
    summary = lambda case: json.loads(next(
        d / "summary.json" for d in (out / "runs").iterdir()
        if json.loads((d / "point.json").read_text())["values"] == {"case": case, "cc": "gcc"}).read_text())
    s = summary("4.2.b-n16")
    ap = {x["direction"]: x for x in s["links"] if x["name"] == "ap"}
    # Uplink media leaves from the stations: the channel's reverse direction carries it, and
    # every flow's client is a station.
    assert ap["reverse"]["delivered_mbps"] > 10 and ap["forward"]["delivered_mbps"] < 1
    assert ap["reverse"]["wifi"]["uplink_stations"] == 16 and ap["reverse"]["wifi"]["uplink_txops"] > 1000
    s = summary("4.2.a-n32")
    ap = next(x for x in s["links"] if x["name"] == "ap" and x["direction"] == "forward")
    assert ap["wifi"]["ap_txops"] > 0 and ap["wifi"]["uplink_stations"] == 32 and len(s["flows"]) == 32
    # Cellular: the load case has other users' downloads; the edge case runs on the poorest trace.
    assert rows["cellular-load"]["cross_traffic_mbps"] > 0.5
    s = summary("cellular-edge")
    assert abs(s["link"]["mean_capacity_mbps"] - 0.5) < 0.01
    assert 0 < rows["cellular-edge"]["media_mbps"] < 0.5


def test_rfc8869_without_the_traces_exits_2_and_says_which(cli, tmp_path):
    """The cellular cases run on the shipped traces; pointed at a folder without them the suite
    refuses before it writes anything (exit 2), instead of quietly skipping the cases."""
    from rtclab.suites import rfc8869

    assert [c.section for c in rfc8869.CASES][-2:] == ["cellular-load", "cellular-edge"] and rfc8869.NOT_RUN == {}
    (tmp_path / "none").mkdir()
    env = dict(os.environ, RTCLAB_ZHUGE_TRACES=str(tmp_path / "none"))
    r = cli("suite", "rfc8869", "--cc", "gcc", "--out", tmp_path / "s", "--no-progress", env=env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "RTCLAB_ZHUGE_TRACES" in r.stderr and "Zhuge" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "s").exists()


def test_l4s_suite_runs_prague_beside_cubic_through_dualpi2(cli, tmp_path):
    """`rtclab suite l4s`: the scalable controller (default prague) beside classic CUBIC through
    DualPI2, and two scalable flows; each queue's delay as its flows saw it, the rate ratio,
    the design figures printed; the RMCAT-on-L4S cases named as not run."""
    from rtclab.suites import l4s

    out = tmp_path / "s"
    r = cli("suite", "l4s", "--out", out, "--no-progress", timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "suite.json").read_text())
    rows = {row["case"]: row for row in doc["rows"]}
    assert list(rows) == [c.section for c in l4s.CASES] and {row["cc"] for row in doc["rows"]} == {"prague"}
    for case in ("coexist-10ms", "coexist-20ms", "coexist-50ms"):
        row = rows[case]
        # The L4S queue stays below its 1 ms step, the classic one near PI2's 15 ms target.
        assert row["l4s_qdelay_ms_p99"] < 1.0 and 10 < row["classic_qdelay_ms_p50"] < 20, row
        assert row["utilization"] > 0.97 and row["l4s_ce_fraction"] > 0 and 0.5 < row["ratio"] < 3, row
    assert rows["pair-20ms-20ms"]["classic_mbps"] is None and rows["pair-20ms-20ms"]["ratio"] < 2
    assert "expected ratio" in r.stdout and "L4S qdelay p99 ms" in r.stdout
    assert set(doc["expected"]) == {"ratio", "l4s_qdelay_ms_p99", "classic_qdelay_ms_p50"}
    assert doc["not_run"] == [] and "not run: " not in r.stdout


def test_rmcat_l4s_suite_runs_the_rmcat_controllers_through_dualpi2_with_and_without_ect1(cli, tmp_path):
    """`rtclab suite rmcat-l4s`: RFC 8867's cases through DualPI2, each with the media Not-ECT and
    ECT(1), for GCC, NADA and SCReAM v2 (the default set); marks reach the controllers through
    RFC 8888, SCReAM v2 answers them with a short queue, GCC ignores them."""
    from rtclab.suites import rmcat_l4s

    out = tmp_path / "s"
    r = cli("suite", "rmcat-l4s", "--out", out, "--no-progress", timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "suite.json").read_text())
    rows = {(row["case"], row["cc"]): row for row in doc["rows"]}
    assert {row["cc"] for row in doc["rows"]} == {"gcc", "nada", "scream"}
    assert [c.section for c in rmcat_l4s.CASES][:4] == ["5.1-dualpi2", "5.1-l4s", "5.2-dualpi2", "5.2-l4s"]
    assert len(doc["rows"]) == 3 * len(rmcat_l4s.CASES) and doc["not_run"] == []
    for cc in ("gcc", "nada", "scream"):
        # Not-ECT media is never marked; ECT(1) media in the L queue is.
        assert rows[("5.4-dualpi2", cc)]["media_ce_fraction"] == 0
        assert rows[("5.4-l4s", cc)]["media_ce_fraction"] > 0.01
    # SCReAM v2 answers the marks: its queue stays far below the classic queue's.
    assert rows[("5.4-l4s", "scream")]["media_queuing_delay_ms_p95"] < 0.5 * rows[("5.4-dualpi2", "scream")][
        "media_queuing_delay_ms_p95"]
    # GCC does not: marking leaves its rate where it was.
    g0, g1 = rows[("5.4-dualpi2", "gcc")]["media_mbps"], rows[("5.4-l4s", "gcc")]["media_mbps"]
    assert abs(g1 - g0) < 0.2 * g0
    assert rows[("media-vs-cubic-l4s", "scream")]["cross_traffic_mbps"] > 1
    assert set(doc["expected"]) == {"media_queuing_delay_ms_p95", "utilization"}
    assert "media CE frac." in r.stdout


def test_prague_refuses_classic_ecn(cli, tmp_path):
    scn = tmp_path / "p.toml"
    scn.write_text('name = "p"\nduration = "5s"\n[link]\ncapacity = "10Mbps"\n'
                   '[[flows]]\nkind = "tcp"\ncc = "prague"\nrtt = "20ms"\necn = true\n')
    r = cli("run", scn, "--out", tmp_path / "o", "--no-plots")
    assert r.returncode == 2 and "flows[0].ecn" in r.stderr and "L4S" in r.stderr
    assert not (tmp_path / "o").exists()


def test_nada_runs_the_rfc8867_cases(cli, tmp_path):
    """NADA (RFC 8698) as a media controller through the same suite: it fills the link and
    holds its own against a long TCP flow (5.6), where delay-based GCC starves."""
    out = tmp_path / "s"
    r = cli("suite", "rfc8867", "--cc", "nada", "--out", out, "--no-progress", timeout=600)
    assert r.returncode == 0, r.stderr
    rows = {row["case"]: row for row in json.loads((out / "suite.json").read_text())["rows"]}
    assert all(row["cc"] == "nada" and row["utilization"] > 0.8 for row in rows.values()), rows
    assert rows["5.6"]["media_mbps"] > 0.5 and rows["5.6"]["cross_traffic_mbps"] > 0.5
    assert 0.5 < rows["5.4"]["ratio_median_5s"] < 2
