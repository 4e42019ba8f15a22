"""The scenario copy a result folder keeps: seed pinned, files it read under inputs/."""

import json
import tomllib

from rtclab.rerun import rerun_copy

TOML = """# my experiment
name = "x"   # keep me
seed = 3
duration = "5s"
[link]
capacity = { trace = "traces/a.down", format = "mahimahi" }
[[flows]]
kind = "media"
[flows.media]
frame_sizes = "../b.csv"
"""


def test_toml_copy_keeps_comments_pins_the_seed_and_points_at_inputs(tmp_path):
    c = rerun_copy(TOML, str(tmp_path), 42, "9.9")
    d = tomllib.loads(c.text)
    assert d["seed"] == 42 and c.text.count("seed =") == 1
    assert d["link"]["capacity"]["trace"] == "inputs/a.down"
    assert d["flows"][0]["media"]["frame_sizes"] == "inputs/b.csv"
    assert "# my experiment" in c.text and "# keep me" in c.text
    assert c.files == [(tmp_path / "traces/a.down", "a.down"), (tmp_path / "../b.csv", "b.csv")]


def test_toml_without_a_seed_gets_one_before_the_first_table(tmp_path):
    c = rerun_copy(TOML.replace("seed = 3\n", ""), str(tmp_path), 5, "9.9")
    assert tomllib.loads(c.text)["seed"] == 5


def test_json_copy_and_clashing_names(tmp_path):
    text = json.dumps({"link": {"capacity": {"trace": "x/t.down"}}, "reverse_link": {"capacity": {"trace": "y/t.down"}}})
    c = rerun_copy(text, str(tmp_path), 8, "9.9")
    d = json.loads(c.text)
    assert c.name == "scenario.json" and d["seed"] == 8
    assert {d["link"]["capacity"]["trace"], d["reverse_link"]["capacity"]["trace"]} == {"inputs/t.down", "inputs/1-t.down"}


def test_input_files_skips_the_parse_only_where_no_file_can_be_named(tmp_path):
    """`input_files` (the files `rtclab run` must not write over) parses the scenario only if
    its text could name a file; a text that spells a key with an escape is still parsed."""
    from rtclab.scenarios import ScenarioSource, input_files, may_name_files

    def files(text, fmt="toml"):
        return input_files(ScenarioSource(text, fmt, str(tmp_path), "<text>"))

    assert files(TOML) == [tmp_path / "traces/a.down", tmp_path / "../b.csv"]
    plain = 'name = "x"\nduration = "5s"\n[link]\ncapacity = "10Mbps"\n'
    assert not may_name_files(plain) and files(plain) == []
    escaped = '[link]\ncapacity = { "tr\\u0061ce" = "t.down" }\n'
    assert may_name_files(escaped) and files(escaped) == [tmp_path / "t.down"]
    escaped_json = json.dumps({"link": {"capacity": {"tr\\u0061ce": "j.down"}}}).replace("\\\\", "\\")
    assert json.loads(escaped_json)["link"]["capacity"] == {"trace": "j.down"}
    assert files(escaped_json, "json") == [tmp_path / "j.down"]
    assert files("trace = = x") == []  # a text that does not parse names no file here
