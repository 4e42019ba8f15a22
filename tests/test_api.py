import pandas as pd
import pytest

import rtclab

LOSSY = {
    "duration": "8s",
    "link": {"capacity": "20Mbps", "queue": {"limit": "50ms"}, "loss": {"model": "iid", "rate": 0.01}},
    "flows": [{"kind": "tcp", "cc": "cubic", "rtt": "30ms", "count": 2}, {"kind": "cbr", "rate": "2Mbps", "rtt": "10ms"}],
}


def test_run_returns_summary_and_dataframe():
    res = rtclab.run(LOSSY, seed=5)
    summary, ts = res
    assert summary["seed"] == 5 and summary["engine"] == "sim"
    assert isinstance(ts, pd.DataFrame) and len(ts) > 0
    assert set(ts["flow"].unique()) == {0, 1, 2}
    assert res.link["capacity_mbps"].eq(20.0).all()
    # 8 s in 200 ms bins
    assert len(res.link) == 40


def test_same_seed_identical_different_seed_not():
    a = rtclab.run(LOSSY, seed=11)
    b = rtclab.run(LOSSY, seed=11)
    c = rtclab.run(LOSSY, seed=12)
    strip = lambda s: {k: v for k, v in s.items() if k != "wall_time_s"}  # noqa: E731
    assert strip(a.summary) == strip(b.summary)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.link, b.link)
    assert strip(a.summary) != strip(c.summary)


def test_config_error_from_api():
    bad = dict(LOSSY, flows=[{"kind": "tcp", "cc": "bbq", "rtt": "30ms"}])
    with pytest.raises(rtclab.ConfigError) as e:
        rtclab.run(bad)
    assert e.value.path == "flows[0].cc" and "bbq" in str(e.value)
    assert e.value.args == (str(e.value),), "one clean message, not a tuple"


def test_interrupt_between_chunks_propagates():
    calls = []

    def stop(now, end):
        calls.append(now)
        raise KeyboardInterrupt

    big = dict(LOSSY, duration="120s", link={"capacity": "1Gbps"})
    with pytest.raises(KeyboardInterrupt):
        rtclab.run(big, on_progress=stop)
    assert len(calls) == 1 and 0 < calls[0] < 120


def test_load_scenario_kinds(tmp_path):
    assert rtclab.load_scenario("default").origin == "builtin:default"
    assert rtclab.load_scenario(LOSSY).format == "json"
    with pytest.raises(FileNotFoundError):
        rtclab.load_scenario("definitely-not-here")
