import json
import os
from pathlib import Path

import pytest

import pandas as pd

import rtclab

SUMMARY_TOP = {"scenario", "seed", "engine", "duration_s", "wall_time_s", "link", "fairness", "flows"}
FLOW_KEYS = {"id", "kind", "cc", "throughput_mbps", "goodput_mbps", "loss_ratio", "share", "queuing_delay_ms"}
PCTS = {"p5", "p25", "p50", "p75", "p95", "p99"}


def test_version(cli):
    r = cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"rtclab {rtclab.__version__}"


def test_list_shows_builtins(cli):
    r = cli("list")
    assert r.returncode == 0
    names = [line.split()[0] for line in r.stdout.splitlines()]
    for n in ["default", "cubic-alone", "two-cubic", "bench-10-cubic", "lte-trace"]:
        assert n in names


def test_run_default_writes_everything(cli, tmp_path):
    out = tmp_path / "res"
    r = cli("run", "--out", out, "--seed", 3)
    assert r.returncode == 0, r.stderr
    for f in ["summary.json", "flows.parquet", "link.parquet", "fairness.parquet", "scenario.toml",
              "throughput.png", "delay.png", "delay_cdf.png", "queue.png", "cwnd.png", "report.html",
                  "interruptions.parquet", "distributions.parquet"]:
        assert (out / f).is_file(), f
    s = json.loads((out / "summary.json").read_text())
    assert SUMMARY_TOP <= s.keys()
    assert s["engine"] == "sim" and s["seed"] == 3 and s["scenario"] == "default"
    assert {"utilization", "loss_ratio"} <= s["link"].keys()
    assert "jain" in s["fairness"]
    assert len(s["flows"]) == 3
    for f in s["flows"]:
        assert FLOW_KEYS <= f.keys()
        assert PCTS <= f["queuing_delay_ms"].keys()
    assert abs(sum(f["share"] for f in s["flows"]) - 1.0) < 1e-9
    assert s["wall_time_s"] > 0
    flows = pd.read_parquet(out / "flows.parquet")
    assert {"time_s", "flow", "throughput_mbps", "queuing_delay_ms_mean", "cwnd_packets"} <= set(flows.columns)
    link = pd.read_parquet(out / "link.parquet")
    assert {"capacity_mbps", "queue_bytes_mean", "utilization"} <= set(link.columns)
    # The capacity schedule 50 -> 20 -> 80 Mbit/s shows in the link series.
    assert set(link["capacity_mbps"].round(3).unique()) == {50.0, 20.0, 80.0}
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 4
    # Nothing but the result directory was left behind.
    assert [p.name for p in tmp_path.iterdir()] == ["res"]


def test_run_builtin_by_name_and_file(cli, tmp_path, good_scenario):
    r = cli("run", good_scenario, "--out", tmp_path / "a", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert "results in" in r.stdout
    assert not (tmp_path / "a" / "report.html").exists()
    s = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert s["scenario"] == "small" and len(s["flows"]) == 2


def test_rerun_replaces_earlier_result(cli, tmp_path, good_scenario):
    out = tmp_path / "o"
    assert cli("run", good_scenario, "--out", out, "--no-plots", "--seed", 1).returncode == 0
    assert cli("run", good_scenario, "--out", out, "--no-plots", "--seed", 2).returncode == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "small.toml"]


def test_validate(cli, good_scenario):
    r = cli("validate", good_scenario, "default")
    assert r.returncode == 0
    assert r.stdout.count("ok:") == 2


def test_figures_via_cli(cli, tmp_path):
    """The issue's figures, through the whole front end."""
    r = cli("run", "cubic-alone", "--out", tmp_path / "c", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "c" / "summary.json").read_text())["link"]["utilization"] >= 0.95
    r = cli("run", "two-cubic", "--out", tmp_path / "t", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "t" / "summary.json").read_text())["fairness"]["jain"] >= 0.95


def test_bench_writes_json(cli, tmp_path):
    r = cli("bench", "sim", "--repeat", 1, "--out", tmp_path / "b")
    assert r.returncode == 0, r.stderr
    b = json.loads((tmp_path / "b" / "bench.json").read_text())
    for k in ["sim_seconds_per_wall_second", "delivered_packets_per_wall_second", "events_per_wall_second"]:
        assert b[k] > 0
    # 10 flows x 60 s at 100 Mbit/s: about 500k delivered data packets, near-full utilization.
    assert 450_000 < b["best"]["delivered_packets"] < 510_000
    assert b["best"]["utilization"] > 0.95
    sc = b["scaling_1_vs_1000_flows"]
    assert {(r["queue"], r["flows"]) for r in sc} == {(q, n) for q in ("droptail", "fq_codel") for n in (1, 1000)}
    for r in sc:
        assert 400_000 < r["delivered_packets"] < 510_000 and r["events_per_delivered_packet"] > 2
        if r["flows"] == 1:
            assert r["per_packet_vs_1_flow"] == 1.0
    r = cli("bench", "sim", "--repeat", 0)
    assert r.returncode == 2


