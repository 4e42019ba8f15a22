import json

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


def test_save_and_report_write_what_the_cli_writes(tmp_path):
    import json

    result = rtclab.run("gcc-staircase")
    out = rtclab.save(result, tmp_path / "saved")
    assert json.loads((out / "summary.json").read_text())["seed"] == result.summary["seed"]
    for f in ("flows.parquet", "link.parquet", "interruptions.parquet", "distributions.parquet", "scenario.toml",
              "report.html", "frame_delay.png"):
        assert (out / f).is_file(), f
    page = rtclab.report(result, tmp_path / "rep")
    assert page.name == "report.html" and "What the viewers saw" in page.read_text()
    assert not (tmp_path / "rep" / "summary.json").exists()
    # The same rules as --out: a folder rtclab did not write is never replaced.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("keep me")
    with pytest.raises(rtclab.OutputError, match="was not written by rtclab"):
        rtclab.save(result, tmp_path / "mine")
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "keep me"


BAD_COUNT = """
name = "x"
duration = "5s"
[link]
capacity = "10Mbps"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = -1
"""


@pytest.mark.parametrize("text, path, value", [
    (BAD_COUNT, "flows[1].count", -1),
    (BAD_COUNT.replace("count = -1", 'cc = "nope"').replace('cc = "cubic"\nrtt = "40ms"\ncc', "rtt = \"40ms\"\ncc"),
     "flows[1].cc", "nope"),
    (BAD_COUNT.replace("count = -1", "count = 1").replace('"10Mbps"', '"10MBx"'), "link.capacity", "10MBx"),
    (BAD_COUNT.replace("count = -1", "colour = 3"), "flows[1].colour", 3),
    ({"name": "d", "duration": "5s", "link": {"capacity": "1Mbps"}, "flows": [{"kind": "tcp", "cc": 7, "rtt": "40ms"}]},
     "flows[0].cc", 7),
])
def test_config_error_names_path_value_and_message(text, path, value):
    for call in (rtclab.run, rtclab.validate):
        with pytest.raises(rtclab.ConfigError) as info:
            call(text)
        e = info.value
        assert e.path == path and e.value == value, (e.path, e.value, str(e))
        assert str(e) == f"{path}: {e.message}" and "(" not in str(e)[:1]


def test_config_error_value_is_none_where_no_value_exists():
    with pytest.raises(rtclab.ConfigError) as info:
        rtclab.run('name = "x"\nduration = "5s"\n[link]\ncapacity = "1Mbps"\n')
    assert info.value.path == "flows" and info.value.value is None and "required" in info.value.message
    with pytest.raises(rtclab.ConfigError) as info:
        rtclab.run('name = "x"\nduration = = "5s"\n')
    assert info.value.path.startswith("line ") and info.value.value is None


def test_empty_scenario_is_named_as_such():
    with pytest.raises(FileNotFoundError, match="the scenario is empty"):
        rtclab.run("")


def test_every_cli_command_has_a_python_function():
    import inspect

    import rtclab.bench  # noqa: F401  the submodules named like the CLI's commands do not shadow them
    import rtclab.compare  # noqa: F401
    import rtclab.repro  # noqa: F401

    import rtclab.sweep  # noqa: F401

    for name in ("run", "validate", "save", "report", "compare_engines", "reproduce", "benchmark", "emu_shell",
                 "run_sweep", "run_suite", "sweep_catalog", "run_to_folder", "hairpin_table", "metis_convert",
                 "metis_rtc", "builtin_scenarios", "load_scenario"):
        assert callable(getattr(rtclab, name)), name
    with pytest.raises(ValueError, match="unknown paper"):
        rtclab.reproduce("nope")
    with pytest.raises(ValueError, match="unknown engine"):
        rtclab.benchmark("gpu")
    assert "out" in inspect.signature(rtclab.emu_shell).parameters


def test_rfc8868_fairness_ratios_and_stability():
    """RFC 8868 §3's ratios over 1, 5 and 20 s: two equal CUBIC flows stay within the 0.333-3
    guideline; flows of unequal RTT drift further apart than equal ones."""
    fair = rtclab.run("two-cubic").summary
    unfair = rtclab.run("rtt-unfairness").summary
    scales = [r["window_s"] for r in fair["rfc8868"]["fairness_ratios"]]
    assert scales == [1, 5, 20]
    assert all(r["within_guideline"] == 1.0 for r in fair["rfc8868"]["fairness_ratios"])
    assert unfair["rfc8868"]["fairness_ratios"][1]["ratio_median"] > fair["rfc8868"]["fairness_ratios"][1]["ratio_median"]
    for f in fair["flows"]:
        r = f["rfc8868"]
        assert r["convergence_s"] >= 1.0 and r["steady_mbps"] > 10 and r["throughput_cv"] < 0.5


