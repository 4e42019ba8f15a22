"""Metis's conversion of a policy into a decision tree (spec `zhuge-metis.md` B.4; Meng et al.,
SIGCOMM'20 §4.2; the released `interpret-pensieve/rl.py` loop, our own code):

1. roll out the teacher on the environment (10 videos) → dataset D of (state, teacher action);
2. each iteration: resample D (uniform with replacement as released, or Eq. 5.1: p(s) ∝ V(s) −
   min_a Q(s, a) with the critic, Q = r + γ·V(s') from noise-free one-step replays, γ = 0.99;
   or the probability-gap proxy max π − min π), times a per-class oversampling factor;
   fit an unrestricted CART on 80 %, prune it by cost complexity with reward-aware relabelling
   to at most `max_leaves`, choosing the pruned tree by one-step reward on the other 20 %;
3. roll the student tree out, let the teacher relabel the states it visited (DAgger), add them
   to D, and remember the tree with its rollout reward;
4. successive halving over the remembered trees (keep the better half, re-estimate each with 50
   fresh rollouts) picks the result.

Every random draw comes from one seeded generator (and the environment's own stream), so a
conversion is reproducible.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from rtclab.metis.pensieve import FEATURE_NAMES
from rtclab.metis.tree import Pruned, Tree, prune

GAMMA = 0.99  # Pensieve's discount (a3c.py)


@dataclass
class Data:
    states: list = field(default_factory=list)     # 48 values each (teacher input)
    feats: list = field(default_factory=list)      # 25 (student input)
    positions: list = field(default_factory=list)  # 6 (environment position for replays)
    acts: list = field(default_factory=list)

    def extend(self, states, feats, positions, acts):
        self.states += list(states)
        self.feats += list(feats)
        self.positions += list(positions)
        self.acts += list(acts)

    def arrays(self):
        return (np.asarray(self.states), np.asarray(self.feats), np.asarray(self.positions),
                np.asarray(self.acts))


def rollout(env, policy: Callable, videos: int, trace: int | None = None):
    """Plays `videos` videos (random traces, or `trace` from its start); returns the decision
    states, features, positions, actions and each video's QoE sum."""
    states, feats, positions, acts, totals = [], [], [], [], []
    for _ in range(videos):
        env.reset(options={"trace": trace} if trace is not None else None)
        total, done = 0.0, False
        while not done:
            s = env.observation.reshape(-1).copy()
            f = env.core.features()
            a = int(policy(s, f))
            states.append(s)
            feats.append(f)
            positions.append(env.core.snapshot())
            acts.append(a)
            r, done = env.step_fast(a)
            total += r
        totals.append(total)
    return states, feats, positions, acts, totals


def tree_policy(tree: Tree) -> Callable:
    def act(_s, f):
        return tree.predict_one(f)
    return act


def teacher_policy(teacher, rng: np.random.Generator | None) -> Callable:
    def act(s, _f):
        return int(teacher.act(s[None, :], rng)[0])
    return act


def sample_weights(kind: str, teacher, env, states, positions, acts, oversample: dict[int, float] | None):
    n = len(states)
    if kind == "uniform":
        w = np.ones(n)
    elif kind == "gap":
        p = teacher.probs(states)
        w = p.max(axis=1) - p.min(axis=1)
    elif kind == "critic":
        rewards = np.empty((n, 6))
        nxt = np.empty((n, 6, 48))
        ends = np.asarray(env.core.one_step_transitions(np.ascontiguousarray(positions, dtype=float),
                                                        np.ascontiguousarray(states, dtype=float),
                                                        rewards, nxt), dtype=bool)
        v_next = teacher.value(nxt.reshape(-1, 48)).reshape(n, 6)
        q = rewards + GAMMA * np.where(ends[:, None], 0.0, v_next)
        w = teacher.value(states) - q.min(axis=1)
    else:
        raise ValueError(f"unknown resampling {kind!r} (uniform, gap or critic)")
    w = np.clip(np.nan_to_num(w), 0.0, None)
    if oversample:
        for cls, factor in oversample.items():
            w = np.where(acts == cls, w * factor, w)
    if w.sum() <= 0:
        w = np.ones(n)
    return w / w.sum()