def test_repro_zhuge_runs_the_drop_and_trace_experiments(repro_runs):
    """`rtclab repro zhuge`: S3 rows per k and controller (ours next to the published change),
    S1 rows per trace set from the trace sets shipped with rtclab."""
    from rtclab.repro.zhuge import KS, trace_dir

    # Every experiment, on the trace sets shipped with rtclab (S2's details: the test below).
    r, _, rows = repro_runs.get("zhuge")
    from rtclab.repro.zhuge import S2_SETS

    assert {x["experiment"] for x in rows if x["experiment"].startswith("S2")} == {f"S2 trace {t}" for t in S2_SETS}
    s3 = [x for x in rows if x["experiment"] == "S3 bandwidth drop" and x["metric"] == "Zhuge vs best baseline"
          and not x["variant"].startswith("cause: ")]
    # gcc, gcc-no-pushback (each also with Zhuge's AP-originated 1 ms reports), copa, copa against
    # FastAck with its lock broken (hold 16.1 ms), and copa carrying video over TCP.
    assert len(s3) == 7 * len(KS) and all(x["paper"] for x in s3)
    # The cause experiments (issue 41): Zhuge with AP drops reported as lost and with its reports
    # held to dequeue, for both GCCs at every k; every S3 row not reproduced names its cause.
    causes = [x for x in rows if x["experiment"] == "S3 bandwidth drop" and x["metric"] == "Zhuge vs best baseline"
              and x["variant"].startswith("cause: ")]
    assert len(causes) == 4 * len(KS)
    hidden = {x["variant"]: x["ours"] for x in rows if x["metric"] == "AP drops reported as received"}
    assert len(hidden) == 2 * len(KS) and hidden["cause: gcc+zhuge k=50"] > 0 and hidden["cause: gcc+zhuge k=2"] == 0
    assert all(x.get("cause") for x in rows if x["verdict"] in ("not reproduced", "not measured"))
    assert all(x["cause"] != "open" for x in rows if x["experiment"] == "S3 bandwidth drop"
               and x["verdict"] in ("not reproduced", "not measured"))
    assert "published figures reproduced" in r.stdout
    assert {x["variant"] for x in s3 if x["variant"].startswith("copa-video k=")} == {f"copa-video k={k}" for k in KS}
    assert len([x for x in s3 if "AP reports every 1 ms" in x["variant"]]) == 2 * len(KS)
    fastack = [x for x in rows if x["variant"].startswith("copa+fastack k=") and x["metric"] == "RTT>200ms duration (s)"]
    assert len(fastack) == len(KS) and all(0 <= x["ours"] <= 20 for x in fastack)
    durations = [x["ours"] for x in rows if x["metric"] == "RTT>200ms duration (s)"]
    assert durations and all(0 <= d <= 20 for d in durations)
    from rtclab.repro.zhuge import NS

    for exp in ("S4 competition (Wi-Fi)", "S4+uplink competition (Wi-Fi)",
                "S4 competition, clients as stations (Wi-Fi)", "S5 interference (Wi-Fi)"):
        wifi = [x for x in rows if x["experiment"] == exp and x["metric"] == "Zhuge vs best baseline"
                and "AP drops" not in x["variant"]]
        assert len(wifi) == len(NS) and all(x["paper"] for x in wifi)
    acc = [x for x in rows if x["experiment"] == "S7a prediction error"]
    assert {x["variant"] for x in acc} == {"S3 gcc k=10", "S3 copa k=10", "S5 N=5"}
    small = [x["ours"] for x in acc if x["metric"].startswith("|error| p50, delay <= 64")]
    assert all(v is not None and 0 <= v < 50 for v in small), small
    over = [x["ours"] for x in rows if x["metric"] == "time with RTT>200ms (s)"]
    # S5: FIFO, CoDel, Zhuge and Zhuge reporting AP drops as lost; S5 without pushback: the first three.
    assert len(over) == (4 + 3) * len(NS) and all(0 <= v <= 50 for v in over)
    # S7b/c: two flows through the AP with Zhuge on neither, both, or the first; their rates add
    # up to at most the PHY rate, and the edge rows are judged against the published < 3 %.
    for cc in ("gcc", "copa"):
        for label in ("neither with Zhuge", "both with Zhuge", "first with Zhuge"):
            rates = [x["ours"] for x in rows if x["variant"] == f"{cc}, {label}" and x["metric"].endswith("bitrate (Mbit/s)")]
            assert len(rates) == 2 and all(r > 1 for r in rates) and sum(rates) < 65, (cc, label, rates)
        edge = [x for x in rows if x["experiment"] == "S7c inter-fairness" and x["metric"].startswith("|Zhuge flow")
                and x["variant"].startswith((cc, f"cause: {cc}"))]
        assert len(edge) == 2 and all(x["ours"] >= 0 and x["verdict"] for x in edge)
    # The trace sets ship with rtclab (rtclab/data/wireless-zhuge): S1 always runs.
    assert str(trace_dir()).startswith(str(Path(rtclab.__file__).parent / "data"))
    assert {x["experiment"] for x in rows} >= {f"S1 trace {t}" for t in ("W1", "W2", "C1", "C2", "C3")}


