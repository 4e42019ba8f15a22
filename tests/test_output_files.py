"""The run's files as the core writes them: summary.json laid out exactly as Python's own
indenting encoder would, Parquet tables that read back as the engine's columns."""

import json
import math
import struct

import pytest

from rtclab import _core, run
from rtclab.output import summary_text, write_table


def test_summary_text_is_pythons_indent_2_byte_for_byte():
    summary = run("two-cubic", progress=False).summary
    assert summary_text(summary) == json.dumps(summary, indent=2)
    tricky = {"a": [], "b": {}, "c": "quote \" comma , colon : brace { [", "d": [1.5e-07, -0.0, 1e300, None, True],
              "é": {"nested": [[], [{}], {"x": [1, [2, [3]]]}]}, "": ""}
    assert summary_text(tricky) == json.dumps(tricky, indent=2)


def test_summary_text_with_a_non_finite_value_falls_back_to_python():
    s = {"x": math.nan, "y": [math.inf]}
    assert summary_text(s) == json.dumps(s, indent=2)


def test_parquet_tables_read_back_as_the_engines_columns(tmp_path):
    pd = pytest.importorskip("pandas")
    from rtclab.runner import floats

    r = run("two-cubic", progress=False)
    for table in ("flows", "link", "distributions"):
        path = tmp_path / f"{table}.parquet"
        write_table(r, table, path)
        df = pd.read_parquet(path)
        for name, raw in r.tables[table].items():
            if table == "distributions" and name == "metric":
                continue
            want = list(floats(raw))
            got = df[name].astype(float).tolist()
            assert len(got) == len(want)
            assert all((a == b) or (math.isnan(a) and math.isnan(b)) for a, b in zip(got, want)), name
    names = pd.read_parquet(tmp_path / "flows.parquet")["flow_name"]
    assert set(names) == set(r.flow_names().values())


def test_write_parquet_names_a_bad_column(tmp_path):
    with pytest.raises(ValueError, match="unknown kind"):
        _core.write_parquet(str(tmp_path / "x.parquet"), [("a", "f32", b"")])
    with pytest.raises(ValueError, match="column who: index 2 is not one of the 2 names"):
        _core.write_parquet(str(tmp_path / "x.parquet"),
                            [("who", "str_by_index", (["a", "b"], struct.pack("<2d", 0.0, 2.0)))])
    assert not (tmp_path / "x.parquet").exists()
    # Columns of different lengths are found while encoding: still no file.
    with pytest.raises(OSError, match="column b has a different length"):
        _core.write_parquet(str(tmp_path / "x.parquet"), [("a", "f64", struct.pack("<d", 1.0)), ("b", "f64", b"")])
    assert not (tmp_path / "x.parquet").exists()
    with pytest.raises(RuntimeError, match="column b has a different length"):
        _core.encode_parquet([("a", "f64", struct.pack("<d", 1.0)), ("b", "f64", b"")])


def test_table_columns_lend_the_engines_bytes_without_a_copy():
    """A table column is the engine's vector lent through the buffer protocol: read-only,
    little-endian float64, equal to and pickled as the bytes it holds; columns that are one
    value throughout share one object (and one encoded Parquet chunk)."""
    import array
    import pickle

    r = run("two-cubic", progress=False)
    flows = r.tables["flows"]
    t = flows["time_s"]
    assert isinstance(t, _core.Column)
    raw = bytes(t)
    assert len(t) == len(raw) == 8 * len(r.flows)
    assert struct.unpack_from("<d", raw)[0] == r.flows["time_s"].iloc[0]
    m = memoryview(t)
    assert (m.format, m.itemsize, m.readonly, m.nbytes) == ("B", 1, True, len(raw))
    with pytest.raises(TypeError):
        m[0] = 1
    assert t == raw and t == flows["time_s"] and not (t == flows["flow"])
    back = pickle.loads(pickle.dumps(t))
    assert type(back) is bytes and back == raw
    a = array.array("d")
    a.frombytes(t)
    assert len(a) == len(raw) // 8
    # two-cubic has no media: its stage columns are all NaN, one shared object.
    assert flows["stage_encode_ms"] is flows["stage_decode_ms"]
    assert all(math.isnan(x) for x in struct.iter_unpack("<d", bytes(flows["stage_encode_ms"])) for x in x)
    del r, flows
    assert struct.unpack_from("<d", bytes(m))[0] == a[0]  # the view keeps the column alive


def test_flows_table_encoded_ahead_is_the_file_the_writer_writes(tmp_path, monkeypatch):
    """`rtclab run` has a large `flows` table encoded while the summary is built
    (`run(encode_ahead=True)`, `RunResult.flows_ahead`): the file is byte for byte the one the
    writer makes from the result, and a result whose table or flow names were changed after the
    run is written as it now is, not as it was encoded."""
    import copy
    import pickle

    from rtclab import runner
    from rtclab.output import write_run_files

    monkeypatch.setattr(runner, "PARALLEL_FLOWS_ROWS", 1)
    r = run("two-cubic", progress=False, encode_ahead=True)
    assert r.flows_ahead is not None
    plain = run("two-cubic", progress=False)
    assert plain.flows_ahead is None
    (tmp_path / "ahead").mkdir()
    (tmp_path / "plain").mkdir()
    write_run_files(r, tmp_path / "ahead")
    write_run_files(plain, tmp_path / "plain")
    for name in ("flows.parquet", "link.parquet"):
        assert (tmp_path / "ahead" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name
    assert r.flows_ahead.take(r) == (tmp_path / "plain" / "flows.parquet").read_bytes()
    # Encoded on one thread or on every core: the same bytes.
    cols = __import__("rtclab.output", fromlist=["table_columns"]).table_columns("flows", r.tables["flows"], r.flow_names)
    assert _core.encode_parquet(cols, 1) == _core.encode_parquet(cols) == r.flows_ahead.take(r)

    # A flow renamed after the run: the writer encodes the table again, with the new name.
    r.summary["flows"][0]["name"] = "renamed"
    assert r.flows_ahead.take(r) is None
    (tmp_path / "renamed").mkdir()
    write_run_files(r, tmp_path / "renamed")
    pd = pytest.importorskip("pandas")
    assert "renamed" in set(pd.read_parquet(tmp_path / "renamed" / "flows.parquet")["flow_name"])
    # A column replaced: not the table that was encoded.
    r.summary["flows"][0]["name"] = plain.summary["flows"][0]["name"]
    assert r.flows_ahead.take(r) is not None
    r.tables["flows"]["drops"] = bytes(len(r.tables["flows"]["drops"]))
    assert r.flows_ahead.take(r) is None
    # Pickled or copied, a result carries no encoding thread.
    assert pickle.loads(pickle.dumps(r)).flows_ahead is None
    assert copy.deepcopy(r).flows_ahead is None
