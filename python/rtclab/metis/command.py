"""`rtclab metis convert`: Pensieve's released actor → a decision tree, written with its view and
the conversion log; prints the tree's test QoE next to the teacher's."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from rtclab.metis.options import ConvertOptions, RtcOptions
from rtclab.metis.pensieve import BITRATES_KBPS


def parse_oversample(text: str | None) -> dict[int, float] | None:
    """"2=10,4=50" → {2: 10.0, 4: 50.0} (action index = factor)."""
    if not text:
        return None
    out = {}
    for part in text.split(","):
        k, sep, v = part.partition("=")
        try:
            a, f = int(k), float(v)
        except ValueError:
            a, f = -1, -1.0
        if not sep or not 0 <= a < 6 or not (f > 0 and np.isfinite(f)):
            raise ValueError(f"--oversample {text!r}: expected ACTION=FACTOR pairs such as 2=10,4=50 "
                             f"(actions 0-5, factors > 0)")
        out[a] = f
    return out


def split_traces(count: int, test_every: int = 5) -> tuple[list[int], list[int]]:
    """Every 5th trace (by name) is held out for testing, the rest trains."""
    test = list(range(0, count, test_every))
    return [i for i in range(count) if i % test_every], test


def run(args: ConvertOptions, write) -> dict:
    import gymnasium

    import rtclab.gym  # noqa: F401  (registers the environments)
    from rtclab.metis import evaluate as ev
    from rtclab.metis.convert import convert
    from rtclab.metis.pensieve import PensieveTeacher, load_traces
    from rtclab.metis.view import html_page, svg

    oversample = parse_oversample(args.oversample)
    if args.iterations < 1 or args.videos < 1:
        raise ValueError("--iterations and --videos must be at least 1")
    if args.max_leaves is not None and args.max_leaves < 2:
        raise ValueError("--max-leaves must be at least 2")
    traces = load_traces(args.traces)
    train_i, test_i = split_traces(len(traces))
    if not train_i or not test_i:
        raise ValueError(f"{len(traces)} traces: need at least 2 (every 5th is held out for testing)")
    train = [traces[i] for i in train_i]
    test = [traces[i] for i in test_i]
    teacher = PensieveTeacher(greedy=args.greedy_teacher)
    env = gymnasium.make("rtclab/ABR-v0", traces=train, seed=args.seed).unwrapped

    def progress(it, e):
        if not args.quiet:
            print(f"  iteration {it + 1}/{args.iterations}: dataset {e['dataset']}, tree {e['leaves']} leaves "
                  f"(full {e['full_leaves']}), rollout QoE {e['rollout_qoe']:.1f}", flush=True)

    res = convert(env, teacher, iterations=args.iterations, videos=args.videos, max_leaves=args.max_leaves,
                  resample=args.resample, reward_aware=not args.no_reward_aware, oversample=oversample,
                  seed=args.seed, progress=progress, holdout=args.holdout)
    t_env = gymnasium.make("rtclab/ABR-v0", traces=test, trace_order="sequential", seed=args.seed).unwrapped
    t0 = time.perf_counter()
    q_tree = ev.per_trace_qoe(t_env, ev.tree_policy(res.tree), seed=args.seed)
    q_teacher = ev.per_trace_qoe(t_env, ev.policies(teacher, args.seed)[
        "pensieve-greedy" if args.greedy_teacher else "pensieve-sampled"], seed=args.seed)
    names = [f"{b} kbit/s" for b in BITRATES_KBPS]
    summary = {"teacher": "pensieve (released pretrain_linear_reward)",
               "teacher_actions": "greedy" if args.greedy_teacher else "sampled",
               "iterations": args.iterations, "videos_per_iteration": args.videos, "max_leaves": args.max_leaves,
               "resample": args.resample, "reward_aware_pruning": not args.no_reward_aware,
               "oversample": oversample, "holdout": args.holdout, "seed": args.seed, "conversion_seconds": res.seconds,
               "selected_iteration": res.selected_iteration, "leaves": res.tree.leaf_count,
               "nodes": res.tree.node_count, "depth": res.tree.depth(),
               "train_traces": len(train), "test_traces": len(test),
               "test_qoe_tree": float(q_tree.mean()), "test_qoe_teacher": float(q_teacher.mean()),
               "tree_vs_teacher": float(q_tree.mean() / q_teacher.mean()) if q_teacher.mean() else None,
               "evaluation_seconds": time.perf_counter() - t0, "log": res.iterations}

    def fill(tmp: Path) -> None:
        res.tree.write(tmp / "tree.json")
        (tmp / "tree.svg").write_text(svg(res.tree, names), encoding="utf-8")
        (tmp / "tree.html").write_text(html_page(res.tree, "Metis: Pensieve as a decision tree", names),
                                       encoding="utf-8")
        (tmp / "conversion.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")

    summary["out"] = str(write(fill))
    return summary


def run_rtc(args: RtcOptions, write) -> dict:
    """`rtclab metis rtc`: train the GCC-imitating DNN, convert it to a tree, compare on held-out
    scenarios with GCC and the 2017 paper's GCC."""
    from rtclab.metis import rtc
    from rtclab.metis.view import html_page

    if args.train < 1 or args.test < 1 or args.rounds < 0 or args.iterations < 1:
        raise ValueError("--train, --test and --iterations must be at least 1, --rounds at least 0")
    train = list(range(args.seed * 1000 + 1, args.seed * 1000 + 1 + args.train))
    test = list(range(10_000_000 + args.seed * 1000, 10_000_000 + args.seed * 1000 + args.test))
    imitation, log = rtc.train_teacher(train, rounds=args.rounds, seed=args.seed, max_seconds=args.max_seconds)
    mlp, es_log = (rtc.rl_finetune(imitation, train, generations=args.es_generations, seed=args.seed)
                   if args.es_generations > 0 else (imitation, []))
    tree, conv_s = rtc.convert_rtc(mlp, train, iterations=args.iterations, max_leaves=args.max_leaves, seed=args.seed)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        tree_path = str(Path(tmp) / "tree.json")
        tree.write(tree_path)
        rows = []
        for s in test:
            scn = rtc.scenario(s)
            res = {"dnn_imitation": rtc.call_score(rtc.episode(scn, imitation.estimate, teacher=False)[2]),
                   "dnn": rtc.call_score(rtc.episode(scn, mlp.estimate, teacher=False)[2]),
                   "tree": rtc.call_score(rtc.native(scn, "tree", tree_path)),
                   "gcc": rtc.call_score(rtc.native(scn, "gcc")),
                   "gcc_paper": rtc.call_score(rtc.native(scn, "gcc_paper"))}
            rows.append({"scenario_seed": s, **{k: v for k, v in res.items()}})
    means = {k: {m: float(np.nanmean([r[k][m] if r[k][m] is not None else np.nan for r in rows]))
                 for m in rows[0][k]} for k in ("dnn_imitation", "dnn", "tree", "gcc", "gcc_paper")}
    summary = {"teacher": "MLP 2x64 imitating send-side gcc (DAgger), then ES fine-tuning on the network score",
               "training": log, "rl_finetuning": es_log,
               "train_scenarios": train, "test_scenarios": test, "conversion_seconds": conv_s,
               "tree_leaves": tree.leaf_count, "tree_depth": tree.depth(), "means": means, "per_scenario": rows}

    def fill(tmp: Path) -> None:
        mlp.save(tmp / "teacher_mlp.npz")
        tree.write(tmp / "tree.json")
        (tmp / "tree.html").write_text(html_page(tree, "Metis: the RTC teacher as a regression tree"), encoding="utf-8")
        (tmp / "rtc.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")

    summary["out"] = str(write(fill))
    return summary