def test_repro_zhuge_s2_runs_copa_and_abc_on_every_trace_set(cli, tmp_path):
    """`rtclab repro zhuge --only S2`: video over TCP with Copa over FIFO/CoDel, Copa + FastAck, Copa +
    Zhuge and ABC on each trace set (here one synthetic trace per set, in the sets' file format); --only refuses what it
    does not know, before anything is written."""
    from rtclab.repro.zhuge import S2_SETS, S2_VARIANTS

    traces = tmp_path / "traces"
    traces.mkdir()
    for i, prefix in enumerate(S2_SETS.values()):
        # 300 s of 1 Mbit/s steps between 3 and 6 Mbit/s, a line per 200 ms (time s, Mbit/s).
        lines = [f"{300 + 0.2 * j:.3f} {3 + (j // 25 + i) % 4:.6f}" for j in range(1500)]
        (traces / f"{prefix}_0.pitree-trace").write_text("\n".join(lines) + "\n")
    env = dict(os.environ, RTCLAB_ZHUGE_TRACES=str(traces))
    r = cli("repro", "zhuge", "--runs", 1, "--only", "S2", "--out", tmp_path / "z", "--no-progress",
            env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "z" / "repro.json").read_text())
    assert {x["experiment"] for x in rows} == {f"S2 trace {t}" for t in S2_SETS}
    for tid in S2_SETS:
        util = {x["variant"]: x["ours"] for x in rows
                if x["experiment"] == f"S2 trace {tid}" and x["metric"] == "utilization"}
        assert set(util) == {f"{cc}+{aqm}" for cc, aqm in S2_VARIANTS}
        assert all(0.5 < u <= 1.0 for u in util.values()), (tid, util)
        tail = [x["ours"] for x in rows if x["experiment"] == f"S2 trace {tid}" and x["metric"] == "ratio RTT>200ms"
                and " vs " not in x["variant"]]
        assert len(tail) == len(S2_VARIANTS)
        assert all(0 <= v <= 1 for v in tail)
        # Video over TCP: every variant's frames are timed.
        late = [x["ours"] for x in rows if x["experiment"] == f"S2 trace {tid}" and x["metric"] == "ratio frames>400ms"
                and " vs " not in x["variant"]]
        assert len(late) == len(S2_VARIANTS) and all(v is not None and 0 <= v <= 1 for v in late), late
    for bad in ("S9", "S2,X", ","):
        r = cli("repro", "zhuge", "--only", bad, "--out", tmp_path / "bad")
        assert r.returncode == 2 and "--only" in r.stderr and "accepted: S1, S2, S3, S4, S5" in r.stderr, r.stderr
        assert not (tmp_path / "bad").exists()
    r = cli("repro", "gcc", "--only", "S1", "--out", tmp_path / "bad")
    assert r.returncode == 2 and "--only is not supported" in r.stderr
    assert not (tmp_path / "bad").exists()


def test_repro_confucius_compares_the_queues(repro_runs):
    """`rtclab repro confucius`: every queue in the load and size sweeps, stall and PLT rows,
    the heterogeneous-CC JFI, and the synthetic web pages (10 per run) under every queue."""
    from rtclab.repro.confucius import LOADS, QUEUES, SIZES

    _, _, rows = repro_runs.get("confucius")
    stalls = [x for x in rows if x["metric"] == "stall duration (s)" and not x["variant"].startswith("cause: ")]
    assert len(stalls) == len(QUEUES) * (len(LOADS) + len(SIZES))
    # The cause rows: FIFO and FQ at 60 flows with the video over Copa, as the paper ran it.
    copa = {x["variant"]: x["ours"] for x in rows if x["variant"].startswith("cause: ") and "over Copa" in x["variant"]}
    assert len(copa) == 2 and all(v >= 0 for v in copa.values())
    assert all(0 <= x["ours"] <= 20 for x in stalls)
    jfi = {x["variant"]: x["ours"] for x in rows if x["metric"] == "JFI"}
    assert set(jfi) == {"FIFO", "FQ", "Confucius"} and all(0 < v <= 1 for v in jfi.values())
    pages = [x for x in rows if x["experiment"] == "Web pages (20 synthetic pages)"]
    share = {x["variant"]: x["ours"] for x in pages if x["metric"] == "share of pages without a stall"}
    assert set(share) == set(QUEUES) and all(0 <= v <= 1 for v in share.values())
    # Strict priority serves the video first: it never stalls, and the pages pay for it.
    assert share["StrictPriority"] == 1.0
    deg = {x["variant"]: x["ours"] for x in pages if x["metric"].startswith("PLT - PLT(FQ)")}
    assert deg["FQ"] == 0 and deg["StrictPriority"] > deg["Confucius"]
    gen = {x["metric"]: x for x in pages if x["variant"] == "generator, 1000 pages"}
    assert all(x["verdict"] == "within tolerance" for x in gen.values()), gen


