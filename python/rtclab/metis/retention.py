"""Performance retention of Metis trees (dissertation §5.5.2, Fig 5.6; spec `zhuge-metis.md` B.7):
the tree's QoE over its teacher's at the 10/25/50/75/90th percentile of the held-out traces, for
every ABR teacher × QoE metric × dataset.

Teachers: Pensieve's released actor (trained for linear QoE; under log and HD QoE it is the same
policy, scored and converted with that metric's rewards) and RobustMPC (`rtclab.metis.mpc`), which
optimises whichever metric it is given. HotDASH, the third algorithm of the figure, is not here
(no released model). Datasets: Norway HSDPA and each `wireless-zhuge` family, every 5th trace
held out (`split_traces`).

Normalisation (the text: "QoE normalised before taking ratios, because raw QoE can be negative";
it does not say how): per teacher, metric and dataset, every per-trace mean QoE — the teacher's,
the tree's and the always-lowest-bitrate player's — is mapped linearly so that the lowest of them
all is 0 and the highest 1. The lowest-bitrate player's QoE joins the pool, so the scale reaches
down at least to "never adapting up" and does not hinge on the worst trace of the two policies
compared. Ratios of the normalised percentiles follow.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

PERCENTILES = (10, 25, 50, 75, 90)
METRICS = ("lin", "log", "hd")
TEACHERS = ("pensieve", "robustmpc")


@dataclass
class Cell:
    teacher: str
    qoe: str
    dataset: str
    train_traces: int
    test_traces: int
    teacher_qoe: list[float]
    tree_qoe: list[float]
    floor_qoe: list[float]
    leaves: int
    conversion_s: float
    selected: int = 0
    log: list = field(default_factory=list)
    ratios: dict[int, float] = field(default_factory=dict)
    #: the same ratios for the first iteration's tree (fitted on the teacher's own states only,
    #: before DAgger adds the student's): the cause experiment for cells that lose much
    first_ratios: dict[int, float] = field(default_factory=dict)


def normalised_ratios(teacher: np.ndarray, tree: np.ndarray, floor: np.ndarray,
                      percentiles=PERCENTILES) -> dict[int, float]:
    """tree / teacher at each percentile, after mapping all three per-trace QoE sets onto [0, 1]
    by their pooled minimum and maximum. A percentile where the teacher's normalised QoE is 0
    has no ratio (nan)."""
    pooled = np.concatenate([teacher, tree, floor])
    lo, hi = float(pooled.min()), float(pooled.max())
    span = hi - lo if hi > lo else 1.0
    t, s = (teacher - lo) / span, (tree - lo) / span
    out = {}
    for p in percentiles:
        a, b = float(np.percentile(s, p)), float(np.percentile(t, p))
        out[p] = a / b if b > 0 else float("nan")
    return out


def lowest_bitrate(_s, _f) -> int:
    return 0


def make_teacher(name: str, qoe: str):
    """The teacher object Metis converts and the policy that plays it on the test traces."""
    from rtclab.metis.convert import teacher_policy

    if name == "pensieve":
        from rtclab.metis.pensieve import PensieveTeacher
        t = PensieveTeacher()
        return t, teacher_policy(t, np.random.default_rng(0))
    if name == "robustmpc":
        from rtclab.metis.mpc import RobustMpcTeacher
        t = RobustMpcTeacher(qoe)
        return t, teacher_policy(t, None)
    raise ValueError(f"unknown ABR teacher {name!r} (known: {', '.join(TEACHERS)})")


def cell(teacher_name: str, qoe: str, dataset: str, traces: list[tuple[str, str]], iterations: int,
         seed: int = 0) -> Cell:
    """Converts one teacher under one QoE metric on one dataset's training traces and scores tree,
    teacher and the lowest-bitrate floor on its held-out traces."""
    import gymnasium

    import rtclab.gym  # noqa: F401
    from rtclab.metis import evaluate as ev
    from rtclab.metis.command import split_traces
    from rtclab.metis.convert import convert, tree_policy

    tr_i, te_i = split_traces(len(traces))
    if not tr_i or not te_i:
        raise ValueError(f"dataset {dataset}: {len(traces)} traces, need at least 2 (every 5th is held out)")
    mk = gymnasium.make
    tr_env = mk("rtclab/ABR-v0", traces=[traces[i] for i in tr_i], qoe=qoe, seed=seed).unwrapped
    te_env = mk("rtclab/ABR-v0", traces=[traces[i] for i in te_i], qoe=qoe, trace_order="sequential",
                seed=seed).unwrapped
    teacher, play = make_teacher(teacher_name, qoe)
    t0 = time.perf_counter()
    res = convert(tr_env, teacher, iterations=iterations, seed=seed)
    conv_s = time.perf_counter() - t0
    q_teacher = ev.per_trace_qoe(te_env, play, seed=seed)
    q_tree = ev.per_trace_qoe(te_env, tree_policy(res.tree), seed=seed)
    q_floor = ev.per_trace_qoe(te_env, lowest_bitrate, seed=seed)
    c = Cell(teacher_name, qoe, dataset, len(tr_i), len(te_i), q_teacher.tolist(), q_tree.tolist(),
             q_floor.tolist(), res.tree.leaf_count, conv_s, res.selected_iteration, res.iterations)
    c.ratios = normalised_ratios(q_teacher, q_tree, q_floor)
    q_first = ev.per_trace_qoe(te_env, tree_policy(res.candidates[0]), seed=seed)
    c.first_ratios = normalised_ratios(q_teacher, q_first, q_floor)
    return c


def study(datasets: dict[str, list[tuple[str, str]]], iterations: int, teachers=TEACHERS, metrics=METRICS,
          seed: int = 0, progress: Callable[[int, int, Cell], None] | None = None) -> list[Cell]:
    """Every teacher × metric × dataset cell, in that order."""
    todo = [(t, q, d) for t in teachers for q in metrics for d in datasets]
    cells = []
    for i, (t, q, d) in enumerate(todo):
        cells.append(cell(t, q, d, datasets[d], iterations, seed))
        if progress:
            progress(i + 1, len(todo), cells[-1])
    return cells


def plot(cells: list[Cell], path) -> None:
    """Fig 5.6's layout: one panel per teacher × metric, a box per dataset spanning the p10-p90
    ratios (whiskers), p25-p75 (box) and the median (line)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    teachers = list(dict.fromkeys(c.teacher for c in cells))
    metrics = list(dict.fromkeys(c.qoe for c in cells))
    fig, axes = plt.subplots(len(teachers), len(metrics), figsize=(4.2 * len(metrics), 3.2 * len(teachers)),
                             squeeze=False, sharey=True)
    for i, t in enumerate(teachers):
        for j, q in enumerate(metrics):
            ax = axes[i][j]
            row = [c for c in cells if c.teacher == t and c.qoe == q]
            stats = [{"label": c.dataset, "whislo": c.ratios[10], "q1": c.ratios[25], "med": c.ratios[50],
                      "q3": c.ratios[75], "whishi": c.ratios[90], "fliers": []} for c in row]
            ax.bxp(stats, showfliers=False)
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.axhline(0.95, color="tab:red", lw=0.8, ls="--")
            ax.set_title(f"{t}, {q} QoE", fontsize=10)
            ax.tick_params(axis="x", labelrotation=60, labelsize=8)
            if j == 0:
                ax.set_ylabel("tree / teacher (normalised QoE)")
    fig.suptitle("Metis performance retention (p10/25/50/75/90 over held-out traces; dashed: −5 %)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
