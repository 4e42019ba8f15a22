"""`rtclab suite rmcat-l4s`: the RMCAT controllers (default GCC, NADA and SCReAM v2) on RFC 8867 §5's
wired cases through the DualPI2 coupled AQM (RFC 9332), once with the media packets Not-ECT (they
queue in DualPI2's classic queue under PI2) and once ECT(1) (the L4S queue, marked from 1 ms of
queue, every mark reported back by RFC 8888 feedback); and a media flow beside classic CUBIC, both
ways.

The two variants of a case differ in one thing, the ECN field of the media packets, so a row pair
shows what L4S marking does for that controller: SCReAM v2 answers the marks (its L4S mode), NADA
counts them in its congestion signal (RFC 8698's marking penalty), GCC ignores them — an ECT(1)
flow that does not answer marks is what DualPI2's overload protection is for (RFC 9332 §4.2).
RFC 8867's cases use a drop-tail queue; `rtclab suite rfc8867` runs them so.

Case parameters are RFC 8867's (docs/suites.md; `rtclab.suites.rfc8867`), with the bottleneck's
300 ms queue limit kept as DualPI2's limit. The media-vs-CUBIC cases: 10 Mbit/s, 40 ms RTT,
60 s, the media flow from 0 s with a 20 Mbit/s ceiling, CUBIC from 5 s.
"""

from __future__ import annotations

from typing import Callable, Optional

from rtclab.suites import COLUMNS as RMCAT_COLUMNS
from rtclab.suites import _case_metrics, _mean, rfc8867
from rtclab.suites.rfc8867 import Case

#: The controllers run when `--cc` is not given: RMCAT's three.
DEFAULT_CCS = ["gcc", "nada", "scream"]
QUEUE = {"kind": "dualpi2", "limit": rfc8867.QUEUE}

#: (what, figure) the rows are read against: what the references publish.
EXPECTED = {
    "media_queuing_delay_ms_p95": (
        "L4S rows: a few ms (SCReAM v2's published DualPI2 run, EricssonResearch/scream "
        "examples/trace-dualpi-50Mbps-25ms-l4s: p95 2.1 ms with ECT(1), 17.6 ms without; bench/scream)"),
    "utilization": (
        "SCReAM v2 with L4S below the link (published run: 38 of 50 Mbit/s; README: 'L4S gives a "
        "somewhat lower media rate')"),
}


def _through_dualpi2(scn: dict, ecn: str) -> dict:
    """An RFC 8867 case with DualPI2 at every bottleneck and its media flows' ECN field set."""
    scn = dict(scn)
    for key in ("link", "reverse_link"):
        if key in scn:
            scn[key] = {**scn[key], "queue": dict(QUEUE)}
    flows = []
    for f in scn["flows"]:
        if f.get("kind") == "media":
            f = {**f, "media": {**f.get("media", {}), "ecn": ecn, "feedback": "rfc8888"}}
        flows.append(f)
    scn["flows"] = flows
    return scn


def _variant(case: rfc8867.Case, ecn: str) -> Callable[[str], dict]:
    def build(cc: str) -> dict:
        scn = _through_dualpi2(case.build(cc), ecn)
        tag = "l4s" if ecn == "ect1" else "dualpi2"
        scn["name"] = f"{scn['name']}-{tag}"
        scn["description"] = f"{scn['description']}, DualPI2, media {'ECT(1)' if ecn == 'ect1' else 'Not-ECT'}"
        return scn
    return build


def _media_vs_cubic(ecn: str) -> Callable[[str], dict]:
    def build(cc: str) -> dict:
        tag = "l4s" if ecn == "ect1" else "dualpi2"
        return {
            "name": f"media-vs-cubic-{tag}", "duration": "60s",
            "description": f"a {cc} media flow ({'ECT(1)' if ecn == 'ect1' else 'Not-ECT'}) and classic CUBIC "
                           "through DualPI2, 10 Mbit/s, 40 ms",
            "link": {"capacity": "10Mbps", "queue": {"kind": "dualpi2", "limit": "250ms"}},
            "flows": [
                {"name": "media", "kind": "media", "cc": cc, "rtt": "40ms",
                 "media": {"max_bitrate": "20Mbps", "ecn": ecn, "feedback": "rfc8888"}},
                {"name": "tcp", "kind": "tcp", "cc": "cubic", "rtt": "40ms", "start": "5s"},
            ],
        }
    return build


CASES = [
    *(Case(f"{c.section}{suffix}", f"{c.title} ({what})", _variant(c, ecn), c.bottleneck, c.bottleneck_shared)
      for c in rfc8867.CASES
      for suffix, what, ecn in (("-dualpi2", "DualPI2, media Not-ECT", "off"), ("-l4s", "DualPI2, media ECT(1)", "ect1"))),
    Case("media-vs-cubic-dualpi2", "Media beside CUBIC through DualPI2, media Not-ECT", _media_vs_cubic("off")),
    Case("media-vs-cubic-l4s", "Media beside CUBIC through DualPI2, media ECT(1)", _media_vs_cubic("ect1")),
]

NOT_RUN: dict[str, str] = {}


def case_metrics(summaries: list[dict], case: Case) -> dict:
    """RFC 8868's metrics per case (as `rtclab suite rfc8867`), and the share of the media
    packets that arrived CE-marked."""
    row = _case_metrics(summaries, case.bottleneck, case.bottleneck_shared)

    def ce(s: dict) -> Optional[float]:
        media = [f for f in s["flows"] if f.get("media") and f["packets_received"]]
        return _mean(f["ecn_marks"] / f["packets_received"] for f in media)

    row["media_ce_fraction"] = _mean(ce(s) for s in summaries)
    return row


#: (row key, column title, format) of the suite table.
COLUMNS = [*RMCAT_COLUMNS, ("media_ce_fraction", "media CE frac.", ".3f")]
