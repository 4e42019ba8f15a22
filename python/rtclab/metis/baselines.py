"""Interpretation baselines against Metis (spec `zhuge-metis.md` B.7/B.8; dissertation §5.5.6):
how faithfully a simpler model stands in for the DNN, measured as the released scripts measure it
(transys-project/metis `interpret-auto/lime_simple_model.py`, `lemna_simple_model.py`): the
**error rate** (share of states where the stand-in's action differs from the DNN's most probable
action) and the **RMSE of the action index** against the DNN's.

- **LIME** (Ribeiro et al., KDD'16), from the maintained `lime` package: for each state a locally
  weighted linear model per action fitted on perturbed neighbours (LimeTabularExplainer, its
  defaults), the state's action the one with the highest local prediction.
- **LIME, released variant**: KMeans over the states, one least-squares linear model of the DNN's
  action probabilities per cluster, the action its argmax (the released `LIMESimpleModel`); the
  cluster count is swept and the best on the test states reported, the choice most favourable to
  the baseline.
- **LEMNA** (Guo et al., CCS'18), per the paper: around each state a mixture of K linear
  regressions fitted by EM on perturbed neighbours, each component's coefficients under a fused
  lasso (Σ|β_j − β_{j−1}| penalised: neighbouring features of a sequence, e.g. the 8 past
  throughputs, should weigh alike), solved by ADMM; the local prediction per action is the
  component most responsible at the state. (The released "simple" LEMNA drops the fused lasso and
  the locality; we follow the paper.)
- **Metis**: the decision tree, as converted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class Fidelity:
    error_rate: float
    rmse: float
    states: int


def fidelity(pred: np.ndarray, dnn: np.ndarray) -> Fidelity:
    pred, dnn = np.asarray(pred, int), np.asarray(dnn, int)
    return Fidelity(float(np.mean(pred != dnn)), float(np.sqrt(np.mean((pred - dnn) ** 2.0))), len(dnn))


# ----------------------------------------------------------------------------- LIME (released)


class KMeansLinear:
    """The released LIME stand-in: KMeans clusters, a linear least-squares model per cluster."""

    def __init__(self, clusters: int, seed: int = 0):
        self.clusters, self.seed = clusters, seed

    def fit(self, X: np.ndarray, P: np.ndarray) -> "KMeansLinear":
        from sklearn.cluster import KMeans
        from sklearn.linear_model import LinearRegression

        self.km = KMeans(n_clusters=self.clusters, random_state=self.seed, n_init=3).fit(X)
        labels = self.km.labels_
        self.models = [LinearRegression().fit(X[labels == c], P[labels == c]) if np.any(labels == c) else None
                       for c in range(self.clusters)]
        return self

    def size(self) -> int:
        """Numbers the stand-in holds: centres and each cluster's coefficients and intercepts."""
        return int(self.km.cluster_centers_.size + sum(m.coef_.size + m.intercept_.size for m in self.models if m))

    def predict(self, X: np.ndarray) -> np.ndarray:
        labels = self.km.predict(X)
        out = np.zeros(len(X), int)
        for c, m in enumerate(self.models):
            sel = labels == c
            if m is not None and sel.any():
                out[sel] = np.argmax(m.predict(X[sel]), axis=1)
        return out


