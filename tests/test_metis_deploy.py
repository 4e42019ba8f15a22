"""Metis' deployment case (issue 43 item 6): the video made from the clip, the pages' tree and model,
the pinned scripts, the local server, and — where Playwright, Chromium and npm are here — the pages
in a real browser."""

import json
import shutil
import struct
import subprocess
import urllib.error
import urllib.request

import numpy as np
import pytest

from rtclab.metis import site, webassets
from rtclab.metis.tree import Tree


def _tree(task="classification", n_features=25):
    # root splits buffer (feature 1) at 0.5; left leaf level 0, right splits throughput_7 (9) at 0.3
    return Tree(task, np.array([1, -1, 9, -1, -1]), np.array([0.5, 0, 0.3, 0, 0]), np.array([1, -1, 3, -1, -1]),
                np.array([2, -1, 4, -1, -1]), np.array([0.0, 0.0, 2.0, 2.0, 5.0]), np.ones((5, 6)),
                [f"f{i}" for i in range(n_features)], [0.0, 1, 2, 3, 4, 5])


def test_segments_are_stamped_and_padded_to_pensieves_chunk_sizes():
    clip = site.Clip.load()
    assert clip.duration == 4 * clip.timescale and clip.codecs.startswith("vp09.")
    seg = clip.segment(7, 200_000)
    assert len(seg) == 200_000
    at, _ = site._find(seg, ["moof", "mfhd"])
    assert struct.unpack(">I", seg[at + 12:at + 16])[0] == 7
    at, _ = site._find(seg, ["moof", "traf", "tfdt"])
    width = 8 if seg[at + 8] == 1 else 4
    assert int.from_bytes(seg[at + 12:at + 12 + width], "big") == 6 * clip.duration
    kinds = [k for k, _, _ in site.boxes(seg)]
    assert kinds == ["moof", "mdat", "free"]
    with pytest.raises(site.SiteError, match="smaller than the clip"):
        clip.segment(1, len(clip.fragment) + 4)


def test_video_serves_the_manifest_and_every_segment_at_its_size():
    sizes = site.load_sizes()
    v = site.Video(sizes)
    mpd = v.manifest()
    assert mpd.count("<Representation ") == 6 and 'bandwidth="4300000"' in mpd and "PT192S" in mpd
    body, kind = v.get("3/48.m4s")
    assert kind == "video/mp4" and len(body) == sizes[3, 47]
    assert v.get("0/init.mp4")[0] == v.clip.init
    for bad in ("6/1.m4s", "0/0.m4s", "0/49.m4s", "0/x.m4s", "../etc", "0/1.mp3"):
        assert v.get(bad) is None, bad
    with pytest.raises(site.SiteError, match="6 levels"):
        site.Video(sizes[:5])


def test_model_files_hold_the_released_actor():
    from rtclab.inputs import load_npz
    from rtclab.metis.pensieve import data_dir

    arrays = load_npz(data_dir() / "pensieve_actor_critic.npz", "Pensieve model")
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        n = site.write_model(arrays, Path(tmp))
        meta = json.loads((Path(tmp) / "model.json").read_text())
        blob = (Path(tmp) / "weights.bin").read_bytes()
    assert n == len(blob) + len(json.dumps(meta)) + 1
    for a in meta["arrays"]:
        got = np.frombuffer(blob, "<f4", int(np.prod(a["shape"])), a["offset"]).reshape(a["shape"])
        assert np.array_equal(got, arrays["actor." + a["name"]])
    assert {a["name"] for a in meta["arrays"]} == {k.split(".", 1)[1] for k in arrays if k.startswith("actor.")}


def test_tree_script_refuses_what_the_page_cannot_run():
    assert site.tree_script(_tree()).startswith("window.rtclabTree = {")
    with pytest.raises(site.SiteError, match="classification tree over Pensieve's 25 features"):
        site.tree_script(_tree("regression"))
    with pytest.raises(site.SiteError, match="over 24"):
        site.tree_script(_tree(n_features=24))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pages_tree_and_state_agree_with_the_python_tree(tmp_path):
    tree = _tree()
    rng = np.random.default_rng(1)
    states = rng.uniform(0, 1, size=(200, 6, 8))
    script = tmp_path / "run.js"
    script.write_text("global.window = global;\n" + (site.WEB / "abr.js").read_text() + site.tree_script(tree)
                      + "const d = rtclabAbr.treeDecider(rtclabTree);\n"
                      + f"const S = {json.dumps(states.tolist())};\n"
                      + "console.log(JSON.stringify({levels: S.map(s => d(s)), "
                        "features: S.map(s => rtclabAbr.features(s))}));\n")
    out = json.loads(subprocess.run(["node", str(script)], capture_output=True, text=True, check=True).stdout)
    from rtclab import _core
    feats = np.empty((len(states), 25))
    _core.abr_features(np.ascontiguousarray(states), feats)
    assert np.allclose(out["features"], feats)
    assert out["levels"] == [int(v) for v in tree.predict(feats)]


