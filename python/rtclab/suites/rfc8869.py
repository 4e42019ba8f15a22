"""RFC 8869 ("Evaluation Test Cases for Interactive Real-Time Media over Wireless Networks"):
the Wi-Fi cases and the cellular cases as rtclab scenarios, for any media congestion controller.

**Wi-Fi** (numbered as `cisco/ns3-rmcat:test/rmcat-wifi-test-suite.cc` numbers them, after
draft-ietf-rmcat-wireless-tests-04 §4; specs `peers-and-test-suites.md` §4.5). The path is a
wired link and then the access point: media, CBR and TCP senders on the wired side for
downlink flows, on Wi-Fi stations for uplink flows (`direction = "reverse"`). 120 s each.

- 4.1, wired bottleneck: 1 Mbit/s each way, one-way delay 50 ms, a 300 ms drop-tail queue.
  a: one downlink media flow; b: one uplink; c: one each way; d-g: c plus one 300 kbit/s
  CBR-over-UDP flow (d downlink, e uplink) or one TCP NewReno bulk flow (f downlink, g uplink)
  from 40 to 80 s.
- 4.2, Wi-Fi bottleneck: the wired link at 100 Mbit/s; a: 16, 24 or 32 downlink media flows,
  b: as many uplink, c: half each way; d: 12 + 12 media flows with 4 uplink 600 kbit/s CBR
  flows, e: with 4 uplink TCP NewReno bulk flows (both from 40 to 80 s).

The access point is rtclab's Wi-Fi link (docs/algorithms/wifi_ap.md) at ns3-rmcat's PHY mode,
802.11n HT MCS 11 (two spatial streams, 16-QAM 1/2, 20 MHz, long guard interval: 52 Mbit/s) in
the 5 GHz band (AIFS = SIFS 16 µs + 3 slots of 9 µs = 43 µs; SIFS + BlockAck at 24 Mbit/s
= 48 µs), a 100-packet MAC queue behind a 1000-packet FIFO (pfifo_fast's default length), and
`uplink = true`: every flow's client is a station on the same channel (its uplink data, or its
feedback) with a 1000-packet queue, contending with the AP by DCF, as ns3-rmcat puts a station
per flow.

Stated differences: Mbit/s are 10^6 bit/s (ns3-rmcat uses 2^20); the video source is rtclab's
rate model, as in RFC 8867's suite.

**Cellular** (RFC 8869's varying network load and bad radio coverage cases). The RFC describes
them as system-level radio simulations (macro cells, mobility, a scheduler) for which no open
implementation exists (ns3-rmcat: "not implemented yet"); rtclab runs them on measured
cellular capacity traces instead (the Zhuge evaluation's trace sets, found as `rtclab repro
zhuge` finds them: shipped in `rtclab/data/wireless-zhuge`, or `$RTCLAB_ZHUGE_TRACES`), the base station's per-user buffers and round-robin scheduler as SFQ (a queue per
flow, served in turn), 120 s, base RTT 100 ms (a 40 ms core + Internet path each way plus the
radio hop, rounded):

- cellular-load: one downlink media flow on the ABC paper's 4G trace `abc4g_0` while other
  users' bulk downloads (TCP CUBIC) arrive as a Poisson process (mean gap 10 s) and last an
  exponential time (mean 20 s), drawn from a fixed seed, so the cell's load rises and falls.
- cellular-edge: one downlink media flow alone on the ABC 4G trace with the lowest mean
  capacity (`abc4g_22`, 0.43 Mbit/s: the set's cell-edge stand-in).

Utilization is read where each case's bottleneck is: the wired link in the directions that
carry media (4.1), the channel (4.2: both directions' deliveries added, against the 52 Mbit/s PHY rate they
share, so about 0.9 at most after MAC overheads),
the cell (cellular).

Without the trace sets the cellular cases are listed as not run, with the reason.
"""

from __future__ import annotations

import random
from pathlib import Path

from rtclab.suites.rfc8867 import Case

DURATION = "120s"
#: 4.1's wired link (ns3-rmcat's defaults).
WIRED_41 = "1Mbps"
WIRED_42 = "100Mbps"
ONE_WAY = "50ms"
QUEUE = "300ms"
#: The access point: HT MCS 11 at 20 MHz, long GI; 5 GHz timing.
PHY = "52Mbps"
WIFI = {"aifs_us": 43, "ack_us": 48, "uplink": True, "station_queue": 1000}
AP_QUEUE = {"limit": "1000pkt"}
CBR_41 = "300kbps"
CBR_42 = "600kbps"
BACKGROUND = ("40s", "80s")
FLOWS_42 = (16, 24, 32)