class KMeansLemna:
    """LEMNA as a global stand-in in the released structure (KMeans clusters, per cluster and
    action a mixture regression), with the paper's fused lasso on each component; a state's
    prediction per action is the π-weighted sum of the components (the released `predict`)."""

    def __init__(self, clusters: int, groups: list[range], components: int = 2, lam: float = 0.01, seed: int = 0):
        self.clusters, self.groups, self.K, self.lam, self.seed = clusters, groups, components, lam, seed

    def fit(self, X: np.ndarray, P: np.ndarray) -> "KMeansLemna":
        from sklearn.cluster import KMeans

        self.mu, self.sd = X.mean(axis=0), X.std(axis=0) + 1e-9
        Z = (X - self.mu) / self.sd
        self.km = KMeans(n_clusters=self.clusters, random_state=self.seed, n_init=3).fit(Z)
        self.models = []
        for c in range(self.clusters):
            sel = self.km.labels_ == c
            k = min(self.K, max(1, int(sel.sum()) // 10))
            self.models.append([MixtureFusedLasso(k, self.lam, self.groups, seed=self.seed).fit(Z[sel], P[sel, a])
                                for a in range(P.shape[1])] if sel.any() else None)
        return self

    def size(self) -> int:
        return int(self.km.cluster_centers_.size + sum(m.beta.size + 2 * m.K for ms in self.models if ms for m in ms))

    def predict(self, X: np.ndarray) -> np.ndarray:
        Z = (X - self.mu) / self.sd
        labels = self.km.predict(Z)
        A = np.hstack([np.ones((len(Z), 1)), Z])
        out = np.zeros(len(X), int)
        for c, ms in enumerate(self.models):
            sel = labels == c
            if ms is not None and sel.any():
                pred = np.stack([(A[sel] @ m.beta.T) @ m.pi for m in ms], axis=1)
                out[sel] = np.argmax(pred, axis=1)
        return out


# ----------------------------------------------------------------------------- LIME (package)


class LimeCentres:
    """LIME (the `lime` package) as a global stand-in: KMeans centres of the training states,
    one LIME explanation per centre (continuous features, not discretised, so the local linear
    model applies beyond the centre), each test state predicted by its nearest centre's model."""

    def __init__(self, clusters: int, num_samples: int = 2000, seed: int = 0):
        self.clusters, self.num_samples, self.seed = clusters, num_samples, seed

    def fit(self, X: np.ndarray, local: "LocalProba") -> "LimeCentres":
        from lime.lime_tabular import LimeTabularExplainer
        from sklearn.cluster import KMeans

        self.km = KMeans(n_clusters=self.clusters, random_state=self.seed, n_init=3).fit(X)
        exp = LimeTabularExplainer(X, mode="classification", discretize_continuous=False, random_state=self.seed)
        self.mean, self.scale = exp.scaler.mean_, exp.scaler.scale_
        nearest = [int(np.argmin(((X - c) ** 2).sum(axis=1))) for c in self.km.cluster_centers_]
        self.models = []
        for c, i in zip(self.km.cluster_centers_, nearest):
            n_actions = local(i)(c[None, :]).shape[1]
            e = exp.explain_instance(c, local(i), labels=range(n_actions), num_features=X.shape[1],
                                     num_samples=self.num_samples)
            w = np.zeros((n_actions, X.shape[1]))
            for a in range(n_actions):
                for j, v in e.local_exp[a]:
                    w[a, j] = v
            self.models.append((np.array([e.intercept[a] for a in range(n_actions)]), w))
        return self

    def size(self) -> int:
        return int(self.km.cluster_centers_.size + sum(b.size + w.size for b, w in self.models))

    def predict(self, X: np.ndarray) -> np.ndarray:
        labels = self.km.predict(X)
        Z = (X - self.mean) / self.scale
        out = np.zeros(len(X), int)
        for c, (b, w) in enumerate(self.models):
            sel = labels == c
            if sel.any():
                out[sel] = np.argmax(b + Z[sel] @ w.T, axis=1)
        return out

# ----------------------------------------------------------------------------- LIME (package)


#: `local(i)` is the DNN's action probabilities as a function of features around state i (for a
#: DNN whose input holds more than the features, the rest kept at state i's values).
LocalProba = Callable[[int], Callable[[np.ndarray], np.ndarray]]


def lime_actions(local: LocalProba, X_train: np.ndarray, X: np.ndarray, num_samples: int = 2000,
                 seed: int = 0) -> np.ndarray:
    """Per state, the action whose LIME local model predicts the highest probability."""
    from lime.lime_tabular import LimeTabularExplainer

    n_actions = local(0)(X[:1]).shape[1]
    exp = LimeTabularExplainer(X_train, mode="classification", random_state=seed)
    out = np.zeros(len(X), int)
    for i, x in enumerate(X):
        e = exp.explain_instance(x, local(i), labels=range(n_actions), num_features=X.shape[1],
                                 num_samples=num_samples)
        out[i] = int(np.argmax([local_prediction(e, a) for a in range(n_actions)]))
    return out


def local_prediction(explanation, label: int) -> float:
    """LIME's local model evaluated at the explained state. With continuous features discretised
    (the explainer's default) the state is 1 in every interpretable feature, so the prediction is
    the intercept plus the sum of the weights (what `explanation.local_pred` holds for the last
    label explained)."""
    return float(explanation.intercept[label] + sum(w for _, w in explanation.local_exp[label]))


# ----------------------------------------------------------------------------- LEMNA


def _difference_matrix(d: int, groups: list[range]) -> np.ndarray:
    """First differences between neighbouring features inside each group (a sequence)."""
    rows = []
    for g in groups:
        for a, b in zip(list(g), list(g)[1:]):
            r = np.zeros(d)
            r[a], r[b] = -1.0, 1.0
            rows.append(r)
    return np.array(rows).reshape(-1, d)


def fused_lasso(X: np.ndarray, y: np.ndarray, w: np.ndarray, D: np.ndarray, lam: float, rho: float | None = None,
                iters: int = 100) -> np.ndarray:
    """argmin_β ½ Σ w_i (y_i − [1, x_i]·β)² + lam · ‖D β_{1:}‖₁ by ADMM (Boyd et al. 2011, §6.4.1
    generalised lasso); the intercept is not penalised. Returns β with the intercept first. The
    penalty parameter ρ defaults to max(1, lam), so that a heavy penalty converges in few steps."""
    n, d = X.shape
    rho = max(1.0, lam) if rho is None else rho
    A = np.hstack([np.ones((n, 1)), X])
    Dp = np.hstack([np.zeros((len(D), 1)), D]) if len(D) else np.zeros((0, d + 1))
    AtW = A.T * w
    H = AtW @ A + rho * Dp.T @ Dp + 1e-8 * np.eye(d + 1)
    L = np.linalg.cholesky(H)
    b = AtW @ y
    z = np.zeros(len(Dp))
    u = np.zeros(len(Dp))
    beta = np.zeros(d + 1)
    for _ in range(iters):
        rhs = b + rho * Dp.T @ (z - u)
        beta = np.linalg.solve(L.T, np.linalg.solve(L, rhs))
        Db = Dp @ beta
        z = np.sign(Db + u) * np.maximum(np.abs(Db + u) - lam / rho, 0.0)
        u += Db - z
    return beta


class MixtureFusedLasso:
    """LEMNA's model: y ≈ Σ_k π_k N(β_k·[1, x], σ_k²), each β_k under a fused lasso, by EM."""

    def __init__(self, components: int = 3, lam: float = 0.01, groups: list[range] | None = None,
                 iters: int = 20, seed: int = 0):
        self.K, self.lam, self.groups, self.iters, self.seed = components, lam, groups or [], iters, seed

    def fit(self, X: np.ndarray, y: np.ndarray) -> "MixtureFusedLasso":
        rng = np.random.default_rng(self.seed)
        n, d = X.shape
        D = _difference_matrix(d, self.groups)
        resp = rng.dirichlet(np.ones(self.K), size=n)  # soft random start
        A = np.hstack([np.ones((n, 1)), X])
        for _ in range(self.iters):
            self.beta = np.array([fused_lasso(X, y, resp[:, k] + 1e-9, D, self.lam) for k in range(self.K)])
            res = y[:, None] - A @ self.beta.T
            self.pi = resp.mean(axis=0)
            self.var = np.maximum((resp * res**2).sum(axis=0) / np.maximum(resp.sum(axis=0), 1e-9), 1e-8)
            logp = np.log(self.pi + 1e-12) - 0.5 * np.log(2 * np.pi * self.var) - res**2 / (2 * self.var)
            logp -= logp.max(axis=1, keepdims=True)
            resp = np.exp(logp)
            resp /= resp.sum(axis=1, keepdims=True)
        return self

    def predict_at(self, x: np.ndarray, y_at: float) -> float:
        """The prediction of the component most responsible for (x, y_at)."""
        a = np.concatenate([[1.0], x])
        preds = self.beta @ a
        logp = np.log(self.pi + 1e-12) - 0.5 * np.log(self.var) - (y_at - preds) ** 2 / (2 * self.var)
        return float(preds[int(np.argmax(logp))])


def lemna_actions(local: LocalProba, X_train: np.ndarray, X: np.ndarray,
                  groups: list[range], num_samples: int = 500, components: int = 3, lam: float = 0.01,
                  seed: int = 0) -> np.ndarray:
    """Per state: perturbed neighbours (Gaussian, 10 % of each feature's spread on the training
    states), LEMNA's mixture fitted per action on the DNN's probability of it, the action with
    the highest local prediction."""
    rng = np.random.default_rng(seed)
    scale = X_train.std(axis=0) + 1e-9
    out = np.zeros(len(X), int)
    for i, x in enumerate(X):
        Z = x + rng.normal(size=(num_samples, len(x))) * scale * 0.1
        Z[0] = x
        P = local(i)(Z)
        preds = []
        for a in range(P.shape[1]):
            m = MixtureFusedLasso(components, lam, groups, seed=seed + i).fit((Z - x) / scale, P[:, a])
            preds.append(m.predict_at(np.zeros(len(x)), P[0, a]))
        out[i] = int(np.argmax(preds))
    return out


# ----------------------------------------------------------------------------- Pensieve

#: Metis' 25 Pensieve features (rtclab_learn::abr::features_of): last bitrate, buffer, 8 past
#: throughputs, 8 past download times, 6 next chunk sizes, chunks left. The two 8-long histories
#: and the chunk sizes are the sequences LEMNA's fused lasso ties.
PENSIEVE_GROUPS = [range(2, 10), range(10, 18), range(18, 24)]


def pensieve_states(F: np.ndarray, base: np.ndarray) -> np.ndarray:
    """6 × 8 Pensieve states: `base` with the cells of Metis' 25 features set from `F`. The
    released actor also reads one cell the features leave out (its sixth branch takes row 4,
    column 7 — a stale chunk size — where the text has the chunks-left row), which stays at
    `base`'s value."""
    F = np.asarray(F, np.float64)
    S = np.repeat(np.asarray(base, np.float64).reshape(1, 6, 8), len(F), axis=0)
    S[:, 0, -1], S[:, 1, -1] = F[:, 0], F[:, 1]
    S[:, 2, :], S[:, 3, :] = F[:, 2:10], F[:, 10:18]
    S[:, 4, :6], S[:, 5, -1] = F[:, 18:24], F[:, 24]
    return S


def _best(name: str, fitted: list, X: np.ndarray, dnn: np.ndarray, sweep: dict) -> dict[str, Fidelity]:
    """The cluster count whose stand-in errs least on the test states (kindest to the baseline);
    every count's figure and size go to `sweep[(name, k)]`."""
    scored = [(k, fidelity(m.predict(X), dnn)) for k, m in fitted]
    for (k, f), (_, m) in zip(scored, fitted):
        sweep[(name, k)] = (f, m.size())
    k, f = min(scored, key=lambda kf: kf[1].error_rate)
    return {f"{name}_{k}": f}


def compare(P_train: np.ndarray, P_test: np.ndarray, local_train: LocalProba, local: LocalProba, tree_predict: Callable[[np.ndarray], np.ndarray],
            X_train: np.ndarray, X_test: np.ndarray, groups: list[range], local_states: int = 200,
            clusters: tuple[int, ...] = (1, 5, 10, 20, 40), seed: int = 0) -> dict[str, Fidelity]:
    """Fidelity of Metis' tree and of the baselines on the test states (`P_*` the DNN's action
    probabilities on the states whose features are `X_*`; `local_train` / `local` the DNN around
    a training / test state, for LIME's explanations; the local methods on the first
    `local_states` test states, Metis scored on the same subset beside its full figure; each
    KMeans stand-in at every count of `clusters`, in `out["sweep"]`, the kindest reported)."""
    dnn = np.argmax(P_test, axis=1)
    out: dict = {"metis": fidelity(tree_predict(X_test), dnn), "sweep": {}}
    ks = [k for k in clusters if k <= len(X_train)]
    out.update(_best("lime_kmeans", [(k, KMeansLinear(k, seed).fit(X_train, P_train)) for k in ks], X_test, dnn,
                     out["sweep"]))
    out.update(_best("lemna_kmeans", [(k, KMeansLemna(k, groups, seed=seed).fit(X_train, P_train)) for k in ks],
                     X_test, dnn, out["sweep"]))
    out.update(_best("lime_centres", [(k, LimeCentres(k, seed=seed).fit(X_train, local_train)) for k in ks],
                     X_test, dnn, out["sweep"]))
    sub = X_test[:local_states]
    out["metis_local_subset"] = fidelity(tree_predict(sub), dnn[:local_states])
    out["lime"] = fidelity(lime_actions(local, X_train, sub, seed=seed), dnn[:local_states])
    out["lemna"] = fidelity(lemna_actions(local, X_train, sub, groups, seed=seed), dnn[:local_states])
    return out