def test_assets_are_checked_against_the_pinned_integrity(tmp_path, monkeypatch):
    a = webassets.TFJS["4.22.0"]
    with pytest.raises(webassets.AssetsMissing, match="pins"):
        webassets._check_integrity(b"not the tarball", a)
    with pytest.raises(ValueError, match="rtclab pins 0.14.1 and 4.22.0"):
        webassets.assets("9.9.9")
    monkeypatch.setattr(webassets.shutil, "which", lambda name: None)
    with pytest.raises(webassets.AssetsMissing, match="npm, which is not installed"):
        webassets.ensure(tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_server_serves_the_site_and_nothing_outside_it(tmp_path):
    from rtclab.metis import browser

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "a.js").write_text("1;")
    (tmp_path / "secret.txt").write_text("no")
    srv = browser.serve(tmp_path / "site", site.Video(site.load_sizes()))
    try:
        assert urllib.request.urlopen(f"{srv.url}/a.js").read() == b"1;"
        assert len(urllib.request.urlopen(f"{srv.url}/video/0/1.m4s").read()) == site.load_sizes()[0, 0]
        for bad in ("/../secret.txt", "/%2e%2e/secret.txt", "/video/9/1.m4s", "/nothing"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(srv.url + bad)
            assert e.value.code == 404, bad
    finally:
        srv.shutdown()
        srv.server_close()


# ---- in a real browser ---------------------------------------------------------------------------

def _browser_or_skip():
    from rtclab.metis import browser
    try:
        browser.find_chromium()
        browser.playwright()
        return webassets.ensure()
    except (browser.BrowserMissing, webassets.AssetsMissing) as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from rtclab.inputs import load_npz
    from rtclab.metis import browser
    from rtclab.metis.pensieve import data_dir

    assets = _browser_or_skip()
    folder = tmp_path_factory.mktemp("deploy") / "site"
    sizes = site.load_sizes()
    site.build(folder, _tree(), load_npz(data_dir() / "pensieve_actor_critic.npz", "Pensieve model"), sizes, assets)
    srv = browser.serve(folder, site.Video(sizes))
    yield srv.url, folder
    srv.shutdown()
    srv.server_close()


def test_tfjs_actor_matches_the_released_graph(served):
    from rtclab.metis import browser
    from rtclab.metis.pensieve import reference_io

    ref = reference_io()
    states = ref["states"][:24].reshape(-1, 48)
    probs = np.array(browser.pensieve_probs(served[0], states))
    assert np.abs(probs - ref["actor_probs"][:24]).max() < 1e-5


def test_pages_load_play_and_are_measured(served):
    from rtclab.metis import browser, deploy

    loads = browser.measure(served[0], list(site.PAGES), runs=1, seconds=4, rate_kbps=0, rtt_ms=0, repeat=5)
    by = {x.page: x for x in loads}
    files = {p.name: p.stat().st_size for p in served[1].rglob("*") if p.is_file()}
    # Pensieve's page adds tf.js, its script and the model; the tree's adds its table and script.
    extra = by["pensieve"].page_bytes - by["fixed"].page_bytes
    expect = (files["tf.min.js"] + files["pensieve.js"] + files["model.json"] + files["weights.bin"] + files["sizes.js"]
              + files["pensieve.html"] - files["fixed.html"])
    assert abs(extra - expect) < 2000, (extra, expect, by["pensieve"].resources)
    assert 0 < by["tree"].page_bytes - by["fixed"].page_bytes < 10_000
    for x in loads:
        assert x.ready_ms > 0 and x.chunks >= 1 and x.heap_peak >= x.heap_mean > 0 and x.heap_ready > 0, x
        assert set(x.levels) <= set(range(6))
    assert set(by["fixed"].levels) == {0} and by["fixed"].decision_ms is None
    assert by["tree"].decision_ms > 0 and by["pensieve"].decision_ms > 0
    s = deploy.summarise(loads)
    assert s["added"]["pensieve"]["page_kb"] == pytest.approx(extra / 1000)


def test_a_page_that_fails_is_reported_with_what_it_said(served, tmp_path):
    from rtclab.metis import browser

    broken = tmp_path / "site"
    shutil.copytree(served[1], broken)
    (broken / "tree.js").write_text("throw new Error('broken tree script');\n")
    srv = browser.serve(broken, site.Video(site.load_sizes()))
    try:
        with pytest.raises(browser.PageFailed, match="tree.html: .*rtclabTree|tree.html: .*undefined"):
            browser.measure(srv.url, ["tree"], runs=1, seconds=0, rate_kbps=0, rtt_ms=0)
    finally:
        srv.shutdown()
        srv.server_close()


def test_cli_deploy_checks_its_options(tmp_path):
    from conftest import rtclab

    _tree("regression").write(tmp_path / "reg.json")
    for flags, msg in ((["--runs", "0"], "--runs must be at least 1"), (["--tfjs", "1.0"], "rtclab pins"),
                       (["--rate-kbps", "-1"], "--rate-kbps"), (["--seconds", "inf"], "--seconds must be a finite"),
                       (["--tree", str(tmp_path / "none.json")], "none.json"),
                       (["--tree", str(tmp_path / "reg.json")], "classification tree")):
        r = rtclab("metis", "deploy", *flags, "--out", tmp_path / "o", "--quiet")
        assert r.returncode == 2 and msg in r.stderr, (flags, r.stderr)
        assert not (tmp_path / "o").exists()


def test_cli_deploy_writes_its_results(tmp_path):
    _browser_or_skip()
    from conftest import rtclab

    tree = tmp_path / "tree.json"
    _tree().write(tree)
    r = rtclab("metis", "deploy", "--tree", tree, "--runs", "1", "--seconds", "2", "--rate-kbps", "0", "--quiet",
               "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert "added over fixed" in r.stdout
    s = json.loads((tmp_path / "o" / "deploy.json").read_text())
    assert set(s["pages"]) == set(site.PAGES) and s["tree_leaves"] == 3
    assert (tmp_path / "o" / "deploy.png").stat().st_size > 0 and (tmp_path / "o" / "site" / "pensieve.html").is_file()