def test_repro_hairpin_checks_the_table_and_runs_the_policies(repro_runs):
    """`rtclab repro hairpin`: the solver against the published tables (when beside the
    checkout), the golden vectors, the §3.10 acceptance, the grid and the sensitivity rows."""
    from rtclab.hairpin import published_dir

    _, out, rows = repro_runs.get("hairpin")
    get = lambda exp, var, met: next(x["ours"] for x in rows
                                     if x["experiment"].startswith(exp) and x["variant"] == var and x["metric"] == met)
    for lam in ("0.0001", "1e-07"):
        assert get("Offline table", f"λ = {lam}", "spec §3.11 golden cells matching") in (60, 24)
        assert get("Offline table", f"λ = {lam}", "solve time (s)") < 10
        if published_dir() is not None:
            assert get("Offline table", f"λ = {lam}", "cells equal to the published table") == 462825
    assert get("Acceptance", "Hairpin", "DMR") < get("Acceptance", "RTX (dup-ACK)", "DMR")
    assert get("Acceptance", "Hairpin", "BWC") < 0.5 * get("Acceptance", "FEC 100 % + RTX", "BWC")
    assert get("Acceptance", "Hairpin", "BWC") < get("Acceptance", "WebRTC_NOW + PTO", "BWC")
    lam = [get("λ sensitivity", f"λ = 1e-{e}", "DMR") for e in range(1, 8)]
    assert lam[0] > lam[-1]
    assert (out / "pareto.png").is_file()
    # Trace-driven runs on the synthetic sets; the replayed sessions are kept.
    for name in ("wired", "wifi", "cellular"):
        dmr = get(f"Trace set {name}", "Hairpin", "DMR (mean over sessions)")
        assert 0 <= dmr < 0.05
        assert len(list((out / "traces" / name).glob("session-*.tr"))) == 2


def test_repro_afr_runs_every_policy_on_every_category(repro_runs):
    """`rtclab repro afr`: calibration rows, every policy on the four synthetic categories, AFR
    below DropTail on the queue tail, the sweeps; a bad category or policy is named."""
    from rtclab import _core
    from rtclab.repro.afr import CATEGORIES, POLICIES

    _, _, rows = repro_runs.get("afr")
    q50 = {(x["experiment"].split()[1], x["variant"]): x["ours"] for x in rows if x["metric"] == "P(queue > 50 ms)"
           and x["experiment"].startswith("Category")}
    assert len(q50) == len(CATEGORIES) * len(POLICIES)
    for c in CATEGORIES:
        assert q50[(c, "AFR")] <= q50[(c, "DropTail")], c
    assert sum(q50[(c, "AFR")] for c in CATEGORIES) < sum(q50[(c, "DropTail")] for c in CATEGORIES)
    cal = {x["metric"]: x["ours"] for x in rows if x["experiment"].startswith("Calibration")}
    assert 10 < cal["network_mean_ms"] < 25 and 1.5 < cal["decode_mean_ms"] < 4.5
    with pytest.raises(ValueError, match="unknown client category"):
        _core.afr_run("linux-wired", "afr")
    with pytest.raises(ValueError, match="unknown AFR policy"):
        _core.afr_run("windows-wired", "afrr")
    with pytest.raises(ValueError, match="rho"):
        _core.afr_run("windows-wired", "afr-tx", rho=1.5)


def test_hairpin_table_command(cli, tmp_path):
    """`rtclab hairpin table` solves, checks and writes a table; `cell` names an off-grid input."""
    r = cli("hairpin", "table", "--out", tmp_path / "t")
    assert r.returncode == 0, r.stderr
    info = json.loads((tmp_path / "t" / "table.json").read_text())
    assert info["golden_vectors"] == {"matching": 60, "checked": 60}
    assert (tmp_path / "t" / "hairpin-table-coeff1e-04.bin").stat().st_size == 462825
    r = cli("hairpin", "cell", "--loss", "0.2", "--frame", "25", "--layers", "2", "--packets", "25")
    assert r.returncode == 0 and "9 parity packets" in r.stdout
    r = cli("hairpin", "cell", "--loss", "0.7", "--frame", "25", "--layers", "2", "--packets", "25")
    assert r.returncode == 2 and "outside the solved grid" in r.stderr
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    r = cli("hairpin", "table", "--out", mine)
    assert r.returncode == 2 and (mine / "notes.txt").read_text() == "keep"


