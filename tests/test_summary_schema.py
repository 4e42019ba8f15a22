"""One summary type across the Rust/Python boundary: the schema generated from the Rust type is
the one published in docs/, every summary the engines and the front end write is exactly what it
describes, the typed view names fields a typo misses, and each metric has one spelling."""

import json
import warnings
from pathlib import Path

import pytest

import rtclab
from rtclab.summary import METRIC_RENAMES, Summary, canonical_metric, problems

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def test_the_published_schema_is_the_generated_one():
    published = json.loads((ROOT / "docs" / "summary.schema.json").read_text(encoding="utf-8"))
    assert published == rtclab.summary_schema(), (
        "docs/summary.schema.json is stale: regenerate it with "
        "python -c 'import json, rtclab; print(json.dumps(rtclab.summary_schema(), indent=2))'")


@pytest.mark.parametrize("scenario", ["default", "gcc-vs-cubic", "lte-trace",
                                      str(EXAMPLES / "wifi-ap-zhuge.toml"), str(EXAMPLES / "parking-lot.toml")])
def test_every_summary_is_what_the_schema_describes(scenario, tmp_path):
    r = rtclab.run(scenario, progress=False)
    assert problems(r.summary) == []
    # The folder's copy too (one writer: what `rtclab run --out` and a sweep's runs write).
    out = rtclab.save(r, tmp_path / "o")
    on_disk = json.loads((Path(out) / "summary.json").read_text(encoding="utf-8"))
    assert problems(on_disk) == []
    assert on_disk == json.loads(json.dumps(r.summary))


def test_the_typed_view_names_the_fields():
    r = rtclab.run("gcc-vs-cubic", progress=False)
    t = r.typed
    media = [f for f in t.flows if f.media is not None][0]
    assert media.media.frame_delay_ms.p95 == r.summary["flows"][media.id]["media"]["frame_delay_ms"]["p95"]
    assert t.link.utilization == r.summary["link"]["utilization"]
    with pytest.raises(AttributeError, match="has no field 'troughput_mbps'.*throughput_mbps"):
        t.flows[0].troughput_mbps
    with pytest.raises(AttributeError, match="read-only"):
        t.seed = 3
    # A field the schema does not know is named by `problems`.
    bad = json.loads(json.dumps(r.summary))
    bad["flows"][0]["my_metric"] = 1
    del bad["link"]["utilization"]
    assert problems(bad) == ["summary.flows[0].my_metric: not in the schema", "summary.link.utilization: missing"]
    assert isinstance(Summary(bad), Summary)


def test_each_metric_has_one_spelling():
    for old, new in METRIC_RENAMES.items():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert canonical_metric(old) == new
        assert w and issubclass(w[0].category, DeprecationWarning)
        assert canonical_metric(new) == new
    # The old spellings are gone from the package's own tables.
    src = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "python" / "rtclab").rglob("*.py")
                    if p.name != "summary.py")
    for old in METRIC_RENAMES:
        if "." not in old:
            assert f'"{old}"' not in src and f"'{old}'" not in src, old