def _links(wired: str) -> list[dict]:
    return [
        {"name": "wired", "capacity": wired, "delay": ONE_WAY, "queue": {"limit": QUEUE},
         "reverse": {"capacity": wired, "queue": {"limit": QUEUE}}},
        {"name": "ap", "capacity": PHY, "delay": "0.1ms", "queue": AP_QUEUE, "wifi": dict(WIFI)},
    ]


def _flow(name: str, up: bool, **kw) -> dict:
    f = {"name": name, "path": ["wired", "ap"], "rtt": "0.2ms", **kw}
    if up:
        f["direction"] = "reverse"
    return f


def _media(cc: str, name: str, up: bool = False) -> dict:
    return _flow(name, up, kind="media", cc=cc)


def _background(kind: str, up: bool, rate: str = CBR_41, name: str | None = None) -> dict:
    start, stop = BACKGROUND
    name = name or f"{kind}-{'up' if up else 'down'}"
    if kind == "cbr":
        return _flow(name, up, kind="cbr", rate=rate, start=start, stop=stop)
    return _flow(name, up, kind="tcp", cc="newreno", delayed_ack=False, start=start, stop=stop)


def _wifi_41(variant: str, cc: str) -> dict:
    down, up, extra = {"a": (1, 0, None), "b": (0, 1, None), "c": (1, 1, None),
                       "d": (1, 1, ("cbr", False)), "e": (1, 1, ("cbr", True)),
                       "f": (1, 1, ("tcp", False)), "g": (1, 1, ("tcp", True))}[variant]
    flows = [_media(cc, "media-down")] * down + [_media(cc, "media-up", up=True)] * up
    if extra:
        flows.append(_background(*extra))
    return {"name": f"rfc8869-4.1.{variant}", "description": "Wi-Fi, wired bottleneck", "duration": DURATION,
            "links": _links(WIRED_41), "flows": flows}


