"""RobustMPC as a Metis teacher: the second ABR algorithm of the retention study (dissertation
Fig 5.6, spec `zhuge-metis.md` B.4 "RobustMPC, HotDASH (+ Pensieve)"; PiTree, Meng et al., MM'19).

Lineage: Yin et al., "A control-theoretic approach for dynamic adaptive video streaming over
HTTP", SIGCOMM'15, in the form Pensieve's `test/mpc.py` (hongzimao/pensieve) and PiTree run it:

- throughput prediction: the harmonic mean of the last 5 measured chunk throughputs, divided by
  1 + the largest relative prediction error of the last 5 chunks ("robust");
- look-ahead: every sequence of bitrates for the next min(5, chunks left) chunks (6^5 = 7,776),
  each chunk's download time = its real size / the predicted throughput, the buffer drained by it
  (rebuffering when it runs dry) and refilled by 4 s; no buffer cap, no RTT (as the original);
- objective: the sum of the chosen QoE metric's per-chunk rewards (`qoe.rs`: linear, log or HD);
  the first bitrate of the best sequence is played (ties: the last best sequence in lexicographic
  order, as the original's `>=` loop keeps).

Where we differ, and why: the original keeps its past prediction errors in the player across a
video. Metis relabels arbitrary visited states (DAgger), so the teacher must be a function of the
state alone: the errors are rebuilt from the 8 throughputs the state holds (each one against the
harmonic mean of the up-to-5 before it inside the window). For the last three chunks this is
exactly the original's error; the two older ones see 4 and 3 predecessors, as the original does
early in a video. The chunk index comes from the state's chunks-left value, so the look-ahead
uses the right upcoming sizes (Pensieve's script is one chunk ahead, an off-by-one we do not
copy). Vectorised with numpy over all sequences and a batch of states.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np

from rtclab.metis.pensieve import BITRATES_KBPS, load_video

HORIZON = 5
CHUNK_S = 4.0
HD_REWARD = (1.0, 2.0, 3.0, 12.0, 15.0, 20.0)  # PiTree get_reward.py (as qoe.rs)
REBUFFER_PENALTY = {"lin": 4.3, "log": 2.66, "hd": 8.0}
_COMBOS = np.array(list(product(range(6), repeat=HORIZON)), dtype=np.int64)  # lexicographic


def utility(qoe: str) -> np.ndarray:
    """Per-bitrate-index quality term of a QoE metric (the smoothness term is its differences)."""
    b = np.asarray(BITRATES_KBPS, dtype=float)
    if qoe == "lin":
        return b / 1000.0
    if qoe == "log":
        return np.log(b / b[-1])
    if qoe == "hd":
        return np.asarray(HD_REWARD)
    raise ValueError(f"unknown QoE {qoe!r} (expected 'lin', 'log' or 'hd')")


def video_sizes(folder: str | Path | None = None) -> np.ndarray:
    """[6, chunks] chunk sizes in bytes from `video_size_0..5`."""
    files = load_video(folder)
    rows = []
    for name, text in files:
        try:
            rows.append([float(x) for x in text.split()])
        except ValueError as e:
            raise ValueError(f"{name}: not a list of chunk sizes ({e})") from None
    n = min(len(r) for r in rows)
    if n == 0:
        raise ValueError("video size files hold no chunks")
    return np.asarray([r[:n] for r in rows])


def _harmonic(x: np.ndarray) -> np.ndarray:
    """Row-wise harmonic mean of the positive entries (0 where there is none)."""
    pos = x > 0
    inv = np.where(pos, 1.0 / np.where(pos, x, 1.0), 0.0).sum(axis=1)
    cnt = pos.sum(axis=1)
    return np.where(inv > 0, cnt / np.where(inv > 0, inv, 1.0), 0.0)


def predicted_throughput(states: np.ndarray) -> np.ndarray:
    """RobustMPC's throughput prediction (MB/s) per 48-value state."""
    thr = np.asarray(states, dtype=float).reshape(-1, 6, 8)[:, 2, :]
    hm = _harmonic(thr[:, -HORIZON:])
    errors = []
    for t in range(8 - HORIZON, 8):  # the last 5 measured throughputs
        est = _harmonic(thr[:, max(0, t - HORIZON):t])
        actual = thr[:, t]
        ok = (actual > 0) & (est > 0)
        errors.append(np.where(ok, np.abs(est - actual) / np.where(ok, actual, 1.0), 0.0))
    return hm / (1.0 + np.max(errors, axis=0))