def test_repro_gcc_writes_rows_and_report(cli, tmp_path, repro_runs):
    r, out, rows = repro_runs.get("gcc")
    assert rows and all({"experiment", "variant", "metric", "ours", "paper", "verdict"} <= row.keys() for row in rows)
    assert {row["verdict"] for row in rows} >= {"within tolerance", "not reproduced"}
    exps = {row["experiment"].split(" (")[0] for row in rows}
    assert {"staircase 500-2000 kbit/s", "constant capacity grid", "vs CUBIC, 2 Mbit/s, 100-300 s"} <= exps
    assert {row["variant"].split(" ")[0] for row in rows} >= {"gcc", "gcc_paper"}
    # The 2013 study's candidate causes, each at the three capacities it reports, and one tried
    # against CUBIC at 1 and 3 Mbit/s in both start orders.
    from rtclab.repro.gcc import CAUSES_2013, VS_CUBIC_CAUSES_2013

    causes = {(row["experiment"], row["variant"]) for row in rows if row["experiment"].startswith("2013 cause: two")}
    assert len(causes) == 3 * len(CAUSES_2013) and any("bursty, slow encoder" in v for _, v in causes)
    # ... and how often the first flow ends ahead at 3 Mbit/s (the study: always).
    ahead = [row for row in rows if row["experiment"].startswith("2013 cause: two") and row["metric"].startswith("runs with")]
    assert len(ahead) == len(CAUSES_2013) and all("3 Mbit/s" in row["experiment"] and 0 <= row["ours"] <= 1
                                                  for row in ahead)
    assert len([row for row in rows if row["experiment"].startswith("2013 cause: GCC vs CUBIC")]) == \
        4 * len(VS_CUBIC_CAUSES_2013)
    # The single-flow grid with an encoder given what Chromium gives its VP8, unpaced and paced;
    # utilization compared at the RTP level (the study's), the wire figure beside it.
    one = [row for row in rows if row["experiment"].startswith("2013 cause: one flow")]
    assert len({row["variant"] for row in one}) == 2 and all("encoder given 0.85" in row["variant"] for row in one)
    rtp = {row["variant"]: row["ours"] for row in rows
           if row["experiment"].startswith("2013: one flow") and row["metric"].startswith("utilization (RTP level), max")}
    wire = {row["variant"]: row["ours"] for row in rows
            if row["experiment"].startswith("2013: one flow") and row["metric"].startswith("utilization (wire), max")}
    assert rtp.keys() == wire.keys() and all(rtp[v] < wire[v] for v in rtp)
    assert any(row["variant"].startswith("gcc_paper 2013 Chrome") for row in rows)
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 5
    assert "ours" in r.stdout and "paper" in r.stdout
    r = cli("repro", "gcc", "--runs", 0, "--out", tmp_path / "x")
    assert r.returncode == 2 and not (tmp_path / "x").exists()
    # On a run store (the sweep machinery): the rows of a run without one; a second reproduction
    # runs nothing.
    stamps = lambda: {d.name: (d / "summary.json").stat().st_mtime_ns for d in (tmp_path / "store" / "runs").iterdir()}
    stored = None
    r = cli("repro", "gcc", "--runs", 1, "--out", tmp_path / "plain", "--no-progress", timeout=600)
    assert r.returncode == 0, r.stderr
    plain = json.loads((tmp_path / "plain" / "repro.json").read_text())
    for out in ("s1", "s2"):
        r = cli("repro", "gcc", "--runs", 1, "--out", tmp_path / out, "--store", tmp_path / "store", "--no-progress",
                timeout=600)
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / out / "repro.json").read_text()) == plain
        stored = stored or stamps()
    assert len(stored) > 20 and stamps() == stored


def test_repro_copa_writes_rows_and_report(repro_runs):
    _, out, rows = repro_runs.get("copa")
    assert rows and all({"experiment", "variant", "metric", "ours", "paper"} <= row.keys() for row in rows)
    exps = {row["experiment"].split(" (")[0] for row in rows}
    assert {"dynamic flows, 100 Mbit/s", "RTT fairness, 20 flows 15-300 ms", "one flow, 12 Mbit/s"} <= exps
    assert any(e.startswith("100-flow cause") for e in exps)
    assert all(row["ours"] is not None for row in rows)
    # The Jain gaps' experiments (issue 41): Linux receivers' delayed ACKs make CUBIC less fair,
    # and Copa's slot-length rows cover 1 s down to 100 ms.
    by = {(row["experiment"], row["variant"]): row["ours"] for row in rows}
    assert by[("dynamic flows: receivers", "cubic, Linux receivers (delayed ACKs)")] < \
        by[("dynamic flows, 100 Mbit/s (§5.1)", "cubic")] - 0.01
    assert {v for e, v in by if e == "dynamic flows: slot length"} == {f"copa, {w} ms slots" for w in (1000, 500, 200, 100)}
    assert by[("dynamic flows: slot length", "copa, 1000 ms slots")] == pytest.approx(
        by[("dynamic flows, 100 Mbit/s (§5.1)", "copa")], abs=1e-9)
    html = (out / "report.html").read_text()
    assert "Jain CDF" in html and html.count("data:image/png;base64,") >= 8