def test_reproduce_takes_only_and_store_and_checks_them_as_the_cli_does(tmp_path):
    """One orchestration for `rtclab repro` and `rtclab.reproduce` (`repro.reproduce_paper`):
    --only and --store exist in both, and a bad request is refused before any run."""
    import rtclab
    from rtclab.output import OutputError

    with pytest.raises(ValueError, match="unknown experiment"):
        rtclab.reproduce("zhuge", runs=1, only="S9")
    with pytest.raises(ValueError, match="--only is not supported"):
        rtclab.reproduce("gcc", runs=1, only="S1")
    with pytest.raises(ValueError, match="--runs must be at least 1"):
        rtclab.reproduce("gcc", runs=0)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(OutputError, match="not an rtclab run store"):
        rtclab.reproduce("afr", runs=1, store=tmp_path / "mine")
    rows = rtclab.reproduce("afr", runs=1, store=tmp_path / "store", out=tmp_path / "out", progress=False)
    assert rows and (tmp_path / "out" / "repro.json").is_file()
    from rtclab.sweep import STORE_MARKER

    assert json.loads((tmp_path / "store" / STORE_MARKER).read_text())["name"] == "repro-afr"


def test_the_commands_functions_check_their_requests_before_any_work(tmp_path):
    """`rtclab.run_to_folder`, `hairpin_table` and `metis_*` refuse a bad request by name, before
    anything is solved, trained or written."""
    with pytest.raises(ValueError, match="--capture needs --engine emu"):
        rtclab.run_to_folder("default", tmp_path / "r", capture=True)
    with pytest.raises(ValueError, match="--lambda must be a finite number"):
        rtclab.hairpin_table(0, tmp_path / "h")
    with pytest.raises(ValueError, match="no such file"):
        rtclab.hairpin_table(1e-4, tmp_path / "h", compare=tmp_path / "missing.bin")
    with pytest.raises(ValueError, match="options: traces, teacher, qoe, iterations"):
        rtclab.metis_convert(tmp_path / "m", iteration=3)
    with pytest.raises(ValueError, match="metis design: .*options: iterations, seeds"):
        rtclab.metis_design(tmp_path / "d", iteration=3)
    with pytest.raises(ValueError, match="--seeds"):
        rtclab.metis_design(tmp_path / "d", seeds="a")
    with pytest.raises(ValueError, match="metis auto: .*options: workload, load"):
        rtclab.metis_auto(tmp_path / "a", workloads="websearch")
    with pytest.raises(ValueError, match="--load 0"):
        rtclab.metis_auto(tmp_path / "a", load=0)
    with pytest.raises(ValueError, match="metis deploy: .*options: tree, iterations, runs"):
        rtclab.metis_deploy(tmp_path / "p", run=1)
    with pytest.raises(ValueError, match="--seconds must be a finite number, 0 or more"):
        rtclab.metis_deploy(tmp_path / "p", seconds=-1)
    assert not any(tmp_path.iterdir())
    result, folder = rtclab.run_to_folder("default", tmp_path / "r", plots=False)
    assert (folder / "summary.json").is_file() and result.summary["scenario"] == "default"



def test_shipped_experiments_name_the_ideal_sender_and_a_users_flow_gets_libwebrtcs():
    """A media flow without `media.sender` runs libwebrtc's VP8 sender; `with_sender` (what
    reproductions, suites and benchmarks go through) names the ideal one, keeps a sender a flow
    names itself, leaves other flows and the dict it was given alone; a reproduction's job
    carries it."""
    from rtclab.repro import Job
    from rtclab.scenarios import with_sender

    scn = {"duration": "2s", "link": {"capacity": "2Mbps"},
           "flows": [{"kind": "media", "cc": "gcc", "rtt": "40ms"},
                     {"kind": "media", "cc": "gcc", "rtt": "40ms", "media": {"sender": "libwebrtc", "fps": 15}},
                     {"kind": "tcp", "cc": "cubic", "rtt": "40ms"}]}
    pinned = with_sender(scn)
    assert pinned["flows"][0]["media"] == {"sender": "ideal"}
    assert pinned["flows"][1]["media"] == {"sender": "libwebrtc", "fps": 15}
    assert "media" not in pinned["flows"][2] and "media" not in scn["flows"][0]
    assert Job(("k",), scn).scenario["flows"][0]["media"]["sender"] == "ideal"
    # The two senders on the same 2 s: VP8's rate control drops frames after the key frame
    # (measured: 5 of 59) and the picture is 640x480, so more bits per pixel (quality proxy
    # 89.5 against the ideal sender's 73.4 at 1280x720); the ideal encoder drops none.
    one = {**scn, "flows": scn["flows"][:1]}
    ideal = rtclab.run(with_sender(one)).summary["flows"][0]["media"]
    libwebrtc = rtclab.run(one).summary["flows"][0]["media"]
    assert ideal["frames_dropped_by_sender"] == 0 < libwebrtc["frames_dropped_by_sender"]
    assert libwebrtc["quality"] > ideal["quality"] + 5
    with pytest.raises(rtclab.ConfigError, match="libwebrtc"):
        rtclab.run(with_sender(one, "chromium"))
