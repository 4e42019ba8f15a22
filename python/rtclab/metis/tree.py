"""Decision trees for Metis: flat arrays, vectorised prediction, rtclab's tree JSON, and
cost-complexity pruning with reward-aware relabelling (spec `zhuge-metis.md` B.4 step 3).

Pruning (Breiman et al., CART, ch. 3; Metis's released `ccp.py`): with R(t) = N_t · impurity(t)
(Gini for classification, MSE for regression) and, for an internal node, g(t) = (R(t) − R(T_t)) /
(|leaves(T_t)| − 1), repeatedly collapse the node with the smallest g (ties: the first in
pre-order). Only the collapsed node's ancestors change, so the sequence is computed with a heap in
O(n log n · depth). When a node collapses, Metis relabels it with the action whose one-step reward,
replayed from the saved environment state of every training sample routed through it, is largest
in sum (the released code keeps only the last sample's reward — an accumulation slip; we sum, as
the paper says). Every tree in the sequence with at most `max_leaves` leaves is a candidate; the
one with the best hold-out reward (or, without rewards, the best hold-out accuracy / MSE) wins.
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FORMAT = "rtclab-tree"


class TreeFileError(ValueError):
    """A tree file that cannot be used; the message names the file and the problem."""


@dataclass
class Tree:
    task: str                      # "classification" | "regression"
    feature: np.ndarray            # int64, −1 at leaves
    threshold: np.ndarray          # float64
    left: np.ndarray               # int64, −1 at leaves
    right: np.ndarray
    value: np.ndarray              # float64: the output at leaves (class label or number)
    histogram: np.ndarray          # per node: weighted class counts (classification) or [n, mean]
    feature_names: list[str]
    classes: list[float] = field(default_factory=list)

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_sklearn(cls, est, feature_names: list[str]) -> "Tree":
        t = est.tree_
        leaf = t.children_left == -1
        weighted = t.weighted_n_node_samples
        if hasattr(est, "classes_"):
            frac = t.value[:, 0, :]
            counts = frac / frac.sum(axis=1, keepdims=True) * weighted[:, None]
            classes = [float(c) for c in est.classes_]
            value = np.asarray(est.classes_, dtype=float)[counts.argmax(axis=1)]
            task = "classification"
        else:
            counts = np.stack([weighted, t.value[:, 0, 0]], axis=1)
            classes, value, task = [], t.value[:, 0, 0].astype(float), "regression"
        return cls(task, np.where(leaf, -1, t.feature).astype(np.int64),
                   np.where(leaf, 0.0, t.threshold).astype(float), t.children_left.astype(np.int64),
                   t.children_right.astype(np.int64), value, counts.astype(float), list(feature_names),
                   classes)

    # ---- queries --------------------------------------------------------------------------
    @property
    def node_count(self) -> int:
        return len(self.feature)

    @property
    def leaf_count(self) -> int:
        return int((self.feature < 0).sum())

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def depth(self) -> int:
        d = np.zeros(self.node_count, dtype=np.int64)
        for i in range(self.node_count):
            if self.feature[i] >= 0:
                d[self.left[i]] = d[self.right[i]] = d[i] + 1
        return int(d.max())

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The leaf each row of x reaches (x[f] <= threshold goes left, as CART)."""
        x = np.asarray(x, dtype=float)
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(f"the tree reads {self.n_features} features, got an array of shape {x.shape}")
        idx = np.zeros(len(x), dtype=np.int64)
        rows = np.arange(len(x))
        while True:
            f = self.feature[idx]
            inner = f >= 0
            if not inner.any():
                return idx
            go_left = x[rows, np.maximum(f, 0)] <= self.threshold[idx]
            idx = np.where(inner, np.where(go_left, self.left[idx], self.right[idx]), idx)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.value[self.apply(x)]

    def predict_one(self, x) -> float:
        i = 0
        feature, threshold, left, right = self._lists()
        while feature[i] >= 0:
            i = left[i] if x[feature[i]] <= threshold[i] else right[i]
        return self.value[i]

    def _lists(self):
        c = getattr(self, "_cache", None)
        if c is None:
            c = (self.feature.tolist(), self.threshold.tolist(), self.left.tolist(), self.right.tolist())
            object.__setattr__(self, "_cache", c)
        return c

    def parents(self) -> np.ndarray:
        p = np.full(self.node_count, -1, dtype=np.int64)
        inner = np.flatnonzero(self.feature >= 0)
        p[self.left[inner]] = inner
        p[self.right[inner]] = inner
        return p

    # ---- JSON -------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"format": FORMAT, "version": 1, "task": self.task, "n_features": self.n_features,
                "feature_names": self.feature_names, "classes": self.classes,
                "nodes": {"feature": self.feature.tolist(), "threshold": self.threshold.tolist(),
                          "left": self.left.tolist(), "right": self.right.tolist(),
                          "value": self.value.tolist(), "histogram": self.histogram.round(6).tolist()}}

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()))

    @classmethod
    def read(cls, path: str | Path, n_features: int | None = None) -> "Tree":
        """Loads and checks a tree file; every problem is a TreeFileError naming the file."""
        p = Path(path)
        from rtclab.inputs import InputFileError, read_input_text

        try:
            text = read_input_text(p, "tree")
        except InputFileError as e:
            raise TreeFileError(str(e)) from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise TreeFileError(f"{p}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
        t = cls.from_dict(d, str(p))
        if n_features is not None and t.n_features != n_features:
            raise TreeFileError(f"{p}: the tree reads {t.n_features} features, but this environment "
                                f"provides {n_features}")
        return t

    @classmethod
    def from_dict(cls, d, source: str = "tree") -> "Tree":
        # The Rust loader checks the structure with the same rules; use it for one truth.
        from rtclab import _core
        try:
            core = _core.TreeCore.from_json(source, json.dumps(d))
        except ValueError as e:
            raise TreeFileError(str(e)) from None
        n = d["nodes"]
        names = d.get("feature_names") or [f"x{i}" for i in range(core.n_features)]
        hist = np.asarray(n.get("histogram") or [[0.0]] * core.node_count, dtype=float)
        return cls(d["task"], np.asarray(n["feature"], dtype=np.int64), np.asarray(n["threshold"], dtype=float),
                   np.asarray(n["left"], dtype=np.int64), np.asarray(n["right"], dtype=np.int64),
                   np.asarray(n["value"], dtype=float), hist, list(names), list(d.get("classes") or []))

    def core(self):
        """The Rust flat-array evaluator of this tree."""
        from rtclab import _core
        return _core.TreeCore.from_json("tree", json.dumps(self.to_json()))

    # ---- pruning --------------------------------------------------------------------------
    def subtree(self, collapsed: np.ndarray, labels: np.ndarray | None = None) -> "Tree":
        """The tree with every node in `collapsed` (bool per node) turned into a leaf (its
        output from `labels` when given), renumbered in pre-order."""
        keep, order = [], [0]
        while order:
            i = order.pop()
            keep.append(i)
            if self.feature[i] >= 0 and not collapsed[i]:
                order.append(self.right[i])
                order.append(self.left[i])
        keep = np.array(keep)
        new = np.full(self.node_count, -1, dtype=np.int64)
        new[keep] = np.arange(len(keep))
        is_leaf = (self.feature[keep] < 0) | collapsed[keep]
        value = self.value[keep].copy()
        if labels is not None:
            value = np.where(collapsed[keep], labels[keep], value)
        return Tree(self.task, np.where(is_leaf, -1, self.feature[keep]), np.where(is_leaf, 0.0, self.threshold[keep]),
                    np.where(is_leaf, -1, new[self.left[keep]]), np.where(is_leaf, -1, new[self.right[keep]]),
                    value, self.histogram[keep], self.feature_names, self.classes)


@dataclass
class PruningPath:
    """The weakest-link sequence: `step[i]` is when node i collapses (inf for leaves), `alpha`
    the g value of each step, `leaves[k]` the leaf count after k collapses."""
    step: np.ndarray
    alpha: np.ndarray
    leaves: np.ndarray


def pruning_path(tree: Tree, risk: np.ndarray) -> PruningPath:
    """Weakest-link pruning with a heap; `risk[i]` = R(i) = N_i · impurity(i)."""
    n = tree.node_count
    parent = tree.parents()
    leaf = tree.feature < 0
    r_sub = np.where(leaf, risk, 0.0).astype(float)
    n_leaves = leaf.astype(np.int64)
    for i in range(n - 1, 0, -1):  # children come after parents
        r_sub[parent[i]] += r_sub[i]
        n_leaves[parent[i]] += n_leaves[i]
    r_sub, n_leaves = r_sub.tolist(), n_leaves.tolist()
    risk_l, parent_l = risk.tolist(), parent.tolist()
    version = [0] * n
    dead = [False] * n
    is_leaf = leaf.tolist()
    heap = [((risk_l[i] - r_sub[i]) / (n_leaves[i] - 1), i, 0) for i in range(n) if not is_leaf[i]]
    heapq.heapify(heap)
    step = np.full(n, np.inf)
    alphas, leaves = [], [n_leaves[0]]
    left, right = tree.left.tolist(), tree.right.tolist()
    k = 0
    while heap:
        g, i, ver = heapq.heappop(heap)
        if dead[i] or is_leaf[i] or ver != version[i]:
            continue
        step[i] = k
        alphas.append(g)
        k += 1
        # Descendants are gone.
        stack = [left[i], right[i]]
        while stack:
            j = stack.pop()
            dead[j] = True
            if not is_leaf[j]:
                stack += [left[j], right[j]]
        d_r, d_l = r_sub[i] - risk_l[i], n_leaves[i] - 1
        is_leaf[i] = True
        r_sub[i], n_leaves[i] = risk_l[i], 1
        a = parent_l[i]
        while a >= 0:
            r_sub[a] -= d_r
            n_leaves[a] -= d_l
            version[a] += 1
            heapq.heappush(heap, ((risk_l[a] - r_sub[a]) / (n_leaves[a] - 1), a, version[a]))
            a = parent_l[a]
        leaves.append(n_leaves[0])
    return PruningPath(step, np.array(alphas), np.array(leaves))


def risk_of(tree: Tree, est) -> np.ndarray:
    t = est.tree_
    return t.impurity * t.weighted_n_node_samples


def node_reward_sums(tree: Tree, leaf_of_sample: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """Per node, the one-step rewards (per action) summed over the samples routed through it."""
    sums = np.zeros((tree.node_count, rewards.shape[1]))
    np.add.at(sums, leaf_of_sample, rewards)
    parent = tree.parents()
    for i in range(tree.node_count - 1, 0, -1):
        sums[parent[i]] += sums[i]
    return sums


def subtree_end(tree: Tree) -> np.ndarray:
    """One past the last node of each node's subtree; requires pre-order numbering (CART's
    depth-first builder and `Tree.subtree` both number that way), checked here."""
    n = tree.node_count
    end = np.arange(1, n + 1)
    parent = tree.parents()
    for i in range(n - 1, 0, -1):
        end[parent[i]] = max(end[parent[i]], end[i])
    inner = np.flatnonzero(tree.feature >= 0)
    if not (np.all(tree.left[inner] == inner + 1) and np.all(tree.right[inner] == end[tree.left[inner]])):
        raise ValueError("the tree's nodes are not numbered in pre-order")
    return end


@dataclass
class Pruned:
    tree: Tree
    candidates: int
    full_leaves: int
    chosen_leaves: int
    score: float          # hold-out score of the chosen tree (mean reward, accuracy or −MSE)


def prune(tree: Tree, est, max_leaves: int | None, x_train: np.ndarray, x_val: np.ndarray,
          y_val: np.ndarray, rewards_train: np.ndarray | None = None,
          rewards_val: np.ndarray | None = None, w_train: np.ndarray | None = None,
          w_val: np.ndarray | None = None) -> Pruned:
    """CCP to at most `max_leaves` leaves. With per-action one-step rewards (rows aligned with
    x_train / x_val, columns with `tree.classes`) collapsed nodes are relabelled by reward and
    candidates ranked by hold-out reward; otherwise by hold-out accuracy (classification) or
    MSE (regression). `w_train`/`w_val` weight rows (a resample's duplicate counts)."""
    w_val = np.ones(len(x_val)) if w_val is None else np.asarray(w_val, dtype=float)
    path = pruning_path(tree, risk_of(tree, est))
    labels = tree.value.copy()
    by_reward = rewards_train is not None and rewards_val is not None and tree.task == "classification"
    if by_reward:
        # Reward columns are actions; candidates are the classes the tree knows.
        acts = np.asarray(tree.classes).astype(np.int64)
        r = rewards_train if w_train is None else rewards_train * np.asarray(w_train, dtype=float)[:, None]
        sums = node_reward_sums(tree, tree.apply(x_train), r)
        labels = np.asarray(tree.classes)[sums[:, acts].argmax(axis=1)]
    limit = max_leaves if max_leaves else tree.leaf_count
    # Scores of the whole sequence, incrementally: collapsing node t changes the output only of
    # the hold-out rows under t, a contiguous range of leaves in pre-order.
    end = subtree_end(tree)
    leaf = tree.apply(x_val)
    order = np.argsort(leaf, kind="stable")
    leaf_sorted = leaf[order]
    w = w_val[order]
    if tree.task == "classification":
        ci = {c: i for i, c in enumerate(tree.classes)}
        label_i = np.array([ci[v] for v in labels])
        value_i = np.array([ci[v] for v in tree.value])
        truth = np.array([ci.get(float(v), -1) for v in np.asarray(y_val)[order]])
        if by_reward:
            rv = rewards_val[order][:, acts]          # columns = class positions
            contrib = lambda rows, c: rv[rows, c]      # noqa: E731
        else:
            contrib = lambda rows, c: (truth[rows] == c).astype(float)  # noqa: E731
        cur = contrib(np.arange(len(order)), value_i[leaf_sorted]) * w
    else:
        yv = np.asarray(y_val, dtype=float)[order]
        contrib = lambda rows, c: -(c - yv[rows]) ** 2  # noqa: E731
        cur = contrib(np.arange(len(order)), tree.value[leaf_sorted]) * w
    total = float(cur.sum())
    wsum = float(w.sum()) or 1.0
    collapse_order = np.argsort(path.step)[: int(np.isfinite(path.step).sum())]
    best = (total / wsum, 0) if path.leaves[0] <= limit else None
    for k, t in enumerate(collapse_order, start=1):
        lo, hi = np.searchsorted(leaf_sorted, [t, end[t]])
        if hi > lo:
            rows = np.arange(lo, hi)
            c = label_i[t] if tree.task == "classification" else labels[t]
            new = contrib(rows, np.full(hi - lo, c)) * w[lo:hi]
            total += float(new.sum() - cur[lo:hi].sum())
            cur[lo:hi] = new
        if path.leaves[k] <= limit and (best is None or total / wsum > best[0]):
            best = (total / wsum, k)
    candidates = sum(1 for n in path.leaves if n <= limit)
    score, k = best
    final = tree.subtree(path.step < k, labels)
    return Pruned(final, candidates, tree.leaf_count, final.leaf_count, score)