def test_repro_qlibra_writes_rows(repro_runs):
    _, _, rows = repro_runs.get("qlibra")
    experiments = {row["experiment"] for row in rows}
    assert len([e for e in experiments if e.startswith("exp ")]) == 4
    assert len([e for e in experiments if e.startswith("study: ")]) == 21
    assert all(row["ours"] is not None for row in rows)
    # The study's shares of one bottleneck add up to one.
    shares = [row["ours"] for row in rows if row["experiment"] == "study: loss 20 %" and row["metric"] == "share"]
    assert len(shares) == 3 and abs(sum(shares) - 1.0) < 0.01
    # The cause rows: under random loss QLibra is app-limited, so a higher app maximum shows.
    cause = {(row["variant"], row["metric"]): row["ours"] for row in rows
             if row["experiment"].startswith("cause: exp 3 loss")}
    rate = "sending rate kbit/s"
    assert cause[("app maximum 1200 kbit/s: qlibra", rate)] > cause[("app maximum 900 kbit/s (default): qlibra", rate)] + 100
    assert any(row["experiment"].startswith("cause: exp 3 cap") and row["variant"].startswith("control")
               for row in rows)
    # Exp 4's calibration rows: a Zoom-like model that never counts loss as congestion takes
    # more of the cap; every variant with QLibra and native Reno reports their rate ratio.
    exp4 = [row for row in rows if row["experiment"].startswith("cause: exp 4")]
    by = {(row["variant"], row["metric"]): row["ours"] for row in exp4}
    never = "Zoom-like: loss never congestion (250 ms, above the 200 ms buffer)"
    assert by[(f"{never}: zoom", rate)] > by[("defaults: zoom", rate)] + 200
    ratios = [row for row in exp4 if row["metric"] == "QLibra / native Reno rate"]
    assert len(ratios) == 4 and all(row["paper"] == "9.00" for row in ratios)


def test_repro_fairness_runs_the_study_matrix_with_repetitions_and_gap_experiments(repro_runs):
    """`rtclab repro fairness`: every condition of the study repeated (mean ± std), the start-order
    rows, Zoom's rendered frame rate, the gap experiments and the two figures."""
    from rtclab.repro.qlibra import STUDY

    _, out, rows = repro_runs.get("fairness")
    for label, *_ in STUDY:
        shares = [x for x in rows if x["experiment"] == f"study: {label}" and x["metric"] == "share"]
        assert [x["variant"] for x in shares] == ["zoom", "bilibili", "iperf"]
        assert abs(sum(x["ours"] for x in shares) - 1.0) < 0.01 and all("over 2 runs" in x["note"] for x in shares)
        fps = next(x for x in rows if x["experiment"] == f"study: {label}" and x["metric"].startswith("rendered"))
        assert 0 <= fps["ours"] <= 30.5
    # Zoom at 0.5 Mbit/s: self-congested, it shows fewer frames than at 8 Mbit/s.
    get = lambda exp, var, met: next(x["ours"] for x in rows
                                     if x["experiment"] == exp and x["variant"] == var and x["metric"] == met)
    assert get("study: bandwidth 0.5Mbps", "zoom", "rendered frame rate (fps)") < \
        get("study: bandwidth 8Mbps", "zoom", "rendered frame rate (fps)")
    orders = [x for x in rows if x["metric"] == "share ranking = start order"]
    assert len(orders) == 6 and all(x["ours"] in (0.0, 1.0) for x in orders)
    assert 0 <= get("study: start order", "all six", "orders ranked as started") <= 6
    gaps = {(x["experiment"], x["variant"]) for x in rows if x["experiment"].startswith("gap: ")}
    assert ("gap: buffer 64 BDP", "Bilibili pushing 0.5Mbps: iperf") in gaps
    assert ("gap: loss 1 %", "Zoom-like alone") in gaps
    # Less pushed by Bilibili, more left for iPerf in the deep buffer.
    assert get("gap: buffer 64 BDP", "Bilibili pushing 0.5Mbps: iperf", "share") > \
        get("study: buffer 64 BDP", "iperf", "share")
    for png in ("shares.png", "zoom_fps.png"):
        assert (out / png).stat().st_size > 10_000


