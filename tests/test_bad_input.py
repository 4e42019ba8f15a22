"""Every bad input: one clear message naming the field path, the value and what is accepted;
exit status 2; no output directory; an earlier result is never overwritten."""

import json

import pytest

from conftest import GOOD

BAD = [
    # (what, replace this, with this, words the message must contain)
    ("unknown key", "capacity =", "capacityy =", ["link.capacityy", "unknown key `capacityy`", "accepted keys", "capacity"]),
    ("wrong units", '"10Mbps"', '"5 Mbit"', ["link.capacity", '"5 Mbit"', "Mbps"]),
    ("zero capacity", '"10Mbps"', '"0Mbps"', ["link.capacity", "positive"]),
    ("negative capacity", '"10Mbps"', '"-5Mbps"', ["link.capacity", "negative"]),
    ("start after end", "count = 2", 'count = 2\nstart = "9s"', ["flows[0].start", "9s", "ends at 5s"]),
    ("unknown algorithm", 'cc = "cubic"', 'cc = "cubik"', ["flows[0].cc", "cubik", "cubic", "reno"]),
    ("bare number", 'rtt = "40ms"', "rtt = 40", ["flows[0].rtt", "40", "ms"]),
    ("missing trace", '"10Mbps"', '{ trace = "nope.up", format = "mahimahi" }', ["link.capacity.trace", "nope.up"]),
    ("bad probability", 'queue = { limit = "1bdp" }', 'loss = { model = "iid", rate = 1.5 }', ["link.loss.rate", "1.5", "0.0..=1.0"]),
    ("toml syntax", "[link]", "[link", ["line 4:", "invalid TOML"]),
    ("absurd capacity", '"10Mbps"', '"1000000Gbps"', ["link.capacity", "1000000Gbps", "10000 Gbit/s"]),
    ("unknown queue kind", 'limit = "1bdp"', 'kind = "fq_kodel"', ["link.queue.kind", "fq_kodel", "droptail", "codel"]),
    ("negative count", "count = 2", "count = -1", ["flows[0].count", "whole number from 1 to 10000", "got -1"]),
    ("fractional seed", "[link]", "seed = 1.5\n[link]", ["seed", "whole number", "got 1.5"]),
    ("string for a number", "count = 2", 'count = "two"', ["flows[0].count", "whole number", '"two"']),
    ("duplicate key", 'rtt = "40ms"', 'rtt = "40ms"\nrtt = "50ms"', ["line 11", "duplicate key `rtt`"]),
    ("unquoted string", 'cc = "cubic"', "cc = cubic", ["line 9", 'strings are quoted in TOML: cc = "cubic"']),
    ("missing capacity", 'capacity = "10Mbps"', "", ["link.capacity", "required"]),
    ("huge packet limit", 'limit = "1bdp"', 'limit = "1000000000000pkt"', ["link.queue.limit", "at most 4294967295 packets"]),
    ("table for a list", "[[flows]]", "[flows]", ["flows", "must be a list, got a table"]),
    ("queue parameter out of range", 'limit = "1bdp"', 'kind = "codel", interval_ms = 0', ["link.queue.interval_ms", "0.1..=100000"]),
]


@pytest.mark.parametrize("what,old,new,words", BAD, ids=[b[0] for b in BAD])
def test_bad_scenario(cli, tmp_path, what, old, new, words):
    assert old in GOOD
    p = tmp_path / "bad.toml"
    p.write_text(GOOD.replace(old, new, 1))
    out = tmp_path / "out"
    r = cli("run", p, "--out", out)
    assert r.returncode == 2, (what, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    msg = lines[0]
    assert msg.startswith("error: ") and str(p) in msg
    for w in words:
        assert w in msg, (w, msg)
    assert not out.exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.toml"]
    # validate agrees
    v = cli("validate", p)
    assert v.returncode == 2 and words[0] in v.stderr


def test_malformed_trace_names_file_and_line(cli, tmp_path):
    (tmp_path / "t.up").write_text("1\n2\n3\nfour\n5\n")
    p = tmp_path / "s.toml"
    p.write_text(GOOD.replace('"10Mbps"', '{ trace = "t.up", format = "mahimahi" }'))
    r = cli("run", p, "--out", tmp_path / "o")
    assert r.returncode == 2
    assert "t.up:4:" in r.stderr and "four" in r.stderr


def test_failing_run_keeps_earlier_result(cli, tmp_path, good_scenario):
    out = tmp_path / "o"
    assert cli("run", good_scenario, "--out", out, "--no-plots").returncode == 0
    before = (out / "summary.json").read_text()
    (out / "my-notes.txt").write_text("keep me")
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace('"10Mbps"', '"0Mbps"'))
    assert cli("run", bad, "--out", out).returncode == 2
    assert (out / "summary.json").read_text() == before
    assert (out / "my-notes.txt").read_text() == "keep me"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.toml", "o", "small.toml"]


def test_unknown_scenario_name(cli, tmp_path):
    r = cli("run", "no-such-scenario", "--out", tmp_path / "o")
    assert r.returncode == 2
    assert "no-such-scenario" in r.stderr and "rtclab list" in r.stderr


