"""`rtclab metis convert`: an ABR teacher (Pensieve's released actor, or RobustMPC) → a decision
tree, written with its view and the conversion log; prints the tree's test QoE next to the
teacher's."""

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

    if args.teacher not in ("pensieve", "robustmpc"):
        raise ValueError(f"--teacher {args.teacher!r}: expected pensieve or robustmpc")
    if args.qoe not in ("lin", "log", "hd"):
        raise ValueError(f"--qoe {args.qoe!r}: expected lin, log or hd")
    if args.teacher == "robustmpc" and args.resample == "critic":
        raise ValueError("--resample critic needs the teacher's critic: RobustMPC has none (use uniform or gap)")
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
    if args.teacher == "robustmpc":
        from rtclab.metis.convert import teacher_policy
        from rtclab.metis.mpc import RobustMpcTeacher
        teacher = RobustMpcTeacher(args.qoe)
        play = teacher_policy(teacher, None)
        teacher_name = f"RobustMPC ({args.qoe} QoE)"
    else:
        teacher = PensieveTeacher(greedy=args.greedy_teacher)
        play = ev.policies(teacher, args.seed)["pensieve-greedy" if args.greedy_teacher else "pensieve-sampled"]
        teacher_name = "Pensieve"
    env = gymnasium.make("rtclab/ABR-v0", traces=train, qoe=args.qoe, seed=args.seed).unwrapped

    def progress(it, e):
        if not args.quiet:
            print(f"  iteration {it + 1}/{args.iterations}: dataset {e['dataset']}, tree {e['leaves']} leaves "
                  f"(full {e['full_leaves']}), rollout QoE {e['rollout_qoe']:.1f}", flush=True)

    res = convert(env, teacher, iterations=args.iterations, videos=args.videos, max_leaves=args.max_leaves,
                  resample=args.resample, reward_aware=not args.no_reward_aware, oversample=oversample,
                  seed=args.seed, progress=progress, holdout=args.holdout)
    t_env = gymnasium.make("rtclab/ABR-v0", traces=test, qoe=args.qoe, trace_order="sequential",
                           seed=args.seed).unwrapped
    t0 = time.perf_counter()
    q_tree = ev.per_trace_qoe(t_env, ev.tree_policy(res.tree), seed=args.seed)
    q_teacher = ev.per_trace_qoe(t_env, play, seed=args.seed)
    names = [f"{b} kbit/s" for b in BITRATES_KBPS]
    summary = {"teacher": ("robustmpc (Yin et al. SIGCOMM'15, as Pensieve's mpc.py)" if args.teacher == "robustmpc"
                           else "pensieve (released pretrain_linear_reward)"),
               "teacher_name": teacher_name, "qoe": args.qoe,
               "teacher_actions": ("deterministic" if args.teacher == "robustmpc"
                                   else "greedy" if args.greedy_teacher else "sampled"),
               "iterations": args.iterations, "videos_per_iteration": args.videos, "max_leaves": args.max_leaves,
               "resample": args.resample, "reward_aware_pruning": not args.no_reward_aware,
               "oversample": oversample, "holdout": args.holdout, "seed": args.seed, "conversion_seconds": res.seconds,
               "selected_iteration": res.selected_iteration, "leaves": res.tree.leaf_count,
               "nodes": res.tree.node_count, "depth": res.tree.depth(),
               "train_traces": len(train), "test_traces": len(test),
               "test_qoe_tree": float(q_tree.mean()), "test_qoe_teacher": float(q_teacher.mean()),
               # a ratio of means says nothing when the teacher's mean is not positive (log QoE is < 0)
               "tree_vs_teacher": float(q_tree.mean() / q_teacher.mean()) if q_teacher.mean() > 0 else None,
               "evaluation_seconds": time.perf_counter() - t0, "log": res.iterations}

    def fill(tmp: Path) -> None:
        res.tree.write(tmp / "tree.json")
        (tmp / "tree.svg").write_text(svg(res.tree, names), encoding="utf-8")
        (tmp / "tree.html").write_text(html_page(res.tree, f"Metis: {teacher_name} as a decision tree", names),
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


def parse_seeds(text: str) -> list[int]:
    """"0,1,2" → [0, 1, 2]."""
    try:
        seeds = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        seeds = []
    if not seeds or any(not 0 <= s < 2**31 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r}: expected distinct integers from 0 to 2^31 - 1, such as 0,1,2")
    return seeds


def run_design(args, write) -> dict:
    """`rtclab metis design`: the original and the modified Pensieve (last bitrate concatenated
    to the output layer) trained by A3C from the same seeds; test QoE against iterations."""
    from rtclab.metis import a3c
    from rtclab.metis.pensieve import load_traces

    seeds = parse_seeds(args.seeds)
    if args.iterations < 1 or args.eval_every < 1:
        raise ValueError("--iterations and --eval-every must be at least 1")
    if not 1 <= args.agents <= 256:
        raise ValueError(f"--agents {args.agents}: expected 1 to 256 (the released trainer runs 16)")
    traces = load_traces(args.traces)
    train_i, test_i = split_traces(len(traces))
    if not train_i or not test_i:
        raise ValueError(f"{len(traces)} traces: need at least 2 (every 5th is held out for testing)")
    train, test = [traces[i] for i in train_i], [traces[i] for i in test_i]
    curves, actors = [], {}
    for seed in seeds:
        for modified in (False, True):
            name = "modified" if modified else "original"

            def progress(i, q, name=name, seed=seed):
                if not args.quiet:
                    print(f"  {name} seed {seed}: iteration {i}/{args.iterations}, test QoE {q:.3f}", flush=True)

            c, tr = a3c.train(train, test, modified, args.iterations, seed, args.eval_every, args.agents, progress)
            curves.append(c)
            actors[f"{name}-seed{seed}"] = tr.actor_arrays()
    per_seed = [a3c.compare(*[c for c in curves if c.seed == seed]) for seed in seeds]
    lo = float(np.mean([p["original_final_qoe"] for p in per_seed]))
    lm = float(np.mean([p["modified_final_qoe"] for p in per_seed]))
    saved = [p["iterations_saved"] for p in per_seed if p["iterations_saved"] is not None]
    summary = {"iterations": args.iterations, "agents": args.agents, "seeds": seeds, "eval_every": args.eval_every,
               "train_traces": len(train), "test_traces": len(test),
               "entropy_weight": f"{a3c.ENTROPY_START} -> {a3c.ENTROPY_END} over the first "
                                 f"{a3c.ENTROPY_DECAY_SHARE:.3g} of the run",
               "original_final_qoe": lo, "modified_final_qoe": lm,
               "modified_vs_original": lm / lo if lo > 0 else None,
               "mean_iterations_saved": float(np.mean(saved)) if saved else None,
               "share_of_run_saved": float(np.mean(saved)) / args.iterations if saved else None,
               "per_seed": per_seed, "seconds": sum(c.seconds for c in curves),
               "curves": [{"variant": c.variant, "seed": c.seed, "iterations": c.iterations,
                           "test_qoe": c.test_qoe, "seconds": c.seconds} for c in curves]}

    def fill(tmp: Path) -> None:
        rows = ["variant,seed,iteration,test_qoe"]
        for c in curves:
            rows += [f"{c.variant},{c.seed},{i},{q:.6f}" for i, q in zip(c.iterations, c.test_qoe)]
        (tmp / "curves.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        (tmp / "design.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        for k, arrays in actors.items():
            np.savez(tmp / f"actor-{k}.npz", **arrays)
        plot_design(curves, tmp / "design.png")

    summary["out"] = str(write(fill))
    return summary


def plot_design(curves, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    colours = {"original": "tab:blue", "modified": "tab:orange"}
    for c in curves:
        ax.plot(c.iterations, c.test_qoe, color=colours[c.variant], alpha=0.8, lw=1.2,
                label=f"{c.variant} (seed {c.seed})")
    ax.set_xlabel("training iterations (16 agents × one video each)")
    ax.set_ylabel("test QoE per chunk (held-out Norway)")
    every = np.concatenate([c.test_qoe for c in curves])
    ax.set_ylim(max(float(every.min()), float(np.percentile(every, 5)) - 0.3), float(every.max()) + 0.1)
    ax.legend(fontsize=8)
    ax.set_title("Metis design case: Pensieve with the last bitrate at the output layer")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
