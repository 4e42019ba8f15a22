"""`rtclab suite l4s`: low-latency (L4S) networking cases — a scalable controller (`--cc`,
default `prague`) beside classic CUBIC through the DualPI2 coupled AQM (RFC 9332), and
scalable flows on their own.

What the cases test, in RFC 9332's words (§2.1, §4): the coupling k = 2 between the L4S queue's
marking p_L = k·p' and the classic queue's drop p_C = p'² balances a scalable flow's window
(∝ 1/p_L) against a classic one's (∝ 1/√p_C) at equal RTTs, so their rates should be near
equal at equal *total* RTT; the L4S queue's step marks at 1 ms keep its delay around a
millisecond while the classic queue sits near the PI2 target of 15 ms. Each case is one
bottleneck of 100 Mbit/s (RFC 9332 Appendix A's default limit, 250 ms at that rate), 60 s.

Every row prints beside the design figures (`EXPECTED`); the classic flow's RTT carries the
classic queue's delay on top of its base RTT, so at equal base RTTs a ratio above 1 follows from
the design itself: see docs/algorithms/dualpi2.md for the measured cause.
"""

from __future__ import annotations

from typing import Callable

from rtclab.suites import _mean
from rtclab.suites.rfc8867 import Case

CAPACITY = "100Mbps"
QUEUE = {"kind": "dualpi2", "limit": "250ms"}
DURATION = "60s"
#: The controller tested when `--cc` is not given.
DEFAULT_CCS = ["prague"]

#: (what, figure) the cases are read against: RFC 9332's design goals.
EXPECTED = {
    "ratio": "≈ 1 (rate balance at equal RTTs, RFC 9332 §2.1, k = 2)",
    "l4s_qdelay_ms_p99": "≈ 1 ms (step threshold 1 ms, RFC 9332 §A.1)",
    "classic_qdelay_ms_p50": "≈ 15 ms (PI2 target, RFC 9332 §A.1)",
}


def _flow(name: str, cc: str, rtt: str, start: str = "0s") -> dict:
    return {"name": name, "kind": "tcp", "cc": cc, "rtt": rtt, "start": start}


def _coexist(rtt_ms: int) -> Callable[[str], dict]:
    def build(cc: str) -> dict:
        rtt = f"{rtt_ms}ms"
        return {"name": f"l4s-coexist-{rtt}", "duration": DURATION,
                "description": f"classic CUBIC and scalable {cc} through DualPI2, both at {rtt} base RTT",
                "link": {"capacity": CAPACITY, "queue": dict(QUEUE)},
                "flows": [_flow("classic", "cubic", rtt), _flow("l4s", cc, rtt)]}
    return build


def _l4s_pair(rtts: tuple[int, int]) -> Callable[[str], dict]:
    def build(cc: str) -> dict:
        a, b = (f"{r}ms" for r in rtts)
        return {"name": f"l4s-pair-{a}-{b}", "duration": DURATION,
                "description": f"two scalable {cc} flows at {a} and {b} through DualPI2",
                "link": {"capacity": CAPACITY, "queue": dict(QUEUE)},
                "flows": [_flow("l4s", cc, a), _flow("l4s2", cc, b, start="5s")]}
    return build


CASES = [
    *(Case(f"coexist-{r}ms", f"CUBIC vs scalable at {r} ms base RTT", _coexist(r)) for r in (10, 20, 50, 100)),
    Case("pair-20ms-20ms", "Two scalable flows at 20 ms", _l4s_pair((20, 20))),
    Case("pair-10ms-50ms", "Two scalable flows at 10 ms and 50 ms (RTT independence)", _l4s_pair((10, 50))),
]

#: Media (RMCAT) controllers on L4S are `rtclab suite rmcat-l4s`.
NOT_RUN: dict[str, str] = {}


def case_metrics(summaries: list[dict], case: Case) -> dict:
    """Per case, averaged over seeds: rates of the scalable (`l4s*`) and classic flows, their
    ratio, each queue's delay as its flows saw it, and the scalable flows' CE fraction."""
    def per_run(s: dict) -> dict:
        l4s = [f for f in s["flows"] if f["name"].startswith("l4s")]
        classic = [f for f in s["flows"] if f["name"].startswith("classic")]
        l_mbps = _mean(f["throughput_mbps"] for f in l4s)
        c_mbps = _mean(f["throughput_mbps"] for f in classic)
        ratio = (l_mbps / c_mbps if classic and c_mbps else
                 (l4s[0]["throughput_mbps"] / l4s[1]["throughput_mbps"] if len(l4s) == 2 and l4s[1]["throughput_mbps"]
                  else None))
        return {
            "utilization": s["link"]["utilization"],
            "l4s_mbps": l_mbps,
            "classic_mbps": c_mbps,
            "ratio": ratio,
            "l4s_qdelay_ms_p99": _mean(f["queuing_delay_ms"]["p99"] for f in l4s),
            "classic_qdelay_ms_p50": _mean(f["queuing_delay_ms"]["p50"] for f in classic),
            "classic_qdelay_ms_p99": _mean(f["queuing_delay_ms"]["p99"] for f in classic),
            "l4s_ce_fraction": _mean(f["ecn_marks"] / f["packets_received"] if f["packets_received"] else None
                                     for f in l4s),
            "classic_loss": _mean(f["loss_ratio"] for f in classic),
        }
    runs = [per_run(s) for s in summaries]
    return {k: _mean(r[k] for r in runs) for k in runs[0]} if runs else {}


#: (row key, column title, format) of the suite table.
COLUMNS = [
    ("utilization", "util.", ".3f"), ("l4s_mbps", "L4S Mbit/s", ".1f"), ("classic_mbps", "classic Mbit/s", ".1f"),
    ("ratio", "ratio", ".2f"), ("l4s_qdelay_ms_p99", "L4S qdelay p99 ms", ".2f"),
    ("classic_qdelay_ms_p50", "classic qdelay p50 ms", ".1f"), ("classic_qdelay_ms_p99", "classic p99 ms", ".1f"),
    ("l4s_ce_fraction", "L4S CE frac.", ".3f"), ("classic_loss", "classic loss", ".4f"),
]
