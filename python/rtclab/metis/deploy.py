"""`rtclab metis deploy`: Metis' lightweight-deployment case in a real browser (dissertation §5.5.5,
Fig 5.12; spec `zhuge-metis.md` B.6.4; transys-project/metis `case-deploy/`).

Pensieve run in the browser through TensorFlow.js against Metis' tree of it, both as the ABR rule of
a dash.js player, and a `fixed` page (always the lowest level) as the reference: each page is loaded
`runs` times in headless Chromium over a throttled link (1200 kbit/s, 80 ms) and plays `seconds` of
Pensieve's video. Reported as the dissertation does: what each ABR adds to the page (bytes), to the
page-load time and to the JS heap (mean and peak over playback, and at ready), beside the published
1370 KB, 9.36 s vs 60 ms (156×) and 4.0× / 6.6×; and the time of one decision in the page.

Pages: `rtclab.metis.site`; the browser and the measurements: `rtclab.metis.browser`; the scripts:
`rtclab.metis.webassets` (dash.js and tf.js from npm, pinned and checked).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

from rtclab.metis import site

PUBLISHED = {"pensieve_page_kb": 1370.0, "pensieve_load_s": 9.36, "tree_load_s": 0.060, "load_ratio": 156.0,
             "heap_mean_ratio": 4.0, "heap_peak_ratio": 6.6}


def check(args) -> None:
    if args.runs < 1:
        raise ValueError(f"--runs must be at least 1, got {args.runs}")
    for flag, v, what in (("--seconds", args.seconds, "0 or more"),
                          ("--rate-kbps", args.rate_kbps, "0 (no throttling) or more"),
                          ("--rtt-ms", args.rtt_ms, "0 or more")):
        if not (v >= 0 and math.isfinite(v)):
            raise ValueError(f"{flag} must be a finite number, {what}, got {v}")
    from rtclab.metis.webassets import assets

    assets(args.tfjs)
    if args.tree is None and args.iterations < 1:
        raise ValueError(f"--iterations must be at least 1, got {args.iterations}")


def pensieve_tree(args, say):
    """The tree the page runs: --tree, else a conversion of the released actor (greedy, as the page's DNN)."""
    from rtclab.metis.tree import Tree

    if args.tree:
        tree = Tree.read(args.tree, n_features=25)
        site.tree_script(tree)  # a tree the page cannot run is refused here, before the browser starts
        return tree, f"{args.tree}"
    import gymnasium

    import rtclab.gym  # noqa: F401
    from rtclab.metis.command import split_traces
    from rtclab.metis.convert import convert
    from rtclab.metis.pensieve import PensieveTeacher, load_traces

    traces = load_traces()
    train, _ = split_traces(len(traces))
    env = gymnasium.make("rtclab/ABR-v0", traces=[traces[i] for i in train], seed=args.seed).unwrapped
    say(f"converting Pensieve's released actor to a tree ({args.iterations} DAgger iterations)")
    res = convert(env, PensieveTeacher(greedy=True), iterations=args.iterations, videos=10, max_leaves=200,
                  seed=args.seed)
    return res.tree, f"Metis conversion, {args.iterations} iterations, seed {args.seed}"


def _median(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return float(np.median(xs)) if xs else None


def summarise(loads) -> dict:
    """Medians per page, and what the tree and Pensieve add over `fixed` (paired by run)."""
    by = {p: [x for x in loads if x.page == p] for p in site.PAGES}
    pages = {p: {"page_bytes": _median([x.page_bytes for x in v]), "ready_ms": _median([x.ready_ms for x in v]),
                 "heap_mean_mb": _median([x.heap_mean / 1e6 for x in v]),
                 "heap_peak_mb": _median([x.heap_peak / 1e6 for x in v]),
                 "heap_ready_mb": _median([x.heap_ready / 1e6 if x.heap_ready is not None else None for x in v]),
                 "decision_us": _median([x.decision_ms * 1e3 if x.decision_ms is not None else None for x in v]),
                 "chunks": _median([x.chunks for x in v]), "played_s": _median([x.played_s for x in v]),
                 "resources": v[0].resources if v else {}} for p, v in by.items()}
    added = {}
    for p in ("tree", "pensieve"):
        pairs = list(zip(by["fixed"], by[p]))
        added[p] = {"page_kb": (pages[p]["page_bytes"] - pages["fixed"]["page_bytes"]) / 1000,
                    "load_s": _median([(b.ready_ms - a.ready_ms) / 1000 for a, b in pairs]),
                    "heap_mean_mb": _median([(b.heap_mean - a.heap_mean) / 1e6 for a, b in pairs]),
                    "heap_peak_mb": _median([(b.heap_peak - a.heap_peak) / 1e6 for a, b in pairs]),
                    "heap_ready_mb": _median([(b.heap_ready - a.heap_ready) / 1e6 for a, b in pairs
                                              if a.heap_ready is not None and b.heap_ready is not None])}

    # What the loads resolve: the spread (max − min) of the fixed page's own figure over the loads (None
    # from one load). Where the tree adds no more than that, Pensieve / tree is given as the bound
    # Pensieve / spread (the tree's true addition is at most about the spread), flagged in `bounds`.
    def spread(get) -> float | None:
        xs = [get(x) for x in by["fixed"]]
        xs = [x for x in xs if x is not None]
        return (max(xs) - min(xs)) if len(xs) > 1 else None

    noise = {"load_s": spread(lambda x: x.ready_ms / 1000), "heap_mean_mb": spread(lambda x: x.heap_mean / 1e6),
             "heap_peak_mb": spread(lambda x: x.heap_peak / 1e6),
             "heap_ready_mb": spread(lambda x: x.heap_ready / 1e6 if x.heap_ready is not None else None)}
    ratios, bounds = {}, {}
    for key, name in (("load_s", "load"), ("heap_mean_mb", "heap_mean"), ("heap_peak_mb", "heap_peak"),
                      ("heap_ready_mb", "heap_ready")):
        a, b, n = added["pensieve"][key], added["tree"][key], noise[key]
        ratios[name], bounds[name] = None, False
        if a is None or b is None:
            continue
        if n is not None and n > 0 and b <= n:
            ratios[name], bounds[name] = a / n, True
        elif b > 0:
            ratios[name] = a / b

    d = pages["pensieve"]["decision_us"], pages["tree"]["decision_us"]
    ratios["decision"] = d[0] / d[1] if d[0] and d[1] else None
    return {"pages": pages, "added": added, "fixed_spread": noise, "ratios": ratios, "bounds": bounds,
            "published": PUBLISHED}


def measure_site(folder: Path, tree, assets: dict[str, Path], *, runs: int, seconds: float, rate_kbps: float,
                 rtt_ms: float, chromium: str | None = None, say=lambda m: None) -> tuple[dict, list]:
    """Builds the site in `folder` (new or empty), serves it on 127.0.0.1 and measures every page;
    returns (summary, loads)."""
    from rtclab.inputs import load_npz
    from rtclab.metis import browser
    from rtclab.metis.pensieve import data_dir

    arrays = load_npz(data_dir() / "pensieve_actor_critic.npz", "Pensieve model")
    sizes = site.load_sizes()
    site.build(folder, tree, arrays, sizes, assets)
    server = browser.serve(folder, site.Video(sizes))
    t0 = time.perf_counter()
    try:
        loads = browser.measure(server.url, list(site.PAGES), runs=runs, seconds=seconds, rate_kbps=rate_kbps,
                                rtt_ms=rtt_ms, chromium=chromium, say=say)
    finally:
        server.shutdown()
        server.server_close()
    s = summarise(loads)
    s.update({"runs": runs, "seconds": seconds, "rate_kbps": rate_kbps, "rtt_ms": rtt_ms, "wall_s": time.perf_counter() - t0,
              "loads": [{"page": x.page, "page_bytes": x.page_bytes, "ready_ms": x.ready_ms, "heap_mean": x.heap_mean,
                         "heap_peak": x.heap_peak, "heap_ready": x.heap_ready, "decision_ms": x.decision_ms, "chunks": x.chunks,
                         "levels": x.levels, "played_s": x.played_s} for x in loads]})
    return s, loads


def run_deploy(args, write) -> dict:
    from rtclab.metis import browser, webassets

    check(args)
    say = (lambda m: None) if args.quiet else (lambda m: print(m, flush=True))
    given = pensieve_tree(args, say) if args.tree else None   # a bad file is named before anything runs
    chromium = browser.find_chromium(args.chromium)
    browser.playwright()
    assets = webassets.ensure(say=say, tfjs=args.tfjs)
    tree, tree_source = given or pensieve_tree(args, say)
    holder: dict = {}

    def fill(tmp: Path) -> None:
        say(f"measuring in {chromium} over {args.rate_kbps:g} kbit/s, {args.rtt_ms:g} ms: {len(site.PAGES)} pages × "
            f"{args.runs} loads, {args.seconds:g} s of playback each")
        s, loads = measure_site(tmp / "site", tree, assets, runs=args.runs, seconds=args.seconds,
                                rate_kbps=args.rate_kbps, rtt_ms=args.rtt_ms, chromium=chromium, say=say)
        s.update({"chromium": chromium, "tree_source": tree_source, "tree_leaves": tree.leaf_count,
                  "assets": {a.name: f"{a.package}@{a.version}" for a in webassets.assets(args.tfjs)}})
        (tmp / "deploy.json").write_text(json.dumps(s, indent=1) + "\n", encoding="utf-8")
        tree.write(tmp / "tree.json")
        plot(s, loads, tmp / "deploy.png")
        holder["summary"] = s

    out = write(fill)
    s = holder["summary"]
    s["out"] = str(out)
    return s


def plot(s: dict, loads, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"fixed": "tab:gray", "tree": "tab:orange", "pensieve": "tab:blue"}
    pages = list(site.PAGES)
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.3))
    p = s["pages"]
    for ax, key, label, scale in ((axes[0], "page_bytes", "page size (KB)", 1e-3),
                                  (axes[1], "ready_ms", "page-load time (s)", 1e-3)):
        ax.bar(pages, [p[k][key] * scale for k in pages], color=[colours[k] for k in pages])
        ax.set_title(label, fontsize=9)
    ax = axes[2]
    for page in pages:
        first = next((x for x in loads if x.page == page), None)
        if first and first.heap:
            t, h = zip(*first.heap)
            ax.plot(t, np.array(h) / 1e6, color=colours[page], label=page, lw=1)
    ax.set_title("live JS heap, first load (MB)", fontsize=9)
    ax.set_xlabel("s since navigation", fontsize=8)
    ax.legend(fontsize=7)
    ax = axes[3]
    dec = [(k, p[k]["decision_us"]) for k in ("tree", "pensieve") if p[k]["decision_us"]]
    if dec:
        ax.bar([k for k, _ in dec], [v for _, v in dec], color=[colours[k] for k, _ in dec])
        ax.set_yscale("log")
    ax.set_title("one decision in the page (µs)", fontsize=9)
    fig.suptitle(f"Metis deployment case: dash.js pages in headless Chromium at {s['rate_kbps']:g} kbit/s, "
                 f"{s['rtt_ms']:g} ms ({s['runs']} loads each, medians)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