def test_console_leads_media_flows_with_frame_delay_and_never_prints_missing_as_zero(cli, tmp_path):
    r = cli("run", "gcc-staircase", "--out", tmp_path / "o", "--no-plots")
    assert r.returncode == 0, r.stderr
    header = next(ln for ln in r.stdout.splitlines() if "media flow" in ln)
    assert "frame delay p50 ms" in header and "fps" in header and "qdelay" not in r.stdout
    row = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("0 gcc"))
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert f"{s['flows'][0]['media']['frame_delay_ms']['p50']:.1f}" in row
    import io
    from rtclab.cli import print_summary
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    s["fairness"]["jain"] = None
    s["link"]["queuing_delay_ms"]["p50"] = None
    buf = io.StringIO()
    print_summary(s, buf)
    assert "Jain n/a" in buf.getvalue() and "queuing delay p50 n/a" in buf.getvalue()


def test_a_result_folder_reruns_exactly_even_when_moved(cli, tmp_path):
    import shutil
    r = cli("run", "lte-trace", "--seed", "7", "--out", tmp_path / "a", "--no-plots")
    assert r.returncode == 0, r.stderr
    kept = (tmp_path / "a" / "scenario.toml").read_text()
    assert "seed = 7" in kept and "inputs/" in kept
    shutil.move(tmp_path / "a", tmp_path / "moved")
    r = cli("run", tmp_path / "moved" / "scenario.toml", "--out", tmp_path / "b", "--no-plots")
    assert r.returncode == 0, r.stderr

    def numbers(p):
        s = json.loads((p / "summary.json").read_text())
        # How it was started and from which text: the run, not its numbers.
        for k in ("wall_time_s", "scenario_source", "command_line", "scenario_text"):
            s.pop(k)
        for link in [s["link"], *s["links"]]:
            link.pop("capacity")  # names the trace file: traces/... vs inputs/...
        return s

    assert numbers(tmp_path / "moved") == numbers(tmp_path / "b")


def test_bench_process_measures_whole_runs(cli, tmp_path):
    """Whole `rtclab run` processes, timed and with their peak memory (figures, no thresholds:
    those are benchmarks, docs/benchmarks.md); ns-3 only when its program is given."""
    r = cli("bench", "process", "--repeat", "1", "--out", tmp_path / "b", timeout=300)
    assert r.returncode == 0, r.stderr
    b = json.loads((tmp_path / "b" / "bench.json").read_text())
    for key in ("rtclab_no_plots", "rtclab_plots"):
        assert b[key]["wall_s"] > 0 and b[key]["peak_rss_mib"] > 5, b[key]
    assert "ns3" not in b and "ratios" not in b and "htsim" not in b
    f = b["flows_1000"]
    assert f["flows"] == 1000 and 0 < f["after_loop_share"] < 1 and 0 < f["loop_share"] < 1
    ph = f["phases"]
    assert abs(sum(ph[k] for k in ("start_up_s", "set_up_s", "loop_s", "after_loop_s")) - ph["process_s"]) < 1e-6
    r = cli("bench", "process", "--ns3", tmp_path / "nope")
    assert r.returncode == 2 and "bench/ns3/build-optimized.sh" in r.stderr
    r = cli("bench", "sim", "--htsim", tmp_path / "nope")
    assert r.returncode == 2 and "--htsim" in r.stderr
    r = cli("bench", "process", "--instructions")
    assert r.returncode == 2 and "needs `rtclab bench process --htsim PROGRAM`" in r.stderr


def test_bench_process_pairs_rtclab_with_the_reference_programs(tmp_path):
    """The pairing and the ratios, with stand-ins that print what bench/ns3 and bench/htsim's
    programs print (the real ones are built on request: `make bench-ns3`)."""
    from rtclab.bench_process import bench_process

    ns3 = tmp_path / "ns3"
    ns3.write_text('#!/bin/sh\nsleep 0.5\necho \'{"delivered_packets": 497247, "loop_wall_s": 0.5}\'\n')
    htsim = tmp_path / "htsim"
    htsim.write_text("#!/bin/sh\necho flows 10 secs 60.0 delivered_packets 497964 events 1499932 utilization 0.9959\n")
    for p in (ns3, htsim):
        p.chmod(0o755)
    b = bench_process(ns3=str(ns3), htsim=str(htsim), repeat=2, progress=False, flows=20)
    assert b["ns3"]["wall_s"] >= 0.5 and b["ns3"]["output"]["delivered_packets"] == 497247
    assert b["ratios"]["no_plots_speedup"] == pytest.approx(b["ns3"]["wall_s"] / b["rtclab_no_plots"]["wall_s"])
    h = b["htsim"]
    assert h["htsim_delivered_packets"] == 497964 and h["rtclab_delivered_packets"] > 400_000
    assert h["rtclab_events_per_packet"] > 2 and h["htsim_events_per_packet"] == pytest.approx(1499932 / 497964)
    assert len(h["pairs"]) == 2 and h["cpu_ratio_paired_median"] > 0
    assert b["flows_1000"]["flows"] == 20