def test_out_is_a_file(cli, tmp_path, good_scenario):
    f = tmp_path / "file"
    f.write_text("x")
    r = cli("run", good_scenario, "--out", f)
    assert r.returncode == 2 and "not a directory" in r.stderr
    assert f.read_text() == "x"


BYTE_RATE = """
duration = "3s"
[link]
capacity = "2MBps"
[[flows]]
kind = "tcp"
rtt = "20ms"
"""


def test_negative_seed(cli, good_scenario, tmp_path):
    r = cli("run", good_scenario, "--seed", -1, "--out", tmp_path / "o")
    assert r.returncode == 2 and "--seed" in r.stderr


def test_seed_too_large_is_refused_cleanly(cli, good_scenario, tmp_path):
    r = cli("run", good_scenario, "--seed", "99999999999999999999999", "--out", tmp_path / "o")
    assert r.returncode == 2 and "--seed" in r.stderr and "Traceback" not in r.stderr
    import rtclab
    with pytest.raises(ValueError, match="seed must be a whole number"):
        rtclab.run(good_scenario, seed=2**64)


def test_config_error_names_its_key(good_scenario):
    import rtclab
    text = good_scenario.read_text().replace('kind = "tcp"', 'kind = "tcp"\ncolour = "red"', 1)
    with pytest.raises(rtclab.ConfigError) as e:
        rtclab.run(text, progress=False)
    assert e.value.path == "flows[0].colour"
    assert "colour" in e.value.message and str(e.value).startswith("flows[0].colour")
    assert "(" not in str(e.value)[:1], "not an argument tuple"


def test_byte_rates_mean_bytes(tmp_path):
    import rtclab
    r = rtclab.run(BYTE_RATE, progress=False)
    # 2 MB/s = 16 Mbit/s (read as 2 Mbit/s before, an 8x error).
    assert r.summary["link"]["delivered_mbps"] > 10


def test_summary_written_is_valid_json(cli, tmp_path, good_scenario):
    r = cli("run", good_scenario, "--out", tmp_path / "o", "--no-plots")
    assert r.returncode == 0
    json.loads((tmp_path / "o" / "summary.json").read_text())


MEDIA = """
duration = "5s"
[link]
capacity = "2Mbps"
[[flows]]
kind = "media"
rtt = "40ms"
"""


@pytest.mark.parametrize(
    "extra,path,word",
    [
        ('media = { feedback = "remb" }', "flows[0].media.feedback", "twcc"),
        ('cc = "gcc_paper"\nmedia = { feedback = "twcc" }', "flows[0].media.feedback", "remb"),
        ('cc = "cubic"\nmedia = { feedback = "remb" }', "flows[0].media.feedback", "rfc8888"),
        ('cc = "bbr"\nmedia = { threshold = 20.0 }', "flows[0].media", "GCC only"),
        ('media = { fps = 0.0 }', "flows[0].media.fps", "(0, 240]"),
        # ECN on media needs RFC 8888, the only feedback that reports it back.
        ('media = { ecn = "ect1", feedback = "twcc" }', "flows[0].media.ecn", "rfc8888"),
        ('cc = "gcc_paper"\nmedia = { ecn = "ect0" }', "flows[0].media.ecn", "rfc8888"),
        ('media = { ecn = "ect2" }', "flows[0].media.ecn", "ect1"),
        ('media = { feedback_cadence = "scream" }', "flows[0].media.feedback_cadence", "rfc8888"),
        ('cc = "scream"\nparams = { max_window_headroom = 50 }', "flows[0].params.max_window_headroom", "20"),
    ],
)
def test_media_controller_and_feedback_pairing(cli, tmp_path, extra, path, word):
    p = tmp_path / "m.toml"
    p.write_text(MEDIA + extra + "\n")
    r = cli("run", p, "--out", tmp_path / "o")
    assert r.returncode == 2, r.stdout
    assert path in r.stderr and word in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_media_flow_runs(cli, tmp_path):
    p = tmp_path / "m.toml"
    p.write_text(MEDIA)
    r = cli("run", p, "--out", tmp_path / "o", "--no-plots")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    f = s["flows"][0]
    assert f["cc"] == "gcc" and f["kind"] == "media"
    assert f["media"]["frames"] > 100 and f["media"]["frame_delay_ms"]["p50"] > 20


MEDIA_GCC = """
duration = "5s"
[link]
capacity = "2Mbps"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "50ms"
media = { start_bitrate = "300kbps" }
"""

BAD_MEDIA = [
    ("controller parameter range", "start_bitrate", "gcc = { beta = 1.5 }, start_bitrate", ["flows[0].media.gcc.beta", "1.5", "0.05..=0.99"]),
    ("unknown controller parameter", "start_bitrate", "gcc = { betta = 0.5 }, start_bitrate", ["flows[0].media.gcc.betta", "unknown parameter", "beta"]),
    ("feedback pairing", 'cc = "gcc"', 'cc = "gcc_paper"\nmedia.feedback = "rfc8888"', ["flows[0].media.feedback", "rfc8888", "remb"]),
    ("missing frame-size file", "start_bitrate", 'frame_sizes = "nope.txt", start_bitrate', ["flows[0].media.frame_sizes", "nope.txt"]),
]


