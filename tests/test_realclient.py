"""`rtclab realclient`: the per-phase figures on hand-made series (always), and one real aiortc
call and one real pion call through the emulator (in CI, where `make test` installs aiortc,
Go is on the machine and it runs as root, or with RTCLAB_REALCLIENT=1)."""

import math
import os

import numpy as np
import pandas as pd
import pytest
from rtclab.realclient import (
    _client_series,
    _metrics,
    _phases,
    _with_cc,
    available,
    compare,
    compare_aiortc,
    table,
)

OPT_IN = os.environ.get("RTCLAB_REALCLIENT") == "1" or os.environ.get("CI") == "true"


def _one_call(client: str, tmp_path, capture: bool = True) -> dict:
    """One real call on `step` (and the simulator's two), as {(client, phase, metric): value}."""
    rows = compare(client, "step", runs=1, out=tmp_path / "out", progress=False, capture=capture)
    print(table(rows))
    return {(r["client"], r["phase"], r["metric"]): r["value"] for r in rows}


def _link(caps, bin_s=0.2):
    t = np.arange(1, len(caps) + 1) * bin_s
    return pd.DataFrame({"time_s": t, "capacity_mbps": caps, "queue_delay_ms_mean": np.linspace(0, 10, len(caps))})


def test_phases_split_at_capacity_changes():
    link = _link([1.0] * 10 + [0.5] * 10 + [1.0] * 10)
    assert [(round(a, 1), round(b, 1), c) for a, b, c in _phases(link)] == [(0.0, 2.0, 1.0), (2.0, 4.0, 0.5), (4.0, 6.0, 1.0)]


def test_reaction_and_recovery_times():
    link = _link([1.0] * 10 + [0.5] * 10 + [1.0] * 10)
    t = link["time_s"].to_numpy()
    # target 0.9, falls to 0.45 at 2.6 s (0.6 s after the drop), back to 0.85 at 5.0 s
    target = np.where(t < 2.5, 0.9, np.where(t < 4.9, 0.45, 0.85))
    rows = _metrics({"time_s": t, "target_mbps": target, "sending_mbps": target}, link)
    by = {(r["phase"], r["metric"]): r["value"] for r in rows}
    assert by[("from 2 s at 0.5 Mbit/s", "reaction time s")] == pytest.approx(0.6)
    assert by[("from 4 s at 1 Mbit/s", "recovery time s (80 %)")] == pytest.approx(1.0)
    assert by[("from 0 s at 1 Mbit/s", "utilization")] == pytest.approx(0.9)
    # never reaching the new capacity is "not reached" (NaN), not zero
    rows = _metrics({"time_s": t, "target_mbps": np.full_like(t, 0.9), "sending_mbps": target}, link)
    assert math.isnan({(r["phase"], r["metric"]): r["value"] for r in rows}[("from 2 s at 0.5 Mbit/s", "reaction time s")])
    assert "aiortc" not in table([{"client": "gcc", "run": 1, **r} for r in rows])


def test_a_logged_encoder_target_gets_its_row(tmp_path):
    log = tmp_path / "run1-sender.csv"
    log.write_text("time_s,target_bps,bytes_sent,encoder_target_bps\n0.2,1000000,0,850000\n0.4,1000000,25000,None\n"
                   "0.6,1000000,50000,800000\n")
    series = _client_series(log)
    assert np.isnan(series["encoder_target_mbps"][1])  # a stack that gave none: NaN, not an error
    rows = _metrics(series, _link([1.0] * 3))
    by = {r["metric"]: r["value"] for r in rows}
    assert by["encoder target Mbit/s"] == pytest.approx(0.825)
    assert by["sending Mbit/s"] == pytest.approx(1.0)
    # a log without the column (aiortc, pion) has no such row
    log.write_text("time_s,target_bps,bytes_sent\n0.2,1000000,0\n0.4,1000000,25000\n")
    assert "encoder target Mbit/s" not in {r["metric"] for r in _metrics(_client_series(log), _link([1.0] * 3))}


def test_link_figures_cover_only_the_span_the_client_logged():
    link = _link([1.0] * 30)
    link["delivered_mbps"] = np.where(link["time_s"] <= 2.0, 0.0, 0.8)  # nothing until the call connects
    link["queue_delay_ms_mean"] = np.where(link["time_s"] <= 2.0, 0.0, 10.0)
    t = link["time_s"].to_numpy()
    late = t > 2.0  # a browser logs from 2 s on
    rows = _metrics({"time_s": t[late], "target_mbps": np.full(late.sum(), 0.8),
                     "sending_mbps": np.full(late.sum(), 0.77)}, link)
    by = {r["metric"]: r["value"] for r in rows}
    assert by["link utilization (wire bytes)"] == pytest.approx(0.8)  # not diluted by the 2 s before
    assert by["queue p50 ms"] == pytest.approx(10.0)
    assert by["utilization"] == pytest.approx(0.77)


def test_a_scenario_needs_exactly_one_media_flow():
    with pytest.raises(ValueError, match="exactly one flow"):
        _with_cc('name = "x"\nduration = "5s"\n[link]\ncapacity = "1Mbps"\n[[flows]]\nkind = "tcp"\nrtt = "40ms"\n', "gcc")
    with pytest.raises(ValueError, match="unknown scenario"):
        compare_aiortc("no-such-scenario")


