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