def test_an_emulation_that_lost_cpu_time_to_the_hypervisor_says_so(capsys):
    """A run whose VM lost 3 % or more of its CPU time (steal) gets a note naming the share and
    the release error; a quiet run, an unmeasured share and a simulator run get none."""
    from rtclab.cli import _warn_if_host_stole_time

    _warn_if_host_stole_time({"emulator": {"host_steal_percent": 6.4, "release_error_us": {"p99": 2154.0}}})
    err = capsys.readouterr().err
    assert "hypervisor took 6.4 %" in err and "p99 2154 us" in err
    for quiet in ({"emulator": {"host_steal_percent": 0.5, "release_error_us": {"p99": 120.0}}},
                  {"emulator": {"host_steal_percent": None, "release_error_us": {"p99": 120.0}}},
                  {"emulator": None}):
        _warn_if_host_stole_time(quiet)
    assert capsys.readouterr().err == ""


def test_repro_metis_runs_in_full_on_the_shipped_data(repro_runs):
    """`rtclab repro metis` from a fresh clone: the Pensieve model and the Norway traces (teacher,
    held-out set) and every wireless-zhuge family (resampling) come from rtclab/data, with no
    environment variable and nothing beside the checkout."""
    _, _, rows = repro_runs.get("metis")  # run without any RTCLAB_* variable
    resampling = {x["variant"] for x in rows if x["experiment"].startswith("Resampling")}
    from rtclab.repro.metis import FAMILIES

    assert resampling == {"norway", "all datasets", *FAMILIES}
    noise = [x for x in rows if x["metric"].endswith("(noise)")]
    assert {x["variant"] for x in noise} == {"norway", *FAMILIES} and all(x["ours"] >= 0 for x in noise)
    teachers = [x for x in rows if x["experiment"].startswith("Teachers and baselines on the 29 held-out")]
    assert len(teachers) == 3 and all(x["ours"] is not None for x in teachers)
    # Fig 5.6: every teacher × QoE metric × dataset, and the shares
    cells = {x["variant"] for x in rows if x["experiment"].startswith("Performance retention: tree")}
    assert cells == {f"{t}, {q} QoE, {d}" for t in ("pensieve", "robustmpc") for q in ("lin", "log", "hd")
                     for d in ("norway", *FAMILIES)}
    shares = [x for x in rows if x["experiment"].startswith("Performance retention: share")]
    assert [x["variant"] for x in shares] == ["pensieve", "robustmpc", "all"]
    assert all(0 <= x["ours"] <= 1 and x["verdict"] for x in shares)
    design = [x for x in rows if x["experiment"].startswith("Design case")]
    assert [x["variant"] for x in design] == ["modified / original", "modified vs original"]
    assert design[0]["ours"] is not None
    # AuTO: every policy's FCT, the three tree / DNN pairs, conversion time, LIME/LEMNA on the lRLA
    auto = [x for x in rows if x["experiment"].startswith("AuTO on rtclab's datacenter fabric")]
    from rtclab.metis.autorun import POLICY_NAMES

    assert len([x for x in auto if x["metric"] == "mean FCT (ms)"]) == len(POLICY_NAMES)
    pairs = [x for x in auto if x["metric"] in ("mean FCT ratio", "p99 FCT ratio")]
    assert len(pairs) == 6 and all(x["verdict"] for x in pairs)
    assert any(x["metric"] == "conversion time (s)" for x in auto)
    lime = [x for x in rows if x["experiment"].startswith("Fidelity to AuTO's lRLA")]
    assert any(x["metric"] == "baseline / Metis error rate" for x in lime)


def test_run_timings_name_every_phase(cli, tmp_path, good_scenario):
    stamps = tmp_path / "stamps.json"
    env = dict(os.environ, RTCLAB_TIMINGS=str(stamps))
    r = cli("run", good_scenario, "--out", tmp_path / "res", "--no-plots", "--timings", env=env)
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stderr.splitlines() if x.startswith("timings: ")]
    assert len(line) == 1, r.stderr
    for phase in ("start-up", "set-up", "simulation", "results", "files", "console", "total"):
        assert phase in line[0]
    s = json.loads(stamps.read_text())
    keys = ["main", "loop_start", "loop_end", "finished", "files", "exit"]
    assert list(s) == keys
    assert all(s[a] <= s[b] for a, b in zip(keys, keys[1:]))


def test_the_htsim_matched_workload_is_the_one_in_bench_htsim():
    """`rtclab bench process` carries the htsim-matched scenario in the package (a user's install
    has no bench/); bench/htsim/dumbbell-newreno.toml is the same scenario for run_toml and
    callgrind by hand. They must not drift apart."""
    import tomllib

    from rtclab.bench_process import HTSIM_MATCHED

    repo = Path(__file__).resolve().parents[1]
    on_disk = tomllib.loads((repo / "bench" / "htsim" / "dumbbell-newreno.toml").read_text())
    on_disk.pop("description")
    assert tomllib.loads(HTSIM_MATCHED) == on_disk
