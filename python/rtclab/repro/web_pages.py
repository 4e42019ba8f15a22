"""Synthetic web pages for the Confucius web-burst experiment (dissertation §8.7.2, Fig 8.12-8.13).

The dissertation replays the HTTP requests of Alexa top-1000 sites (Chrome HAR files, July 2022)
as TCP flows of the recorded sizes; those HAR files are not released. What it does publish is how
many flows a page takes (spec `afr-hairpin-confucius.md` §4.1, D Fig 8.1): a median of 27, 56 for
the top quarter, over 100 for some sites. This generator draws pages from that:

- **flows per page**: log-normal through the two published quantiles, median 27 and 75th
  percentile 56 (μ = ln 27, σ = (ln 56 − ln 27) / z₀.₇₅ = 1.081, so about 11 % of pages take more
  than 100 flows, as Fig 8.1's tail), rounded, at least 1 and at most `MAX_FLOWS`;
- **flow sizes** (not published; our assumption, documented): log-normal with a median of 15 KB
  — the size of the dissertation's own web flow in its load sweep (§4.11, Fig 8.14) — and
  σ = 1.5 (a 90th percentile near 100 KB, a heavy tail to a few MB, as HTTP responses are), at
  least 1 KB and at most 9 MB (the size sweep's largest);
- **start times** (not published; ours): the first flow (the document) at the page's start, the
  others at offsets uniform in [2·RTT, 2·RTT + `SPREAD_S`]: after the document's connection and
  request, spread as a browser's request waterfall is.

Each page is drawn from its own seeded random stream (`numpy.random.default_rng(seed)`), so page
`i` of seed `s` is the same on every machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MEDIAN_FLOWS = 27
P75_FLOWS = 56
MAX_FLOWS = 400
MEDIAN_SIZE_B = 15_000
SIZE_SIGMA = 1.5
MIN_SIZE_B = 1_000
MAX_SIZE_B = 9_000_000
SPREAD_S = 0.5
_Z75 = 0.6744897501960817  # the standard normal's 75th percentile


@dataclass(frozen=True)
class WebFlow:
    start_s: float  # after the page's start
    size_b: int


def flows_sigma() -> float:
    """σ of the log-normal number of flows through the published median and 75th percentile."""
    return (math.log(P75_FLOWS) - math.log(MEDIAN_FLOWS)) / _Z75


def page(seed: int, rtt_s: float) -> list[WebFlow]:
    """One synthetic page: its flows, the document first."""
    if rtt_s <= 0:
        raise ValueError(f"rtt_s must be positive, got {rtt_s}")
    rng = np.random.default_rng(seed)
    n = int(round(math.exp(rng.normal(math.log(MEDIAN_FLOWS), flows_sigma()))))
    n = min(max(n, 1), MAX_FLOWS)
    sizes = np.exp(rng.normal(math.log(MEDIAN_SIZE_B), SIZE_SIGMA, n))
    sizes = np.clip(np.round(sizes), MIN_SIZE_B, MAX_SIZE_B).astype(int)
    starts = 2 * rtt_s + rng.uniform(0.0, SPREAD_S, n)
    starts[0] = 0.0
    return [WebFlow(float(t), int(s)) for t, s in zip(starts, sizes)]


def tcp_flows(flows: list[WebFlow], at_s: float, rtt: str, cc: str = "cubic") -> list[dict]:
    """The page's flows as scenario `[[flows]]` tables: finite TCP transfers starting at `at_s`."""
    return [{"name": f"web{i}", "kind": "tcp", "cc": cc, "rtt": rtt, "start": f"{at_s + f.start_s:.6f}s",
             "size": f"{f.size_b}B"} for i, f in enumerate(flows)]
