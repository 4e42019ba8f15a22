"""`rtclab repro metis`: Metis on Pensieve (dissertation ch. 5; Meng et al., SIGCOMM'20). Set-ups,
constants and published numbers from `shared/specs/zhuge-metis.md` part B.

Teacher: Pensieve's released actor (`rtclab/data/pensieve`), on rtclab/ABR-v0 (the Pensieve
environment in the Rust core). Traces: the 142 Norway HSDPA traces (every 5th held out for
testing), and for the resampling question each trace family of `rtclab/data/wireless-zhuge`
as a further dataset. QoE is linear QoE per chunk over the 47 chunks the policy chooses.

Conversions follow the released loop (10 rollouts per iteration, 200 000 resampled points, CART
fitted on 80 %, CCP on the other 20 %, successive halving with 50 rollouts); `runs` scales the
DAgger iterations (3 per run, 30 by default; the released default is 100).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from rtclab import datasets
from rtclab.repro import Cause, Reproduction, Row

FAMILIES = ("abc4g", "office-wifi", "pitree4g", "rest-wifi", "rest1", "xu4g", "xu5g")


def _env(traces, order="random", seed=0, **kw):
    import gymnasium

    import rtclab.gym  # noqa: F401
    return gymnasium.make("rtclab/ABR-v0", traces=traces, trace_order=order, seed=seed, **kw).unwrapped


def _split(traces):
    from rtclab.metis.command import split_traces
    tr, te = split_traces(len(traces))
    return [traces[i] for i in tr], [traces[i] for i in te]


def _pct_ratio(a: np.ndarray, b: np.ndarray, q: float) -> float:
    return float(np.percentile(a, q) / np.percentile(b, q))


_DOC = "docs/algorithms/metis.md"
#: Where the dissertation and the released code (transys-project/metis) differ, which one the rows
#: follow (spec item 8; `rtclab.repro.note_follows`).
TEXT_OR_CODE = [
    Cause("(AuTO|Fidelity to AuTO)", "follows the papers: AuTO's agents as its SIGCOMM'18 paper trains them (its code is "
          "not part of the released Metis, whose AuTO part is 'under refactoring'), Metis' conversion as its text has it "
          "(a DAgger loop per agent, CART + CCP by hold-out accuracy / MSE; no resampling: neither agent has a critic "
          "to weigh states by)"),
    Cause("Resampling", "follows the text (Eq. 5.1 with the critic); the released code's proxy is in the rows "
          "'Resampling cause'"),
    Cause("Deployment", "follows the released pages (case-deploy/pensieve_browser): the ABR as a dash.js rule, "
          "TensorFlow.js 0.14.1 with the released actor's weights, an always-lowest `fixed` page as the reference, "
          "1200 kbit/s; rtclab's dash.js is 5.2.1 (theirs a 2017 fork), its tree a table walked by 12 lines of JS "
          "(theirs sklearn-porter code), and its heap is collected before each sample"),
    Cause(".*", "follows the released code: uniform resampling with replacement, its 80/20 hold-out of the draw, "
          "reward-aware CCP (per-state rewards summed, as the text says; the code assigns)"),
]
#: What explains the rows that are not reproduced (`rtclab.repro.explain`), first match wins.
GAP_CAUSES = [
    Cause(r"Fidelity to Pensieve", "size: the stand-ins that match or beat the tree hold 20-80× its numbers (the "
          "64-leaf tree 190; the released LIME at 20-40 clusters 3,620-7,240; LEMNA at 20 clusters 7,220) — each "
          "baseline's cluster count is the one kindest to it. At the smallest count tried (5 clusters: 905 and 1,805 "
          "numbers, still 5-10× the tree) the released LIME errs about 15 % and LEMNA about 21 % against the tree's "
          "13 % (rows 'Fidelity by stand-in size'); the LIME package's explanations at cluster centres err about 24 % "
          "at every size. The dissertation states no stand-in sizes "
          f"({_DOC}, 'Fidelity against LIME and LEMNA'; `rtclab repro metis`)", metric="baseline / Metis"),
    Cause(r"Fidelity to AuTO", "form, not conversion: the lRLA's level depends on combinations of its inputs (bytes sent, "
          "age, the counts of flows), oblique to the axes a tree splits on, and a linear model per cluster follows such a "
          "boundary with few numbers; a CART fitted on the very states the stand-ins fit errs as much as Metis' tree or "
          "more (row 'CART fitted on the stand-ins' training states'), and more DAgger rollouts move Metis' tree little "
          "(at --runs 1: 12 % error from 815 states, 30 leaves; 10 % from 2,423; 12 % from 5,130, 100 leaves). The fully "
          "trained lRLA of `rtclab metis auto` (100 episodes) is easier to imitate: its 35-leaf tree errs 8.4 % on the DNN's own "
          f"states ({_DOC}, 'AuTO'; `rtclab repro metis`, `rtclab metis auto`)", metric="baseline / Metis"),
    Cause(r"AuTO on rtclab", "the joint system puts the lRLA behind the sRLA's thresholds, a setting neither the lRLA's DNN "
          "nor its tree was trained or converted in: with this run's agents the lRLA tree disagrees with its DNN on 37 % of "
          "the joint system's long-flow decisions against 11 % under the default thresholds it was converted under, and the "
          "p99 of ~4,000 flows is set by their ~40 largest. Each agent alone keeps tree / DNN p99 at 1.000 in the same run "
          "(rows 'sRLA trees / DNN', 'lRLA tree / DNN'), and with the default training the joint p99 ratio is 0.998 (web "
          "search) and 0.988, 1.001, 1.020 over three sets of data-mining test arrivals "
          f"({_DOC}, 'AuTO'; `rtclab metis auto`, `rtclab metis auto --workload datamining`)",
          variant="trees / DNNs, both agents", metric="p99 FCT ratio"),
    Cause(r"AuTO on rtclab", "network size: the published 27× is a DNN against one tree; the sRLA's actor is small "
          "(17 → 64 → 64 → 4, 5,600 weights, ~15 µs in numpy) and its Metis form is four regression trees, one per "
          "threshold (four walks, ~4.6 µs in Python), while the lRLA's 8 → 300 → 4 network against its one tree gives "
          f"22-44× (row 'lRLA: DNN (numpy) / tree (Python)') ({_DOC}, 'AuTO'; `rtclab metis auto`)",
          variant="sRLA", metric="p50 decision latency ratio"),
    Cause(r"Deployment", "dash.js, not the tree: the live heap of each page during playback is dominated by dash.js' "
          "own state, which grows with the segments a page has fetched, and the fixed page (300 kbit/s chunks) fetches "
          "about twice the tree page's in the same seconds (the rows' notes), so the tree page's extra over it is at or "
          "below zero: from one load Pensieve / tree has no value (over several the row gives the bound Pensieve / "
          "the fixed page's spread). Before playback, where both pages hold only their "
          "scripts, the tree keeps about 0.01 MB and Pensieve 2.8 MB (row 'extra JS heap ratio at ready'); the Metis "
          "pages read performance.memory without collecting garbage first, which adds collector timing to both "
          f"({_DOC}, 'Deployment case'; `rtclab metis deploy --tfjs 0.14.1`)", metric="extra JS heap ratio, (mean|peak)"),
    Cause(r"Deployment", "resolution: the tree adds 4.7 KB (31 ms at 1200 kbit/s), and DevTools throttling delivers "
          "data in steps: over three loads the tree page is ready either with the fixed page or about 50 ms after it, "
          "from run to run (the row 'Metis tree over fixed, added page-load time' and its note), against the fixed "
          "page's own spread of 5-80 ms. When the tree's addition is beyond that spread the ratio lands at 150-250×; "
          "within it, the row gives the bound Pensieve / spread (120-830× seen: a bound under 156× means the spread "
          "was wide, not that the tree was slow), and from a single load it has no value "
          f"({_DOC}, 'Deployment case'; `rtclab metis deploy --tfjs 0.14.1`)", metric="added page-load time ratio"),
    Cause(r"Deployment", "measurement: the published 27× is the Metis README's figure for its own pages and machine; "
          "here one tf.js (CPU backend) decision takes about 1 ms against a few microseconds for the tree's walk "
          f"in the same page ({_DOC}, 'Deployment case'; `rtclab metis deploy`)", metric="decision latency ratio"),
    Cause(r"Global system: hypergraph", "the entropy term keeps falling as the masks saturate: Adam at lr 0.001 moves W "
          "about linearly, by at most ~2 in B.5's 2,000 steps (sigmoid 0.88), so the total loss is still falling 8 % "
          "over the last 10 % of them and 6 % at 8,000 steps, while the kept/dropped decisions have settled (row "
          f"'share of kept/dropped decisions changed') ({_DOC}, 'Global systems'; `rtclab metis explain --model "
          "python/rtclab/metis/models/routenet.npz --steps 8000`)", metric="relative loss change"),
    Cause(r"Resampling", "one conversion per dataset cannot settle it: uniform sampling on a second seed moves a "
          "dataset's QoE as much as resampling does on 3 of 8 (rows 'Resampling cause'); beyond that noise the "
          "critic's Eq. 5.1 helps on 2 and hurts on 3 (xu5g most), and the released code's proxy helps on fewer "
          "still. The dissertation names neither its datasets nor its seeds; the share moves in steps of 1/8 "
          f"here ({_DOC}, 'Resampling'; `rtclab repro metis`)"),
    Cause(r"(Tree vs DNN|Leaf-count|Pruning)", f"the released pipeline's hold-out draws 200 000 points with replacement "
          f"before its 80/20 split, so the pruning hold-out scores training states and the trees over-fit (at 30 DAgger "
          f"iterations a distinct-state hold-out gives 0.965-0.997 at ≤ 200 leaves; fewer iterations leave every tree "
          f"further off), and reward-aware pruning is myopic under linear QoE (accuracy pruning 0.92-0.93) ({_DOC}, "
          f"'What the reproduction shows'; `rtclab repro metis`)"),
    Cause(r"Performance retention", "the outage-heavy families (rest-wifi, rest1, xu5g) turn DAgger against the "
          "teacher: random-start rollouts stall for minutes, the student's outage states join the data labelled "
          "'lowest bitrate' and the later trees stay low on held-out traces without outages; the first iteration's "
          "tree (teacher's states only) keeps 0.99-1.00 of the median in 10 of the 11 such cells whose chosen tree "
          f"keeps < 0.95 (each cell's note) ({_DOC}, 'Performance retention'; `rtclab repro metis`)"),
    Cause(r"Design case", "training length: the paper trains both networks 800,000 iterations (the modified one reaches "
          "at ~250,000 the QoE the original ends with); these rows train 500 × --runs iterations from one seed. Longer runs "
          "show no gap yet: at 12,000 iterations (seeds 0 and 1) the modified network ends at 1.006 and 0.998 of "
          "the original's test QoE and reaches the original's final level later, not earlier — within one seed's "
          "evaluation noise (±0.05); 800,000 iterations take about 17 hours per network on one core here "
          f"({_DOC}, 'Design case'; `rtclab metis design --iterations 12000 --seeds 0,1`)"),
    Cause(r"Debug: oversampling", "the oversampled tree's QoE follows the plain tree's (row 'Tree vs DNN … Metis "
          "(reward-aware CCP)' of the same run): oversampling the missing bitrates is not what is short; the plain "
          f"tree's gap is, and that is the hold-out and pruning above ({_DOC}, 'What the reproduction shows'; "
          "`rtclab repro metis`)"),
]


#: The RouteNet-style model rtclab ships (trained on rtclab's own runs; how: metis/models/README.md).
ROUTENET_MODEL = Path(__file__).resolve().parents[1] / "metis" / "models" / "routenet.npz"


def _stand_in_rows(t: str, res: dict, suffix: str, lemna: str = "LEMNA (KMeans + mixture, fused lasso)",
                   sizes: bool = False) -> list[Row]:
    """The baseline / Metis rows of one `baselines.compare` result (each stand-in at the cluster
    count kindest to it)."""
    m = res["metis"]
    rows = []
    for key, f in res.items():
        if key in ("metis", "metis_local_subset", "lime", "lemna", "sweep"):
            continue
        base, k = key.rsplit("_", 1)
        label = {"lime_kmeans": "LIME, released (KMeans + linear)", "lemna_kmeans": lemna,
                 "lime_centres": "LIME package (explanations at KMeans centres)"}[base]
        v = f"{label}, {k} clusters{suffix}"
        held = f"; the stand-in holds {res['sweep'][(base, int(k))][1]} numbers" if sizes else ""
        rows.append(Row(t, v, "baseline / Metis error rate", f.error_rate / max(m.error_rate, 1e-9), "1.2-1.7",
                        f"baseline {f.error_rate:.3f} vs Metis {m.error_rate:.3f}{held}", better="higher"))
        rows.append(Row(t, v, "baseline / Metis RMSE", f.rmse / max(m.rmse, 1e-9), "1.2-3.2",
                        f"baseline {f.rmse:.3f} vs Metis {m.rmse:.3f}", better="higher"))
    return rows


def fidelity_rows(teacher, tr_env, te_env, pol, trees: dict, local_states: int = 40,
                  clusters: tuple[int, ...] = (5, 20, 40)) -> list[Row]:
    """B.7/B.8: Metis against LIME and LEMNA on the fidelity to Pensieve's DNN (error rate and
    RMSE of the action index, as the released interpret-auto scripts), on the held-out traces."""
    from rtclab import _core
    from rtclab.metis import baselines as bl
    from rtclab.metis import evaluate as ev

    def states(env):
        return np.ascontiguousarray(ev.collect_states(env, pol["pensieve-sampled"]), dtype=np.float64)

    def feats(S):
        F = np.empty((len(S), 25))
        _core.abr_features(S, F)
        return F

    S_tr, S_te = states(tr_env), states(te_env)
    X_tr, X_te = feats(S_tr), feats(S_te)

    def local_of(S):
        return lambda i: (lambda F: teacher.probs(bl.pensieve_states(F, S[i])))

    rows: list[Row] = []
    t = (f"Fidelity to Pensieve's DNN: Metis vs LIME and LEMNA ({len(X_te)} held-out states; stand-ins fitted on "
         f"{len(X_tr)} training states; error rate = share of actions ≠ the DNN's, RMSE of the action index)")
    for tree_name, tree in trees.items():
        res = bl.compare(teacher.probs(S_tr), teacher.probs(S_te), local_of(S_tr), local_of(S_te), tree.predict,
                         X_tr, X_te, bl.PENSIEVE_GROUPS, local_states=local_states, clusters=clusters)
        m = res["metis"]
        rows.append(Row(t, f"Metis tree ({tree_name}, {tree.leaf_count} leaves)", "error rate", m.error_rate, "–",
                        f"RMSE {m.rmse:.3f}"))
        rows += _stand_in_rows(t, res, f", vs tree {tree_name}")
        ts = "Fidelity by stand-in size (error rate on the held-out states; size = numbers the stand-in holds)"
        rows.append(Row(ts, f"Metis tree ({tree_name})", "error rate", m.error_rate, "–",
                        f"{tree.leaf_count} leaves: {2 * (tree.node_count - tree.leaf_count) + tree.leaf_count} numbers "
                        "(a feature and a threshold per split, a value per leaf)"))
        for (base, k), (f, size) in sorted(res["sweep"].items()):
            rows.append(Row(ts, f"{base}, {k} clusters", "error rate", f.error_rate, "–", f"{size} numbers"))
        tl = f"Local fidelity at the explained state (first {local_states} held-out states): context, not the paper's comparison"
        for key, label in (("lime", "LIME package, explained at each state"), ("lemna", "LEMNA (paper), explained at each state"),
                           ("metis_local_subset", f"Metis tree ({tree_name}) on the same states")):
            if key != "metis_local_subset" and tree_name != next(iter(trees)):
                continue
            rows.append(Row(tl, label, "error rate", res[key].error_rate, "–", f"RMSE {res[key].rmse:.3f}"))
    return rows


def global_rows(model_path: Path = ROUTENET_MODEL, samples: int = 16, steps: int = 2000) -> list[Row]:
    """B.5: the shipped RouteNet-style model's error on fresh samples of a held-out topology
    (GEANT2) and of NSFNet, the hypergraph mask on NSFNet (3 seeds) and the reroute it suggests,
    evaluated by the model and run in the simulator."""
    import tempfile

    from rtclab.metis import netdata
    from rtclab.metis import routenet as rn
    from rtclab.metis.globalsys import explain_run

    rows: list[Row] = []
    model = rn.Model.load(model_path)
    trained_on = ", ".join((model.info or {}).get("train_topologies", []))
    with tempfile.TemporaryDirectory() as tmp:
        spec = netdata.DatasetSpec(["geant2", "nsfnet"], samples, 3, (0.3, 0.9), 10.0, 11)
        netdata.generate(spec, Path(tmp) / "test", progress=False)
        t = f"Global system: RouteNet-style delay model trained on rtclab runs ({trained_on})"
        for b in rn.batches_of(netdata.read_samples(Path(tmp) / "test")):
            e = rn.relative_errors(model, [b])
            held = "held-out topology" if b.topology not in trained_on else "topology trained on, new samples"
            rows.append(Row(t, f"{b.topology} ({held})", "median relative error of mean path delay",
                            float(np.median(e)), "–", f"p90 {np.percentile(e, 90):.1%}, mean {e.mean():.1%} over "
                            f"{e.size} paths of {len(b)} fresh samples (10 s each)"))
            rows.append(Row(t, f"{b.topology} ({held})", "p90 relative error", float(np.percentile(e, 90)), "–"))
        s = explain_run(str(model_path), str(Path(tmp) / "explain"), "nsfnet", steps=steps, seeds=3, verbose=False)
    t = "Global system: hypergraph interpretation (NSFNet, shortest paths, busiest link at 0.7 load)"
    for k, v in s["loss"].items():
        rows.append(Row(t, k, "mask loss last / first", v["last"] / v["first"], "–",
                        f"{v['first']:.3f} → {v['last']:.3f}; fidelity MSE {v['last_fidelity']:.4f}"))
    rows.append(Row(t, "3 seeds (largest)", "relative loss change, last 10 % of steps", s["convergence"], "< 0.02 (converges)",
                    "spec B.9 acceptance test 4: the mask loss converges"))
    rows.append(Row(t, "3 seeds (largest)", "share of kept/dropped decisions changed in the last 10 % of steps",
                    s["decision_flips"], "< 0.01 (converges)", f"mask mean {s['mask']['mean']:.2f}, "
                    f"{s['mask']['share_above_0.5']:.0%} of the {s['connections']} connections kept"))
    rows.append(Row(t, "3 seeds", "top-5 connection overlap between seeds (mean of pairs)", s["top_overlap"]["mean"],
                    ">= 0.8 (stable)", "spec B.9 acceptance test 4: the top connections are stable across seeds; "
                    "pairs " + ", ".join(f"{p} {o:.0%}" for p, o in zip(s["top_overlap"]["pairs"], s["top_overlap"]["overlap"]))))
    a = s["adjustment"]
    t = (f"Global system: ad-hoc adjustment, path {a['pair'][0]}->{a['pair'][1]} rerouted by Dijkstra over mask "
         "weights, evaluated by the model and by the simulator")
    for name in ("mask", "load"):
        e = a[name]
        if not e["changed"]:
            rows.append(Row(t, f"{name} weights", "route changed", 0.0, "–", "Dijkstra kept the route"))
            continue
        for what in ("predicted", "simulated"):
            rows.append(Row(t, f"{name} weights, {what}", "rerouted path's delay change (ms)",
                            e[what]["path_ms"] - a["before"][what]["path_ms"], "–",
                            f"{a['before'][what]['path_ms']:.2f} → {e[what]['path_ms']:.2f} ms; network mean "
                            f"{a['before'][what]['mean_ms']:.2f} → {e[what]['mean_ms']:.2f} ms"))
    return rows


def retention_rows(sets: dict, iterations: int, keep: list | None = None) -> list[Row]:
    """Fig 5.6: tree / teacher at p10-p90 of the normalised per-trace QoE, for Pensieve and
    RobustMPC × lin/log/HD QoE × every dataset (`rtclab.metis.retention`); `keep` receives the
    cells (for the plot)."""
    from rtclab.metis import retention as ret

    cells = ret.study(sets, iterations)
    if keep is not None:
        keep.extend(cells)
    t = "Performance retention: tree / teacher normalised QoE at the median of the held-out traces (Fig 5.6)"
    rows = []
    for c in cells:
        r = c.ratios
        rollouts = [e["rollout_qoe"] for e in c.log]
        rows.append(Row(t, f"{c.teacher}, {c.qoe} QoE, {c.dataset}", "p50 ratio", r[50], "–",
                        f"p10 {r[10]:.3f}, p25 {r[25]:.3f}, p75 {r[75]:.3f}, p90 {r[90]:.3f}; {c.test_traces} test / "
                        f"{c.train_traces} train traces; {c.leaves} leaves (iteration {c.selected + 1}); DAgger "
                        f"rollout QoE {min(rollouts):.0f} to {max(rollouts):.0f}; the first iteration's tree "
                        f"(teacher's states only) p50 {c.first_ratios[50]:.3f}"))
    t = "Performance retention: share of cells whose median degradation is under 5 % (Fig 5.6)"
    for name in [*ret.TEACHERS, "all"]:
        sel = [c for c in cells if name in ("all", c.teacher)]
        ok = [c for c in sel if c.ratios[50] >= 0.95]
        bad = ", ".join(f"{c.qoe}/{c.dataset} {c.ratios[50]:.2f}" for c in sel if not c.ratios[50] >= 0.95)
        rows.append(Row(t, name, "share of teacher × QoE × dataset cells", len(ok) / len(sel),
                        "> 0.5 (most median degradations < 5 %)", f"{len(ok)} of {len(sel)}; below: {bad or 'none'}"))
    return rows


def design_rows(train, test, iterations: int, seed: int = 0) -> list[Row]:
    """B.6.2: Pensieve trained by A3C as released, original vs last bitrate at the output layer,
    from one seed (`rtclab metis design` runs more)."""
    from rtclab.metis import a3c

    o, _ = a3c.train(train, test, False, iterations, seed, eval_every=max(1, iterations // 50))
    m, _ = a3c.train(train, test, True, iterations, seed, eval_every=max(1, iterations // 50))
    c = a3c.compare(o, m)
    lo, lm = c["original_final_qoe"], c["modified_final_qoe"]
    reach_o, reach_m = c["original_reaches_its_final_level_at"], c["modified_reaches_it_at"]
    t = (f"Design case: Pensieve with the last bitrate at the output layer (A3C as released, 16 agents, "
         f"{iterations} iterations, seed {seed}; test QoE on the {len(test)} held-out Norway traces)")
    rows = [Row(t, "modified / original", "final test QoE ratio", c["modified_vs_original"], "1.051",
                f"original {lo:.3f}, modified {lm:.3f} (smoothed over the last 10 % of {len(o.test_qoe)} "
                f"evaluations); {o.seconds + m.seconds:.0f} s on one core", better="higher")]
    saved = c["iterations_saved"] / iterations if c["iterations_saved"] is not None else None
    rows.append(Row(t, "modified vs original", "share of the run saved reaching the original's final QoE", saved,
                    "0.69 (550k of 800k iterations)", f"original reaches it at iteration {reach_o}, modified at "
                    f"{reach_m}", better="higher"))
    return rows


def _bound_note(s: dict, ratio: str, key: str, scale: float, unit: str) -> str:
    n = s["fixed_spread"][key]
    spread = f"the fixed page's spread over {s['runs']} loads {n * scale:.3f} {unit}" if n is not None else "one load"
    if s["added"]["tree"][key] is None:
        return "not measured for the tree"
    tree = s["added"]["tree"][key] * scale
    if s["bounds"][ratio]:
        return f"a lower bound, Pensieve / spread: the tree adds {tree:+.3f} {unit}, within {spread}"
    return f"the tree adds {tree:+.3f} {unit} ({spread})"


def deploy_rows(tree, runs: int = 3, seconds: float = 12.0) -> list[Row]:
    """B.6.4 (issue 43 item 6): the tree and Pensieve (tf.js 0.14.1, the Metis page's version) as the ABR of
    dash.js pages in headless Chromium at 1200 kbit/s and 80 ms, `runs` loads each (medians), against the
    fixed page."""
    import tempfile

    from rtclab.metis import deploy, webassets
    from rtclab.metis.browser import BrowserMissing

    t = (f"Deployment: dash.js pages in headless Chromium (1200 kbit/s, 80 ms; tf.js 0.14.1 as the Metis page; "
         f"{runs} loads each)")
    try:
        assets = webassets.ensure(tfjs="0.14.1")
        with tempfile.TemporaryDirectory() as tmp:
            s, _ = deploy.measure_site(Path(tmp) / "site", tree, assets, runs=runs, seconds=seconds,
                                       rate_kbps=1200.0, rtt_ms=80.0)
    except (BrowserMissing, webassets.AssetsMissing) as e:
        return [Row(t, "Pensieve (tf.js) over fixed", "added page size (KB)", None, "1370", f"not measured: {e}",
                    cause=f"this machine lacks the browser case's tools ({e}); `make chromium web-assets` and "
                          f"`pip install playwright` bring them ({_DOC}, 'Deployment case')")]
    a, r, p = s["added"], s["ratios"], s["pages"]
    kb = {k: p[k]["page_bytes"] / 1000 for k in p}
    rows = [Row(t, "Pensieve (tf.js) over fixed", "added page size (KB)", a["pensieve"]["page_kb"], "1370",
                f"pages {kb['fixed']:.1f} / {kb['tree']:.1f} / {kb['pensieve']:.1f} KB (fixed / tree / Pensieve)"),
            Row(t, "Metis tree over fixed", "added page size (KB)", a["tree"]["page_kb"], "–",
                f"tree.js ({tree.leaf_count} leaves) and the chunk-size table"),
            Row(t, "Pensieve (tf.js) over fixed", "added page-load time (s)", a["pensieve"]["load_s"], "9.36"),
            Row(t, "Metis tree over fixed", "added page-load time (s)", a["tree"]["load_s"], "0.06", abs_tol=0.05),
            Row(t, "Pensieve / tree", "added page-load time ratio", r["load"], "156", better="higher",
                note=_bound_note(s, "load", "load_s", 1000, "ms")
                + f"; load to ready: fixed {p['fixed']['ready_ms'] / 1000:.3f} s, tree {p['tree']['ready_ms'] / 1000:.3f} s, "
                  f"Pensieve {p['pensieve']['ready_ms'] / 1000:.3f} s")]
    heap_note = (f"extra live heap over fixed, mean/peak: Pensieve {a['pensieve']['heap_mean_mb']:+.3f}/"
                 f"{a['pensieve']['heap_peak_mb']:+.3f} MB, tree {a['tree']['heap_mean_mb']:+.3f}/"
                 f"{a['tree']['heap_peak_mb']:+.3f} MB; video chunks fetched: fixed {p['fixed']['chunks']:.0f}, "
                 f"tree {p['tree']['chunks']:.0f}, Pensieve {p['pensieve']['chunks']:.0f}")
    rows.append(Row(t, "Pensieve / tree", "extra JS heap ratio, mean (playback)", r["heap_mean"], "4.0",
                    _bound_note(s, "heap_mean", "heap_mean_mb", 1, "MB") + "; " + heap_note, better="higher"))
    rows.append(Row(t, "Pensieve / tree", "extra JS heap ratio, peak (playback)", r["heap_peak"], "6.6",
                    _bound_note(s, "heap_peak", "heap_peak_mb", 1, "MB") + "; " + heap_note, better="higher"))
    rows.append(Row(t, "Pensieve / tree", "extra JS heap ratio at ready (before playback)", r["heap_ready"], "–",
                    _bound_note(s, "heap_ready", "heap_ready_mb", 1, "MB")
                    + f"; live heap at ready over fixed: Pensieve {a['pensieve']['heap_ready_mb']:+.3f} MB, tree "
                      f"{a['tree']['heap_ready_mb']:+.3f} MB"))
    rows.append(Row(t, "Pensieve (tf.js) / tree (JS)", "decision latency ratio (mean)", r["decision"], "27×",
                    f"one decision: tree {p['tree']['decision_us']:.1f} µs, Pensieve {p['pensieve']['decision_us']:.0f} µs "
                    f"(tf.js CPU backend)", better="higher"))
    return rows


def auto_rows(runs: int = 1, local_states: int = 40) -> list[Row]:
    """B.2/B.8 for AuTO (issue 43 item 3): both agents trained on rtclab's fabric at a scale set by
    `runs`, converted by Metis, FCT of DNNs vs trees vs baselines on the same held-out flows,
    conversion time, decision latency; then LIME and LEMNA against the lRLA's tree (item 4)."""
    from types import SimpleNamespace

    from rtclab.metis import auto as au
    from rtclab.metis import autorun
    from rtclab.metis import baselines as bl

    runs = max(1, runs)
    opts = SimpleNamespace(workload="websearch", load=au.LOAD, srla_steps=400 * runs, lrla_episodes=30 * runs,
                           iterations=3, episodes=2, max_leaves=100, test_seeds=4 * runs, test_seconds=2.0, seed=0)
    st = autorun.study(opts)
    s = st.summary
    rows: list[Row] = []
    t = (f"AuTO on rtclab's datacenter fabric (web-search sizes, load {opts.load}, 10 Gbit/s, 8 strict-priority "
         f"queues; sRLA {opts.srla_steps} DDPG decisions, lRLA {opts.lrla_episodes} REINFORCE episodes; FCT over "
         f"{opts.test_seeds} × {opts.test_seconds:g} s of held-out arrivals, drained: the same flows for every policy)")
    label = {"dnn": "AuTO DNNs (sRLA + lRLA)", "tree": "Metis trees (sRLA + lRLA)",
             "dnn-srla": "sRLA DNN, long flows fair-shared", "tree-srla": "sRLA trees, long flows fair-shared",
             "dnn-lrla": "PIAS thresholds + lRLA DNN", "tree-lrla": "PIAS thresholds + lRLA tree",
             "pias": "PIAS thresholds (10 KB/100 KB/1 MB/10 MB), long flows fair-shared",
             "pias+las": "PIAS thresholds + least-attained-service long flows", "fair": "one queue (fair sharing)"}
    for name, f in s["fct"].items():
        rows.append(Row(t, label[name], "mean FCT (ms)", f["mean_ms"], "–",
                        f"p99 {f['p99_ms']:.2f} ms; flows < 100 KB p99 {f['short_p99_ms'] * 1e3:.1f} µs; flows ≥ 10 MB "
                        f"mean {f['long_mean_ms']:.1f} ms; mean slowdown {f['mean_slowdown']:.3f}; {f['flows']} flows"))
    c = s["conversion"]
    note = (f"lRLA tree {c['lrla_leaves']} leaves (hold-out accuracy {c['lrla_holdout_accuracy']:.3f}), sRLA trees "
            f"{c['srla_leaves']} leaves (hold-out RMSE {', '.join(f'{v:.3f}' for v in c['srla_holdout_rmse'])})")
    for key, who in (("", "trees / DNNs, both agents"), ("-srla", "sRLA trees / DNN"), ("-lrla", "lRLA tree / DNN")):
        r = s["tree_vs_dnn"][key]
        rows.append(Row(t, who, "mean FCT ratio", r["mean"], "1.00 (within 2 %)", note if not key else
                        f"flows < 100 KB p99 ratio {r['short_p99']:.3f}", tol=0.0, abs_tol=0.02, better="lower"))
        rows.append(Row(t, who, "p99 FCT ratio", r["p99"], "1.00 (within 2 %)",
                        f"flows < 100 KB p99 ratio {r['short_p99']:.3f}; flows ≥ 10 MB mean ratio {r['long_mean']:.3f}",
                        tol=0.0, abs_tol=0.02, better="lower"))
    rows.append(Row(t, "Metis, both agents", "conversion time (s)", c["seconds"], "< 40",
                    f"{c['iterations']} DAgger iterations × {opts.episodes} rollouts of 2 s per agent; {c['samples']['lrla']} lRLA "
                    f"and {c['samples']['srla']} sRLA states"))
    lat, lr = s["latency_ns"], s["latency_ratio"]
    if lr["lrla"] is not None:
        rows.append(Row(t, "lRLA: DNN (numpy) / tree (Python)", "p50 decision latency ratio", lr["lrla"], "27×",
                        f"DNN {lat['lrla_dnn_ns'] / 1e3:.1f} µs, tree {lat['lrla_tree_ns'] / 1e3:.1f} µs per flow",
                        better="higher"))
    rows.append(Row(t, "sRLA: DNN (numpy) / 4 trees (Python)", "p50 decision latency ratio", lr["srla"], "27×",
                    f"DNN {lat['srla_dnn_ns'] / 1e3:.1f} µs, trees {lat['srla_tree_ns'] / 1e3:.1f} µs per decision",
                    better="higher"))
    # Item 4 on AuTO: LIME and LEMNA against the lRLA's tree, on states its DNN visits (under the
    # default thresholds, where it was trained).
    lrla = au.lrla_policy(st.lrla)

    def states(seeds):
        eps = [au.run(None, lrla, seed=x, record=True) for x in seeds]
        return np.concatenate([x for e in eps for x in e.lrla_states if len(x)])

    X_tr, X_te = states(range(3_000_000, 3_000_006)), states(range(3_100_000, 3_100_004))

    def probs(X):
        return au.lrla_forward(st.lrla, X)

    res = bl.compare(probs(X_tr), probs(X_te), lambda i: probs, lambda i: probs, st.conversion.lrla_tree.predict,
                     X_tr, X_te, [], local_states=local_states, clusters=(5, 20, 40))
    m = res["metis"]
    tf = (f"Fidelity to AuTO's lRLA: Metis vs LIME and LEMNA ({len(X_te)} held-out flow decisions; stand-ins fitted on "
          f"{len(X_tr)}; error rate and RMSE of the priority level)")
    tree = st.conversion.lrla_tree
    rows.append(Row(tf, f"Metis tree ({tree.leaf_count} leaves)", "error rate", m.error_rate, "–",
                    f"RMSE {m.rmse:.3f}; {2 * (tree.node_count - tree.leaf_count) + tree.leaf_count} numbers"))
    # The same states as the stand-ins, for a tree: is it the conversion or the tree's form?
    from sklearn.tree import DecisionTreeClassifier
    cart = DecisionTreeClassifier(random_state=0).fit(X_tr, probs(X_tr).argmax(axis=1))
    f_cart = bl.fidelity(cart.predict(X_te), probs(X_te).argmax(axis=1))
    rows.append(Row(tf, f"CART fitted on the stand-ins' training states (unpruned, {cart.get_n_leaves()} leaves)",
                    "error rate", f_cart.error_rate, "–", f"RMSE {f_cart.rmse:.3f}"))
    rows += _stand_in_rows(tf, res, "", lemna="LEMNA (KMeans + mixture)", sizes=True)
    tl = f"AuTO lRLA, local fidelity at the explained state (first {local_states} held-out decisions): context"
    for key, lab in (("lime", "LIME package, explained at each state"), ("lemna", "LEMNA (paper), explained at each state"),
                     ("metis_local_subset", "Metis tree on the same states")):
        rows.append(Row(tl, lab, "error rate", res[key].error_rate, "–", f"RMSE {res[key].rmse:.3f}"))
    return rows


def build(runs: int = 3) -> Reproduction:
    iterations = min(100, 3 * max(1, runs))

    def evaluate(_results) -> list[Row]:
        from rtclab import _core
        from rtclab.metis import evaluate as ev
        from rtclab.metis.convert import convert, tree_policy
        from rtclab.metis.pensieve import PensieveTeacher, load_traces, load_video

        rows: list[Row] = []
        teacher = PensieveTeacher()
        norway = load_traces()
        train, test = _split(norway)
        tr_env, te_env, all_env = _env(train), _env(test, "sequential"), _env(norway, "sequential")

        def conv(env=tr_env, **kw):
            return convert(env, teacher, iterations=kw.pop("iterations", iterations), **kw)

        def q(policy, env=te_env):
            return ev.per_trace_qoe(env, policy)

        pol = ev.policies(teacher)
        q_dnn, q_greedy, q_bb = q(pol["pensieve-sampled"]), q(pol["pensieve-greedy"]), q(pol["bb"])
        t = f"Teachers and baselines on the {len(test)} held-out Norway traces (linear QoE per chunk)"
        rows.append(Row(t, "Pensieve DNN, sampled", "mean QoE", float(q_dnn.mean()), "",
                        f"on all 142 traces {ev.per_trace_qoe(all_env, pol['pensieve-sampled']).mean():.3f}"))
        rows.append(Row(t, "Pensieve DNN, greedy", "mean QoE", float(q_greedy.mean()), ""))
        rows.append(Row(t, "buffer-based (BB)", "mean QoE", float(q_bb.mean()), ""))

        # Headline conversion: the released recipe, and the accuracy-pruned variant.
        t0 = time.perf_counter()
        faithful = conv()
        conv_s = time.perf_counter() - t0
        acc = conv(reward_aware=False)
        distinct = conv(holdout="distinct")
        acc_distinct = conv(reward_aware=False, holdout="distinct")
        t = f"Tree vs DNN (Norway, {iterations} DAgger iterations, ≤ 200 leaves)"
        for name, r in (("Metis (reward-aware CCP)", faithful), ("Metis, accuracy-pruned", acc),
                        ("reward-aware, distinct-state hold-out", distinct),
                        ("accuracy-pruned, distinct-state hold-out", acc_distinct)):
            qt = q(tree_policy(r.tree))
            rows.append(Row(t, name, "tree / DNN mean QoE", float(qt.mean() / q_dnn.mean()), "≥ 0.98 (within 2 %)",
                            f"tree {qt.mean():.3f} vs DNN {q_dnn.mean():.3f}; {r.tree.leaf_count} leaves, "
                            f"depth {r.tree.depth()}"))
            rows.append(Row(t, name, "tree / DNN median QoE", _pct_ratio(qt, q_dnn, 50), "most median losses < 5 %"))
            rows.append(Row(t, name, "tree / DNN p25 QoE", _pct_ratio(qt, q_dnn, 25), ""))
            if r is acc:
                acc_ratio = float(qt.mean() / q_dnn.mean())
        rows.append(Row(t, "Metis, accuracy-pruned (PiTree's recipe)", "mean QoE loss vs the DNN (PiTree, MM'19)",
                        1 - acc_ratio, "< 0.03", "PiTree (Metis' predecessor) prunes by accuracy and states an "
                        "average loss under 3 %; this is the same tree as the row 'Metis, accuracy-pruned'",
                        better="lower"))
        top = acc.tree
        def split(i):
            return f"{top.feature_names[top.feature[i]]} ≤ {top.threshold[i]:.3g}" if top.feature[i] >= 0 else "leaf"
        rows.append(Row("Interpretation: the accuracy-pruned tree's first two levels", "root", "split", None,
                        "first two levels split on the last bitrate", f"{split(0)}; then {split(top.left[0])} | "
                        f"{split(top.right[0])}"))
        rows.append(Row(t, "Metis (reward-aware CCP)", "conversion time (s)", conv_s, "< 40 s",
                        f"one core; {faithful.dataset_size} states collected"))

        # Leaf budget and pruning.
        t = "Leaf-count sensitivity (tree / DNN mean QoE)"
        for leaves in (10, 50, 200, 1000, 5000):
            for name, ra in (("reward-aware", True), ("accuracy", False)):
                r = conv(max_leaves=leaves, reward_aware=ra)
                qt = q(tree_policy(r.tree))
                rows.append(Row(t, f"≤ {leaves} leaves, {name}", "tree / DNN", float(qt.mean() / q_dnn.mean()),
                                ">= 0.90 (10-5000 leaves all within 10 %)", f"{r.tree.leaf_count} leaves chosen, "
                                f"full trees {r.iterations[-1]['full_leaves']}"))
        t = "Pruning to 200 leaves vs the unpruned CART (same recipe otherwise)"
        for name, ra in (("reward-aware", True), ("accuracy", False)):
            full = conv(max_leaves=None, prune_tree=False)
            small = conv(max_leaves=200, reward_aware=ra)
            qf, qs = q(tree_policy(full.tree)), q(tree_policy(small.tree))
            rows.append(Row(t, name, "QoE cost of ≤ 200 leaves", float(1 - qs.mean() / qf.mean()), "< 1 % (0.6 %)",
                            f"{full.tree.leaf_count} → {small.tree.leaf_count} leaves"))

        # Resampling across datasets.
        t = "Resampling (Eq. 5.1 with the critic) vs uniform, per dataset"
        sets = {"norway": norway}
        wz = datasets.locate("wireless-zhuge")
        for fam in FAMILIES:
            sets[fam] = load_traces(wz, prefix=fam + "_")
        tc = "Resampling cause: the released proxy and seed noise, per dataset"
        better = better_gap = beyond_noise = 0
        for name, traces in sets.items():
            tr, te = _split(traces)
            e_tr, e_te = _env(tr), _env(te, "sequential")
            qd = q(pol["pensieve-sampled"], e_te).mean()
            res = {}
            # The cause experiment (issue 41): the released code's proxy (`gap`), and uniform
            # sampling again on another seed, whose difference is the noise a one-conversion
            # comparison carries.
            for how, seed in (("uniform", 0), ("critic", 0), ("gap", 0), ("uniform", 1)):
                r = conv(env=e_tr, resample=how, iterations=max(10, iterations // 2), seed=seed)
                res[how if seed == 0 else f"{how} seed {seed}"] = q(tree_policy(r.tree), e_te).mean()
            better += res["critic"] > res["uniform"]
            better_gap += res["gap"] > res["uniform"]
            gain = res["critic"] - res["uniform"]
            noise = abs(res["uniform seed 1"] - res["uniform"])
            beyond_noise += abs(gain) > noise
            rows.append(Row(t, name, "QoE critic-resampled − uniform", float(gain), "",
                            f"uniform {res['uniform']:.3f}, critic {res['critic']:.3f}, DNN {qd:.3f}; "
                            f"{len(tr)} train / {len(te)} test traces"))
            rows.append(Row(tc, name, "QoE gap-resampled (released proxy) − uniform", float(res["gap"] - res["uniform"]),
                            "–"))
            rows.append(Row(tc, name, "|QoE uniform seed 1 − seed 0| (noise)", float(noise), "–"))
        rows.append(Row(t, "all datasets", "share of datasets where resampling helps", better / len(sets), "0.73",
                        better="higher"))
        rows.append(Row(tc, "all datasets", "share where the released proxy helps", better_gap / len(sets), "–"))
        rows.append(Row(tc, "all datasets", "share where |critic − uniform| exceeds the seed noise",
                        beyond_noise / len(sets), "–"))

        # Debug case: missing bitrates and the oversampling fix.
        t = "Debug: the missing bitrates (share of decisions on the held-out Norway traces)"
        h_dnn = ev.action_histogram(te_env, pol["pensieve-sampled"])
        h_tree = ev.action_histogram(te_env, tree_policy(faithful.tree))
        for i, kbps in ((2, 1200), (4, 2850)):
            rows.append(Row(t, f"{kbps} kbit/s", "DNN share", float(h_dnn[i] / h_dnn.sum()), "almost never"))
            rows.append(Row(t, f"{kbps} kbit/s", "tree share", float(h_tree[i] / h_tree.sum()), "almost never"))
        video = [(n, "\n".join(txt.split()[:48] * 6)) for n, txt in load_video()]
        fixed = [("fixed-3000kbps", "\n".join(f"{s} 3.0" for s in range(0, 3000)))]
        f_env = _env(fixed, "sequential", video=video, chunks=250)
        h3 = ev.action_histogram(f_env, pol["pensieve-sampled"])
        rows.append(Row("Debug: a fixed 3000 kbit/s link, 1000 s video", "Pensieve DNN", "share of 2850 kbit/s",
                        float(h3[4] / h3.sum()), "0.004", "shares 300..4300: " +
                        ", ".join(f"{x / h3.sum():.2f}" for x in h3)))
        over = conv(oversample={2: 10.0, 4: 50.0})
        qo = q(tree_policy(over.tree))
        ho = ev.action_histogram(te_env, tree_policy(over.tree))
        t = "Debug: oversampling 1200 ×10 and 2850 ×50 (Metis+Pensieve-O)"
        rows.append(Row(t, "tree-O / DNN", "tree-O / DNN mean QoE", float(qo.mean() / q_dnn.mean()), "1.01",
                        f"shares of 1200/2850: {ho[2] / ho.sum():.3f}/{ho[4] / ho.sum():.3f}", better="higher"))
        rows.append(Row(t, "tree-O / DNN", "tree-O / DNN p75 QoE", _pct_ratio(qo, q_dnn, 75), "1.04", better="higher"))

        rows += fidelity_rows(teacher, tr_env, te_env, pol, {"accuracy-pruned": acc.tree})

        # Decision latency and memory.
        t = "Decision latency per decision (one core) and model memory"
        states = np.ascontiguousarray(ev.collect_states(te_env, pol["pensieve-sampled"]), dtype=np.float64)
        feats = np.empty((len(states), 25))
        _core.abr_features(states, feats)
        tree_core = faithful.tree.core()
        net = _core.PensieveNetCore(teacher.actor.arrays)
        lt = np.array(_core.decision_latency_ns(tree_core, feats, 5))
        ln = np.array(_core.decision_latency_ns(net, states, 5))
        np_lat = ev.python_latency_ns(lambda s: teacher.probs(s[None, :]).argmax(), states[:500])
        py_tree = ev.python_latency_ns(lambda f: faithful.tree.predict_one(f), feats[:500])
        for name, v in (("tree (Rust, flat arrays)", lt), ("DNN (Rust, f32)", ln), ("DNN (numpy, one state)", np_lat),
                        ("tree (Python walk)", py_tree)):
            rows.append(Row(t, name, "p50 / p99 (µs)", float(np.percentile(v, 50) / 1e3), "",
                            f"p99 {np.percentile(v, 99) / 1e3:.3f} µs over {len(v)} decisions"))
        rows.append(Row(t, "DNN / tree, Rust", "p50 latency ratio", float(np.percentile(ln, 50) / np.percentile(lt, 50)),
                        "27×", "same language, same machine", better="higher"))
        rows.append(Row(t, "DNN (numpy) / tree (Python)", "p50 latency ratio",
                        float(np.percentile(np_lat, 50) / np.percentile(py_tree, 50)), "27×", better="higher"))
        rows.append(Row(t, "DNN / tree", "model memory ratio", net.parameter_count * 4 / tree_core.memory_bytes, "",
                        f"DNN {net.parameter_count * 4 / 1024:.0f} KiB (float32, released checkpoint), "
                        f"tree {tree_core.memory_bytes / 1024:.1f} KiB"))
        # The same pipeline on an RTC bandwidth estimator (teacher: a DNN imitating GCC).
        from types import SimpleNamespace

        from rtclab.metis import command
        args = SimpleNamespace(train=6, test=4, rounds=2, iterations=4, max_leaves=100, seed=0, max_seconds=300.0,
                               es_generations=8)
        with __import__("tempfile").TemporaryDirectory() as tmp:
            res = command.run_rtc(args, lambda fill: (fill(Path(tmp)), tmp)[1])
        t = f"RTC: tree as a controller vs its DNN and GCC ({args.test} held-out calls; challenge network score 0-70)"
        m = res["means"]
        for k, name in (("dnn_imitation", "DNN, imitation of gcc only"), ("dnn", "DNN teacher (+ ES fine-tuning)"), ("tree", "Metis tree (cc = \"tree\")"),
                        ("gcc", "gcc"), ("gcc_paper", "gcc_paper")):
            rows.append(Row(t, name, "network score", m[k]["network_score"], "",
                            f"throughput {m[k]['throughput_mbps']:.2f} Mbit/s, owd p95 {m[k]['owd_p95_ms']:.0f} ms, "
                            f"frame delay p95 {m[k]['frame_delay_ms_p95']:.0f} ms, freezes {m[k]['freeze_s']:.1f} s"))
        rows.append(Row(t, "tree / DNN", "network score ratio", m["tree"]["network_score"] / m["dnn"]["network_score"],
                        "within 2 %", f"{res['tree_leaves']} leaves; conversion {res['conversion_seconds']:.1f} s"))
        rows += retention_rows(sets, iterations, retention)
        rows += design_rows(train, test, 500 * max(1, runs))
        rows += auto_rows(runs)
        rows += deploy_rows(faithful.tree)
        rows += global_rows()
        return rows

    retention: list = []

    def plots(_results, out: Path) -> list[tuple[str, Path]]:
        if not retention:
            return []
        from rtclab.metis.retention import plot
        plot(retention, out / "retention.png")
        return [("Performance retention (Fig 5.6): tree / teacher normalised QoE", out / "retention.png")]

    notes = [
        "Hold-out: the released code draws 200 000 points with replacement and then splits them 80/20, so copies of "
        "one state land in both parts and the pruning hold-out cannot see over-fitting; holding out 20 % of the "
        "distinct states instead (`--holdout distinct`) is what closes most of the gap to the DNN (rows "
        "'distinct-state hold-out').",
        "RTC teacher: an MLP imitating send-side GCC from the 9-value step observation by DAgger (GCC as a shadow "
        "labels the states the DNN visits), then fine-tuned by evolution strategies on the challenge's network score. GCC's estimate depends on its own history (AIMD state, acknowledged "
        "rate), which the observation does not carry, so the imitation is loose. "
        "`rtclab metis rtc --rounds 0` shows behaviour cloning alone (overshoots), the default DAgger rounds undershoot.",
        "Reward-aware relabelling and candidate choice use one-step (myopic) rewards replayed from the saved "
        "environment state, as the released ccp.py; with linear QoE every up-switch without stalling earns the "
        "same one-step reward, so the criterion favours trees that stall later. Compare the 'accuracy-pruned' rows: "
        "`rtclab metis convert --no-reward-aware` shows the gap on the same data.",
        "The released ccp.py overwrites rather than sums the per-state reward (only the last state routed to a node "
        "counts); we sum, as the dissertation describes.",
        "Datasets: the FCC and Oboe sets are not available here; the wireless-zhuge trace families stand in.",
        "Global system: the RouteNet-style model is rtclab's own (trained on `rtclab metis dataset` runs; the "
        "published RouteNet checkpoint was trained on OMNeT++ data we do not have), so its error rows have no "
        "published value; the reroute rows are checked in the simulator, which the original authors could not do.",
        "LIME/LEMNA: the paper's comparison is of global stand-ins on held-out states, as the released scripts "
        "measure (KMeans clusters, a linear model per cluster; a mixture per cluster); each baseline's cluster "
        "count is the one kindest to it among 5/20/40. A local method explained at the very state it is scored on "
        "is near-exact by construction (rows 'Local fidelity'), which says nothing about standing in for the DNN.",
        "Retention (Fig 5.6): Pensieve's released actor (trained for linear QoE) and RobustMPC (which optimises the "
        "metric it is given) × linear/log/HD QoE × Norway and the wireless-zhuge families; HotDASH, the figure's "
        "third algorithm, has no released model. Per-trace QoE is normalised to [0, 1] by the lowest and highest "
        "per-trace QoE of teacher, tree and an always-lowest-bitrate player (the text does not say how it "
        "normalises). On rest-wifi/rest1 (deep outages: rest1_16 has 172 of 482 samples under 0.1 Mbit/s) the "
        "students' DAgger rollouts stall for minutes (rollout QoE in the cells' notes), their outage states join the "
        "data labelled 'lowest bitrate', and the later trees stay low on held-out traces; the first iteration's tree "
        "(teacher's states only, also in the notes) does not.",
        "Design case: both networks trained by our A3C (JAX) as released, for 500 × --runs iterations from one seed "
        "(the paper: 800,000); `rtclab metis design --iterations N --seeds 0,1,2` runs longer and more seeds.",
        "AuTO: rtclab's own fabric (one 10 Gbit/s port, 8 strict-priority queues, flow-level fluid sharing within a "
        "queue; web-search flow sizes at load 0.7) in place of the paper's testbed; the lRLA decides per long flow "
        "from 8 inputs (the released model reads 143: 5-tuples of 11 active and 11 finished flows, which a single "
        "port makes meaningless); both agents rewarded with the level of AuTO's objective (mean size / FCT), not "
        "the ratio of consecutive periods. Training scales with --runs; `rtclab metis auto` runs the full default.",
        "Deployment: dash.js 5.2.1 pages in the system's headless Chromium (Playwright), DevTools throttling at "
        "1200 kbit/s and 80 ms, tf.js 0.14.1 as the Metis page, one load per page and 10 s of playback; "
        "`rtclab metis deploy --runs 3` gives medians, `--tfjs 4.22.0` today's tf.js.",
        "Not run: DNN latency on a GPU (no accelerator in this task).",
    ]
    return Reproduction("metis", "Metis (Meng et al., SIGCOMM'20; dissertation ch. 5)", [], evaluate, [], notes,
                        extra_plots=plots)