class RobustMpcTeacher:
    """Metis's teacher interface (`act`, `probs`) over RobustMPC for one QoE metric."""

    def __init__(self, qoe: str = "lin", video: str | Path | None = None, chunks: int = 48, batch: int = 128):
        self.qoe = qoe
        self.util = utility(qoe)
        self.penalty = REBUFFER_PENALTY[qoe]
        sizes = video_sizes(video)
        if sizes.shape[1] < chunks:
            raise ValueError(f"the video holds {sizes.shape[1]} chunk sizes, RobustMPC was asked for {chunks}")
        self.sizes_mb = sizes[:, :chunks] / 1e6
        self.chunks = chunks
        self.batch = batch
        self.greedy = True

    def _plan(self, states: np.ndarray) -> np.ndarray:
        s = np.asarray(states, dtype=float).reshape(-1, 6, 8)
        n = len(s)
        bw = predicted_throughput(s)
        bw = np.where(bw > 0, bw, 1e-6)
        buffer = s[:, 1, -1] * 10.0
        last = np.rint(s[:, 0, -1] * BITRATES_KBPS[-1])
        last_q = np.abs(np.asarray(BITRATES_KBPS)[None, :] - last[:, None]).argmin(axis=1)
        left = np.rint(s[:, 5, -1] * 48.0).astype(np.int64)
        nxt = np.clip(self.chunks - left, 0, self.chunks - 1)
        horizon = np.clip(left, 1, HORIZON)
        m = len(_COMBOS)
        buf = np.repeat(buffer[:, None], m, axis=1)
        total = np.zeros((n, m))
        prev = np.repeat(last_q[:, None], m, axis=1)
        for k in range(HORIZON):
            q = _COMBOS[:, k][None, :]
            idx = np.minimum(nxt + k, self.chunks - 1)
            size = self.sizes_mb[:, idx].T  # [n, 6]
            dl = np.take_along_axis(size, np.broadcast_to(q, (n, m)), axis=1) / bw[:, None]
            rebuf = np.maximum(dl - buf, 0.0)
            buf = np.maximum(buf - dl, 0.0) + CHUNK_S
            u = self.util[q]
            r = u - self.penalty * rebuf - np.abs(u - self.util[prev])
            total += np.where((k < horizon)[:, None], r, 0.0)
            prev = np.broadcast_to(q, (n, m))
        # the last best sequence in lexicographic order (the original's `>=` scan)
        return m - 1 - total[:, ::-1].argmax(axis=1)

    def act(self, states: np.ndarray, _rng: np.random.Generator | None = None) -> np.ndarray:
        s = np.asarray(states, dtype=float).reshape(-1, 48)
        out = np.empty(len(s), dtype=np.int64)
        for i in range(0, len(s), self.batch):
            out[i:i + self.batch] = _COMBOS[self._plan(s[i:i + self.batch]), 0]
        return out

    def probs(self, states: np.ndarray) -> np.ndarray:
        """One-hot on the chosen bitrate (MPC is deterministic)."""
        a = self.act(states)
        p = np.zeros((len(a), 6))
        p[np.arange(len(a)), a] = 1.0
        return p

    def value(self, _states: np.ndarray) -> np.ndarray:
        raise ValueError("RobustMPC has no critic: use uniform or gap resampling")