@dataclass
class Result:
    tree: Tree
    seconds: float
    iterations: list[dict]
    selected_iteration: int
    dataset_size: int
    #: every iteration's pruned tree, in order (the candidates successive halving chose from)
    candidates: list = field(default_factory=list)


def convert(env, teacher, *, iterations: int = 20, videos: int = 10, max_samples: int = 200_000,
            max_leaves: int | None = 200, resample: str = "uniform", reward_aware: bool = True,
            oversample: dict[int, float] | None = None, test_videos: int = 50, seed: int = 0,
            prune_tree: bool = True, holdout: str = "resample",
            progress: Callable[[int, dict], None] | None = None) -> Result:
    """Converts `teacher` (a PensieveTeacher-like object: probs/act/value) into a tree on `env`
    (an rtclab/ABR-v0 environment with random trace order)."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    data = Data()
    s, f, p, _, _ = rollout(env, teacher_policy(teacher, rng), videos)
    data.extend(s, f, p, teacher.act(np.asarray(s), rng))
    students, log, candidates = [], [], []
    for it in range(iterations):
        states, feats, positions, acts = data.arrays()
        w = sample_weights(resample, teacher, env, states, positions, acts, oversample)
        idx = rng.choice(len(states), size=max_samples, p=w)
        if holdout == "distinct":
            # Every copy of a state on the same side: the hold-out never holds training states.
            val_states = rng.random(len(states)) < 0.2
            perm = np.concatenate([np.flatnonzero(~val_states[idx]), np.flatnonzero(val_states[idx])])
            n_train = int((~val_states[idx]).sum())
        elif holdout == "resample":
            perm = rng.permutation(len(idx))
            n_train = int(0.8 * len(idx))
        else:
            raise ValueError(f"holdout must be 'resample' or 'distinct', got {holdout!r}")
        # A draw with replacement holds duplicates; CART on the distinct rows weighted by their
        # counts grows the same tree (impurities and leaf votes are weighted sums) much faster.
        tr, w_tr = np.unique(idx[perm[:n_train]], return_counts=True)
        va, w_va = np.unique(idx[perm[n_train:]], return_counts=True)
        est = DecisionTreeClassifier(random_state=int(rng.integers(2**31)))
        est.fit(feats[tr], acts[tr], sample_weight=w_tr)
        full = Tree.from_sklearn(est, FEATURE_NAMES)
        if reward_aware:
            r_tr = env.one_step_rewards(positions[tr])
            r_va = env.one_step_rewards(positions[va])
        else:
            r_tr = r_va = None
        if prune_tree:
            pr = prune(full, est, max_leaves, feats[tr], feats[va], acts[va], r_tr, r_va, w_tr, w_va)
        else:  # the unpruned CART (the reference for the cost of pruning)
            pr = Pruned(full, 1, full.leaf_count, full.leaf_count, float("nan"))
        s, f, p, _, totals = rollout(env, tree_policy(pr.tree), videos)
        data.extend(s, f, p, teacher.act(np.asarray(s), rng))
        entry = {"iteration": it, "dataset": len(data.acts), "full_leaves": pr.full_leaves,
                 "leaves": pr.chosen_leaves, "rollout_qoe": float(np.mean(totals)),
                 "holdout_score": pr.score, "seconds": time.perf_counter() - t0}
        students.append([pr.tree, float(np.mean(totals)), it])
        candidates.append(pr.tree)
        log.append(entry)
        if progress:
            progress(it, entry)
    best = successive_halving(env, students, test_videos)
    return Result(best[0], time.perf_counter() - t0, log, best[2], len(data.acts), candidates)


def successive_halving(env, students: list, test_videos: int):
    """Keep the better half by current estimate, re-estimate those with `test_videos` rollouts,
    until one is left (the released `identify_best_policy`)."""
    pool = list(students)
    while len(pool) > 1:
        pool.sort(key=lambda e: -e[1])
        pool = pool[: (len(pool) + 1) // 2]
        for e in pool:
            e[1] = float(np.mean(rollout(env, tree_policy(e[0]), test_videos)[4]))
    return pool[0]