def _wifi_42(variant: str, n: int, cc: str) -> dict:
    down, up = {"a": (n, 0), "b": (0, n), "c": (n // 2, n // 2), "d": (12, 12), "e": (12, 12)}[variant]
    flows = [_media(cc, f"media-down{i}") for i in range(down)]
    flows += [_media(cc, f"media-up{i}", up=True) for i in range(up)]
    if variant == "d":
        flows += [_background("cbr", True, CBR_42, f"cbr-up{i}") for i in range(4)]
    if variant == "e":
        flows += [_background("tcp", True, name=f"tcp-up{i}") for i in range(4)]
    return {"name": f"rfc8869-4.2.{variant}-n{down + up}",
            "description": f"Wi-Fi bottleneck, {down} downlink + {up} uplink media flows", "duration": DURATION,
            "links": _links(WIRED_42), "flows": flows}


# ----- cellular -----

CELL_RTT = "100ms"
CELL_QUEUE = {"kind": "sfq", "limit": "2000pkt", "depth": 1000, "flows": 128}
LOAD_TRACE = "abc4g_0"
EDGE_SET = "abc4g"
LOAD_MEAN_GAP_S = 10.0
LOAD_MEAN_HOLD_S = 20.0
LOAD_SEED = 8869


def _trace_dir() -> Path:
    from rtclab.repro.zhuge import trace_dir

    return trace_dir()


def _mean_rate(path: Path) -> float:
    """A trace's mean rate, for choosing the poorest; unreadable lines are skipped here (the
    scenario loader reports them, with file and line, when the case runs)."""
    vals = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            vals.append(float(line.split()[1]))
        except (IndexError, ValueError):
            continue
    return sum(vals) / len(vals) if vals else 0.0


def _cell(trace: Path) -> dict:
    return {"capacity": {"trace": str(trace), "format": "bandwidth"}, "queue": dict(CELL_QUEUE)}


def background_users(duration_s: float, seed: int = LOAD_SEED) -> list[dict]:
    """The cellular-load case's other users: bulk downloads arriving as a Poisson process."""
    rng = random.Random(seed)
    flows, t, k = [], rng.expovariate(1 / LOAD_MEAN_GAP_S), 0
    while t < duration_s - 1.0:
        stop = min(duration_s, t + rng.expovariate(1 / LOAD_MEAN_HOLD_S))
        flows.append({"name": f"user{k}", "kind": "tcp", "cc": "cubic", "rtt": CELL_RTT,
                      "start": f"{t:.3f}s", "stop": f"{stop:.3f}s"})
        k += 1
        t += rng.expovariate(1 / LOAD_MEAN_GAP_S)
    return flows


def _cellular_load(trace: Path, cc: str) -> dict:
    return {"name": "rfc8869-cellular-load", "description": f"cellular, varying load ({trace.stem})",
            "duration": DURATION, "link": _cell(trace),
            "flows": [{"name": "media", "kind": "media", "cc": cc, "rtt": CELL_RTT},
                      *background_users(float(DURATION[:-1]))]}


def _cellular_edge(trace: Path, cc: str) -> dict:
    return {"name": "rfc8869-cellular-edge", "description": f"cellular, bad radio coverage ({trace.stem})",
            "duration": DURATION, "link": _cell(trace),
            "flows": [{"name": "media", "kind": "media", "cc": cc, "rtt": CELL_RTT}]}


def _bind(fn, arg):
    return lambda cc: fn(arg, cc)


WIRED_DOWN, WIRED_UP = ("wired", "forward"), ("wired", "reverse")
CASES = [Case(f"4.1.{v}", title, _bind(_wifi_41, v),
              (WIRED_DOWN,) if v == "a" else (WIRED_UP,) if v == "b" else (WIRED_DOWN, WIRED_UP)) for v, title in (
    ("a", "Wi-Fi, wired bottleneck: one downlink media flow"),
    ("b", "Wi-Fi, wired bottleneck: one uplink media flow"),
    ("c", "Wi-Fi, wired bottleneck: media both ways"),
    ("d", "Wi-Fi, wired bottleneck: media both ways + downlink CBR 40-80 s"),
    ("e", "Wi-Fi, wired bottleneck: media both ways + uplink CBR 40-80 s"),
    ("f", "Wi-Fi, wired bottleneck: media both ways + downlink TCP 40-80 s"),
    ("g", "Wi-Fi, wired bottleneck: media both ways + uplink TCP 40-80 s"))]
AP_DOWN, AP_UP = ("ap", "forward"), ("ap", "reverse")
for _v, _title, _bn in (("a", "downlink media flows", (AP_DOWN,)), ("b", "uplink media flows", (AP_UP,)),
                        ("c", "media flows, half each way", (AP_DOWN, AP_UP))):
    CASES += [Case(f"4.2.{_v}-n{n}", f"Wi-Fi bottleneck: {n} {_title}", _bind(lambda a, cc, v=_v: _wifi_42(v, a, cc), n),
                   _bn, True) for n in FLOWS_42]
CASES += [
    Case("4.2.d-n24", "Wi-Fi bottleneck: 12 + 12 media flows + 4 uplink CBR 40-80 s",
         _bind(lambda a, cc: _wifi_42("d", a, cc), 24), (AP_DOWN, AP_UP), True),
    Case("4.2.e-n24", "Wi-Fi bottleneck: 12 + 12 media flows + 4 uplink TCP 40-80 s",
         _bind(lambda a, cc: _wifi_42("e", a, cc), 24), (AP_DOWN, AP_UP), True),
]

#: The cases not run, and why (none: the cellular traces ship with rtclab, `rtclab.datasets`).
NOT_RUN: dict[str, str] = {}


def _load_trace() -> Path:
    """The cellular-load case's trace; DataMissing (exit 2) if the trace set or the file is missing."""
    from rtclab.datasets import DataMissing

    path = _trace_dir() / f"{LOAD_TRACE}.pitree-trace"
    if not path.is_file():
        raise DataMissing(f"suite rfc8869 cellular-load: {path} not found")
    return path


def _edge_trace() -> Path:
    """The cellular-edge case's trace: the set's trace with the lowest mean rate."""
    from rtclab.datasets import DataMissing

    edge = sorted(_trace_dir().glob(f"{EDGE_SET}_*.pitree-trace"), key=lambda p: (_mean_rate(p), p.name))
    if not edge:
        raise DataMissing(f"suite rfc8869 cellular-edge: no {EDGE_SET}_*.pitree-trace in {_trace_dir()}")
    return edge[0]


# The traces are located when a case is built, so that importing the suite reads no file.
CASES.append(Case("cellular-load", "Cellular: varying network load", lambda cc: _cellular_load(_load_trace(), cc)))
CASES.append(Case("cellular-edge", "Cellular: bad radio coverage", lambda cc: _cellular_edge(_edge_trace(), cc)))