@pytest.mark.skipif(not OPT_IN or available("aiortc") is not None,
                    reason="opt-in (RTCLAB_REALCLIENT=1 or CI=true), needs root and aiortc")
def test_aiortc_call_through_the_emulator(tmp_path):
    by = _one_call("aiortc", tmp_path, capture=False)
    # the real client follows the step down: its target ends below the reduced capacity
    assert by[("aiortc", "from 20 s at 0.6 Mbit/s", "target Mbit/s")] < 0.7
    assert (tmp_path / "out" / "realclient.json").exists()


@pytest.mark.skipif(not OPT_IN or available("pion") is not None,
                    reason="opt-in (RTCLAB_REALCLIENT=1 or CI=true), needs root and Go")
def test_pion_call_through_the_emulator(tmp_path):
    by = _one_call("pion", tmp_path)
    # pion's send-side GCC follows the step down and its packets are media (no FEC, no padding)
    assert by[("pion", "from 20 s at 0.6 Mbit/s", "target Mbit/s")] < 0.7
    assert by[("pion", "whole run", "media bytes share")] > 0.9
    assert (tmp_path / "out" / "run1-sent.pcap").exists()


@pytest.mark.skipif(not OPT_IN or available("chromium") is not None,
                    reason="opt-in (RTCLAB_REALCLIENT=1 or CI=true), needs root, chromium and chromium-driver")
def test_chromium_call_through_the_emulator(tmp_path):
    by = _one_call("chromium", tmp_path)
    # libwebrtc's estimate follows the step down; its traffic is media, retransmissions and probes
    assert by[("chromium", "from 20 s at 0.6 Mbit/s", "target Mbit/s")] < 0.7
    shares = [by[("chromium", "whole run", f"{c} bytes share")] for c in ("media", "fec", "rtx", "padding")]
    assert sum(shares) == pytest.approx(1.0) and shares[0] > 0.5


def test_unknown_clients_and_a_missing_pion_peer_are_named(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="unknown client 'chrome'"):
        compare("chrome")
    monkeypatch.setenv("RTCLAB_PION_PEER", str(tmp_path / "nope"))
    assert "not an executable file" in available("pion")


def test_a_trace_is_one_whole_run_phase():
    rng = np.random.default_rng(1)
    link = _link(list(1.0 + rng.random(50)))
    t = link["time_s"].to_numpy()
    rows = _metrics({"time_s": t, "target_mbps": np.full_like(t, 0.75), "sending_mbps": np.full_like(t, 0.75)}, link,
                    duration_s=8.0)
    phases = {r["phase"] for r in rows}
    assert len(phases) == 1 and next(iter(phases)).startswith("whole run")
    assert not any("time" in r["metric"] for r in rows)


def test_scenario_durations_in_any_unit():
    from rtclab.realclient import _duration_s

    assert _duration_s('duration = "1.5min"') == 90.0
    assert _duration_s('duration = "2500ms"') == 2.5
    with pytest.raises(ValueError, match="not a duration"):
        _duration_s('duration = "soon"')


def test_the_no_nack_experiment_strips_generic_nack_but_keeps_pli():
    from rtclab.realclient.chromium_peer import without_nack

    sdp = ("a=rtcp-fb:96 goog-remb\r\na=rtcp-fb:96 transport-cc\r\na=rtcp-fb:96 nack\r\n"
           "a=rtcp-fb:96 nack pli\r\na=rtcp-fb:98 nack\r\na=rtpmap:97 rtx/90000\r\n")
    assert without_nack(sdp) == ("a=rtcp-fb:96 goog-remb\r\na=rtcp-fb:96 transport-cc\r\n"
                                 "a=rtcp-fb:96 nack pli\r\na=rtpmap:97 rtx/90000\r\n")


def test_the_chromium_log_capture_names_a_new_file_per_peer_and_run(tmp_path, monkeypatch):
    from rtclab.realclient import chromium_peer

    monkeypatch.setattr(chromium_peer, "STDERR_PREFIX", "")
    assert chromium_peer.stderr_path("offer") is None
    monkeypatch.setattr(chromium_peer, "STDERR_PREFIX", str(tmp_path / "chr"))
    assert chromium_peer.stderr_path("offer") == tmp_path / "chr-offer.log"
    assert chromium_peer.stderr_path("offer") == tmp_path / "chr-offer-2.log"
    (tmp_path / "chr-answer.log").write_text("a user's file")
    assert chromium_peer.stderr_path("answer") == tmp_path / "chr-answer-2.log"
    assert (tmp_path / "chr-answer.log").read_text() == "a user's file"
    monkeypatch.setattr(chromium_peer, "STDERR_PREFIX", str(tmp_path / "no-such-dir" / "chr"))
    with pytest.raises(SystemExit, match="cannot create .*no-such-dir"):
        chromium_peer.stderr_path("offer")


def test_the_2013_study_cells_are_built_in():
    import tomllib

    from rtclab.realclient import _duration_s, _scenario_text

    for n in (1, 2):
        text = _with_cc(_scenario_text(f"fhmn2013-{n}m"), "gcc")
        d = tomllib.loads(text)
        assert (d["link"]["capacity"], d["link"]["queue"]["limit"], d["flows"][0]["rtt"]) == (f"{n}Mbps", "60KB", "50ms")
        assert d["flows"][0]["cc"] == "gcc" and _duration_s(text) == 150.0