@pytest.mark.parametrize("what,old,new,words", BAD_MEDIA, ids=[b[0] for b in BAD_MEDIA])
def test_bad_media_scenario(cli, tmp_path, what, old, new, words):
    assert old in MEDIA_GCC
    text = MEDIA_GCC.replace(old, new, 1)
    if what == "feedback pairing":
        text = text.replace('\nmedia.feedback = "rfc8888"', "").replace('media = { start_bitrate = "300kbps" }', 'media = { feedback = "rfc8888", start_bitrate = "300kbps" }')
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = cli("validate", p)
    assert r.returncode == 2, (what, r.stdout, r.stderr)
    msg = r.stderr.strip().splitlines()[0]
    for w in words:
        assert w in msg, (w, msg)


def test_runs_beyond_the_cost_limits_need_force(cli, tmp_path):
    scn = tmp_path / "huge.toml"
    scn.write_text('duration = "100000000s"\n[link]\ncapacity = "10Mbps"\n[[flows]]\nkind = "tcp"\nrtt = "40ms"\n')
    r = cli("validate", scn)
    assert r.returncode == 0 and "packet-hops" in r.stdout and "--force" in r.stderr
    r = cli("run", scn, "--out", tmp_path / "o")
    assert r.returncode == 2 and "--force" in r.stderr
    assert not (tmp_path / "o").exists()
    import rtclab
    with pytest.raises(rtclab.ConfigError, match="very large"):
        rtclab.run(scn, progress=False)


def test_device_files_are_not_traces(cli, tmp_path):
    scn = tmp_path / "zero.toml"
    scn.write_text('duration = "5s"\n[link]\ncapacity = { trace = "/dev/zero", format = "mahimahi" }\n'
                   '[[flows]]\nkind = "tcp"\nrtt = "40ms"\n')
    r = cli("validate", scn)
    assert r.returncode == 2 and "not a regular file" in r.stderr and "link.capacity.trace" in r.stderr


def test_binary_scenario_file_is_named_not_a_codec_trace(cli, tmp_path):
    p = tmp_path / "garbage.toml"
    p.write_bytes(b"\x00\x01name = \xff\xfe garbage")
    r = cli("run", p, "--out", tmp_path / "o")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not a scenario" in lines[0] and "UTF-8" in lines[0], r.stderr
    assert "codec" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("old,new,words", [
    ('duration = "5s"', 'duration = "1ns"', ["duration", "shorter than one time-series bin", "no result"]),
    ('duration = "5s"', 'duration = "5s"\n[metrics]\nbin = "6s"', ["duration", "shorter than one time-series bin"]),
], ids=["1ns", "bin longer than the run"])
def test_runs_that_cannot_have_a_result_are_errors(cli, tmp_path, old, new, words):
    p = tmp_path / "s.toml"
    p.write_text(GOOD.replace(old, new, 1))
    r = cli("run", p, "--out", tmp_path / "o")
    assert r.returncode == 2 and not (tmp_path / "o").exists()
    for w in words:
        assert w in r.stderr, (w, r.stderr)


def test_meaningless_but_valid_scenarios_warn_and_still_run(cli, tmp_path):
    import warnings

    import rtclab
    from rtclab.runner import ScenarioWarning

    text = GOOD.replace('rtt = "40ms"', 'rtt = "3s"')
    p = tmp_path / "s.toml"
    p.write_text(text)
    v = cli("validate", p)
    assert v.returncode == 0 and "fits fewer than 4 times" in v.stderr
    r = cli("run", p, "--out", tmp_path / "o", "--no-plots")
    assert r.returncode == 0
    assert r.stderr.count("warning: ") == 2 and "round trip (3s)" in r.stderr  # one per flow
    assert "Traceback" not in r.stderr and "UserWarning" not in r.stderr
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rtclab.run(text)
    assert [w.category for w in seen] == [ScenarioWarning, ScenarioWarning]
    assert rtclab.validate(text)["warnings"] and not rtclab.validate(GOOD)["warnings"]


def test_a_run_past_its_memory_bound_stops_cleanly(cli, tmp_path):
    """The bound is checked between chunks of the run: a run that outgrows it stops with one
    message (not an OOM kill) and writes nothing."""
    p = tmp_path / "s.toml"
    p.write_text(GOOD)
    r = cli("run", p, "--out", tmp_path / "o", "--max-memory", "1M")
    assert r.returncode == 2, r.stderr
    assert "memory reached" in r.stderr and "past the bound of 0.00 GiB" in r.stderr and "nothing was written" in r.stderr
    assert not (tmp_path / "o").exists() and "Traceback" not in r.stderr
    r = cli("run", p, "--out", tmp_path / "o", "--max-memory", "lots")
    assert r.returncode == 2 and "invalid memory size 'lots'" in r.stderr
    # Generous bounds change nothing.
    assert cli("run", p, "--out", tmp_path / "o2", "--no-plots", "--max-memory", "64GiB").returncode == 0
