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
    Cause("Resampling", "follows the text (Eq. 5.1 with the critic); the released code's proxy is in the rows "
          "'Resampling cause'"),
    Cause(".*", "follows the released code: uniform resampling with replacement, its 80/20 hold-out of the draw, "
          "reward-aware CCP (per-state rewards summed, as the text says; the code assigns)"),
]
#: What explains the rows that are not reproduced (`rtclab.repro.explain`), first match wins.
GAP_CAUSES = [
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
    Cause(r"Debug: oversampling", "the oversampled tree's QoE follows the plain tree's (row 'Tree vs DNN … Metis "
          "(reward-aware CCP)' of the same run): oversampling the missing bitrates is not what is short; the plain "
          f"tree's gap is, and that is the hold-out and pruning above ({_DOC}, 'What the reproduction shows'; "
          "`rtclab repro metis`)"),
]


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
        return rows

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
        "Not run: AuTO, the design case (retraining Pensieve), the browser deployment (page size, load time), "
        "LIME/LEMNA, the hypergraph (RouteNet) mode, DNN latency on a GPU (no accelerator in this task).",
    ]
    return Reproduction("metis", "Metis (Meng et al., SIGCOMM'20; dissertation ch. 5)", [], evaluate, [], notes)
