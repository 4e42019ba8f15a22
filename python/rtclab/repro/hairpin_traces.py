"""Synthetic session traces for Hairpin's trace-driven runs (spec `afr-hairpin-confucius.md`
§3.1, §3.8). The production traces (Tencent START) are not public; these sets are generated to
match what the chapter reports about them, and are documented here so a reader can judge them:

- one line per 16 ms frame, `<bw>Mbps <rtt>ms <loss>` (the released `sample.tr` format);
- loss is bursty: a two-state chain per frame; in the good state the packet loss is tiny
  (`good_loss`), in the bad state it is drawn per frame from U(`bad_lo`, `bad_hi`); bad
  episodes last `bad_frames` frames on average (geometric: mean 6 gives ≈ 70 % of episodes
  longer than two frames, as §3.1 reports for loss events above 10 %), and take `bad_share` of
  the frames (§3.1: 2 % of frames lose ≥ 20 % of their packets);
- RTT: a per-session base drawn log-normally around `rtt_median` (edge RTT 10-20 ms, median
  12 ms for wired), per-frame jitter, and on Wi-Fi a rise during loss (link-layer
  retransmission, §3.1);
- bandwidth: a per-session constant (the runs here do not limit the rate, as the released
  set-up without congestion control).

Each set is deterministic for a seed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

FRAME_MS = 16


@dataclass(frozen=True)
class TraceSet:
    name: str
    rtt_median: float
    rtt_sigma: float
    jitter_ms: float
    good_loss: float
    bad_share: float
    bad_frames: float
    bad_lo: float
    bad_hi: float
    rtt_rise_in_loss: float
    bandwidth_mbps: float


SETS = {
    "wired": TraceSet("wired", 12.0, 0.25, 0.5, 0.0002, 0.01, 6.0, 0.10, 0.30, 0.0, 30.0),
    "wifi": TraceSet("wifi", 14.0, 0.35, 2.0, 0.0005, 0.03, 6.0, 0.10, 0.50, 15.0, 20.0),
    "cellular": TraceSet("cellular", 30.0, 0.35, 4.0, 0.0005, 0.02, 6.0, 0.10, 0.40, 10.0, 10.0),
}


def session(ts: TraceSet, seconds: float, rng: random.Random) -> list[str]:
    frames = int(seconds * 1000 / FRAME_MS)
    base = ts.rtt_median * math.exp(rng.gauss(0.0, ts.rtt_sigma))
    # Bad-state entry probability so that the stationary share is `bad_share`.
    leave = 1.0 / ts.bad_frames
    enter = ts.bad_share * leave / (1.0 - ts.bad_share)
    bad = False
    lines = []
    for _ in range(frames):
        bad = (rng.random() >= leave) if bad else (rng.random() < enter)
        loss = rng.uniform(ts.bad_lo, ts.bad_hi) if bad else ts.good_loss
        rtt = max(1.0, base + abs(rng.gauss(0.0, ts.jitter_ms)) + (ts.rtt_rise_in_loss * rng.random() if bad else 0.0))
        lines.append(f"{ts.bandwidth_mbps:.2f}Mbps {rtt:.1f}ms {loss:.4f}")
    return lines


def write_sets(out: Path, sessions: int, seconds: float = 60.0, seed: int = 1) -> dict[str, list[Path]]:
    """Writes `sessions` traces per set under `out/<set>/session-<i>.tr`; returns their paths."""
    paths: dict[str, list[Path]] = {}
    for name, ts in SETS.items():
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        paths[name] = []
        for i in range(sessions):
            rng = random.Random(f"{seed}-{name}-{i}")
            p = d / f"session-{i}.tr"
            p.write_text(f"# rtclab synthetic {name} session {i} (seed {seed}), {FRAME_MS} ms per line\n"
                         + "\n".join(session(ts, seconds, rng)) + "\n", encoding="utf-8")
            paths[name].append(p)
    return paths


#: Bandwidth range of the GCC-integration runs (dissertation §7.4.5.4: 2-30 Mbit/s).
CC_BANDWIDTH = (2.0, 30.0)
#: The released set-up limits the link to this multiple of the trace bandwidth with a CC.
CC_LINK_FACTOR = 1.5


def cc_session(seconds: float, rng: random.Random) -> list[str]:
    """A Wi-Fi session whose bandwidth moves: a per-session level drawn log-uniformly in
    `CC_BANDWIDTH`, then a multiplicative random walk (σ 10 % per second, clamped to the range)
    sampled every frame; RTT and loss as the `wifi` set."""
    lines = session(SETS["wifi"], seconds, rng)
    lo, hi = CC_BANDWIDTH
    bw = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    per_line = 0.10 * math.sqrt(FRAME_MS / 1000)
    out = []
    for line in lines:
        bw = min(hi, max(lo, bw * math.exp(rng.gauss(0.0, per_line))))
        _, rtt, loss = line.split()
        out.append(f"{bw:.2f}Mbps {rtt} {loss}")
    return out


def write_cc_set(out: Path, sessions: int, seconds: float = 60.0, seed: int = 1,
                 wide: float = 10.0) -> list[tuple[Path, Path, Path]]:
    """Writes `sessions` Wi-Fi sessions with moving bandwidth under `out/wifi-cc/` and, for each,
    the link's capacity trace (`CC_LINK_FACTOR` × the bandwidth, `bandwidth` format) and a wide
    one (`wide` × the bandwidth, to separate self-congestion from loss); returns
    (session, capacity, wide capacity) paths."""
    d = out / "wifi-cc"
    d.mkdir(parents=True, exist_ok=True)
    pairs = []
    for i in range(sessions):
        rng = random.Random(f"{seed}-wifi-cc-{i}")
        lines = cc_session(seconds, rng)
        p = d / f"session-{i}.tr"
        p.write_text(f"# rtclab synthetic wifi session {i} with moving bandwidth (seed {seed}), {FRAME_MS} ms per line\n"
                     + "\n".join(lines) + "\n", encoding="utf-8")
        caps = []
        for suffix, factor in (("capacity", CC_LINK_FACTOR), ("capacity-wide", wide)):
            cap = d / f"session-{i}.{suffix}"
            cap.write_text(f"# link capacity = {factor} x bandwidth of {p.name}: <time s> <Mbit/s>\n"
                           + "\n".join(f"{k * FRAME_MS / 1000:.3f} {float(line.split()[0][:-4]) * factor:.3f}"
                                       for k, line in enumerate(lines)) + "\n", encoding="utf-8")
            caps.append(cap)
        pairs.append((p, caps[0], caps[1]))
    return pairs
