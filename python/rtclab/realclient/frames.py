"""A real client's video frames read back from its capture, and libwebrtc's overshoot detector
replayed on them.

`rtclab realclient chromium SCENARIO --capture` keeps each run's sent packets
(`runN-sent.pcap`). Grouped by RTP timestamp, the video stream's packets give every frame's
first send time, payload size and capture time (the timestamp's advance: the encoder's clock,
which the pacer's holding does not move; gaps and the replay use it). Replaying the encoder overshoot detector that rtclab's twin
models (`crates/rtclab-media/src/bitrate_adjuster.rs`, after libwebrtc's
`video/encoder_overshoot_detector.cc`: a leaky bucket drained at the encoder target; each frame
reads 1 + the bucket's earlier content it pushes past one ideal frame of target / input fps,
the first of a window max(1, size / ideal); the mean over 3 s; a stream's first 30 frames the
default 1.2) on those frames, against the
call's own `targetBitrate` (the adjuster's output) and estimate, shows whether the model reads a
real encoder's frames as Chromium's adjuster did: the adjuster gives the encoder
allocation / utilization, the allocation being 0.95 of the estimate in these calls
(docs/realclient.md). Beside it, the limit libwebrtc's delay-based estimate may not grow past
(`AimdRateControl`: 1.5 × the acknowledged rate + 10 kbit/s), the acknowledged rate replayed
on the captured packets (`acked_rate`), and the call's estimate.

    python -m rtclab.realclient.frames RUN-sent.pcap RUN-sender.csv [--offset S] [--from S --to S]
        [--frames-csv NEW.csv]

It also prints the call's key frame (its first) and floor-frame sizes (`frame_sizes`: what the
Chromium twin's `key_frame_size` and `floor_jitter` were measured with) and, with
`--frames-csv`, writes the frames to a new CSV file.

`--offset`: seconds to add to capture times to put them on the sender log's clock (the capture
starts later; printed as found when not given, by matching per-second payload rates).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import csv
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional

#: libwebrtc's `kWindowSize` for the utilization factors (s).
WINDOW_S = 3.0
#: `EncoderBitrateAdjuster`: the first `kMinFramesSinceLayoutChange` frames of a stream read
#: `kDefaultUtilizationFactor`.
MIN_FRAMES = 30
DEFAULT_FACTOR = 1.2


#: RTP's video clock (Hz).
RTP_VIDEO_HZ = 90_000


@dataclass
class Frame:
    #: The first packet's send time (the pacer's clock).
    time_s: float
    bits: float
    #: When the frame was captured (its RTP timestamp, unwrapped, on the send clock: the first
    #: frame's send time plus the timestamp's advance); the encoder's clock, which libwebrtc's
    #: overshoot detector and libvpx's frame dropping see. None: the send time.
    capture_s: Optional[float] = None

    @property
    def encoded_s(self) -> float:
        return self.time_s if self.capture_s is None else self.capture_s


def read_capture(pcap: str | Path) -> list:
    """The capture's RTP packets (`rtclab.classify.rtp_packets`), read once."""
    from rtclab.classify import rtp_packets

    packets = list(rtp_packets(pcap))
    if not packets:
        raise ValueError(f"{pcap}: no RTP packets")
    return packets


def video_frames(packets: list) -> list[Frame]:
    """The largest RTP stream (by payload bytes: the video) as frames, in send order, times from
    the capture's first packet."""
    size: collections.Counter = collections.Counter()
    for p in packets:
        size[(p.stream[4], p.payload_type)] += len(p.payload)
    (ssrc, pt), _ = size.most_common(1)[0]
    t0 = packets[0].time_s
    frames: dict[int, Frame] = {}
    for p in packets:
        if p.stream[4] == ssrc and p.payload_type == pt:
            f = frames.setdefault(p.timestamp, Frame(p.time_s - t0, 0.0))
            f.bits += 8 * len(p.payload)
    ordered = sorted(frames.items(), key=lambda kv: kv[1].time_s)
    if ordered:
        first_ts, first = ordered[0]
        for ts, f in ordered:
            # the signed advance from the first frame's timestamp, modulo RTP's 2^32 wrap
            ticks = (ts - first_ts + 2**31) % 2**32 - 2**31
            f.capture_s = first.time_s + ticks / RTP_VIDEO_HZ
    return [f for _, f in ordered]


def sent_packets(packets: list) -> list[tuple[float, int]]:
    """Every RTP packet (media, retransmissions, padding): (send time from the capture's first
    packet, size on the wire in bytes)."""
    t0 = packets[0].time_s
    return [(p.time_s - t0, p.size) for p in packets]


def acked_rate(packets: list[tuple[float, int]], now: float) -> Optional[float]:
    """libwebrtc's `RobustThroughputEstimator` (as `crates/rtclab-cc/src/gcc/acked_bitrate.rs`
    models it) at `now` on packets (time, bytes) that arrived as they were sent (an uncongested
    path: the receive and send sides see the same gaps): the smallest window of >= 20 packets and
    >= 1 s (<= 5 s), its largest gap discounted and the second largest added back, the edge
    packet left out of each side; bit/s, or None with fewer than 10 packets."""
    w = [p for p in packets if p[0] <= now and now - p[0] <= 5.0]
    i = len(w) - 1
    while i > 0 and not (len(w) - i >= 20 and now - w[i][0] >= 1.0):
        i -= 1
    w = w[max(0, i - 1):]
    if len(w) < 10:
        return None
    gaps = sorted((b[0] - a[0] for a, b in zip(w, w[1:])), reverse=True) + [0.0, 0.0]
    span = w[-1][0] - w[0][0]
    recv = 8 * sum(x[1] for x in w[1:]) / max(span - gaps[0] + gaps[1], 1e-3)
    send = 8 * sum(x[1] for x in w[:-1]) / max(span, 1e-3)
    return min(recv, send)


def replay(frames: Iterable[Frame], target_bps: Callable[[float], float], fps: float = 30.0) -> list[float]:
    """The network utilization factor after each frame (in encoding order, at `encoded_s`), the
    detector's target at a frame's time given by `target_bps(t)` (drained at the rate in force
    since the previous frame)."""
    buffer = 0.0
    last: Optional[float] = None
    rate = 0.0
    window: collections.deque = collections.deque()
    out = []
    for f in frames:
        t = f.encoded_s
        target = target_bps(t)
        if last is not None:
            buffer = max(0.0, buffer - rate * (t - last))
        last, rate = t, target
        ideal = target / fps
        if ideal <= 0:
            out.append(out[-1] if out else 1.0)
            continue
        over = min(buffer, f.bits + buffer - ideal) if f.bits + buffer > ideal else 0.0
        while window and window[0][0] < t - WINDOW_S:
            window.popleft()
        factor = max(1.0, f.bits / ideal) if not window else 1.0 + over / ideal
        buffer += f.bits - over
        window.append((t, factor))
        out.append(sum(x for _, x in window) / len(window) if len(out) + 1 >= MIN_FRAMES else DEFAULT_FACTOR)
    return out


def _sender_log(path: str | Path) -> tuple[list[float], list[dict]]:
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    if not rows or not {"time_s", "encoder_target_bps", "target_bps", "bytes_sent"} <= rows[0].keys():
        raise ValueError(f"{path}: not a realclient chromium sender log (runN-sender.csv)")
    return [float(r["time_s"]) for r in rows], rows


def _offset(frames: list[Frame], rows: list[dict]) -> float:
    """Seconds that put the capture on the log's clock: the shift (whole seconds) that best
    matches the per-second payload rates."""
    cap: collections.Counter = collections.Counter()
    for f in frames:
        cap[int(f.time_s)] += f.bits
    log: dict[int, float] = {}
    for a, b in zip(rows, rows[1:]):
        ta, tb = float(a["time_s"]), float(b["time_s"])
        if int(ta) == int(tb) or tb - int(tb) < 0.05:
            log[int(ta)] = log.get(int(ta), 0.0) + 8 * (int(b["bytes_sent"]) - int(a["bytes_sent"]))
    keys = [k for k in log if k >= 1]
    return float(min(range(-20, 21), key=lambda o: sum((cap.get(k - o, 0.0) - log[k]) ** 2 for k in keys)))


#: Frames left out of the floor's statistics at the start of a call (the key frame and the
#: frames libvpx makes while its buffer starts full).
START_FRAMES = 10


def frame_sizes(frames: list[Frame]) -> dict[str, float]:
    """The sizes the Chromium twin's content parameters come from (docs/algorithms/encoder.md):
    the call's first frame (its key frame) in bytes, the median of the frames after the first
    `START_FRAMES`, their robust relative spread (1.4826 × median absolute deviation / median:
    the floor's frame-to-frame variation when the call is held at it, unmoved by the odd frame
    carrying more) and the key frame over that median."""
    if len(frames) <= START_FRAMES:
        raise ValueError(f"{len(frames)} frames: need more than {START_FRAMES}")
    ordered = sorted(frames, key=lambda f: f.encoded_s)
    first, rest = ordered[0], ordered[START_FRAMES:]
    b = [f.bits / 8 for f in rest]
    med = statistics.median(b)
    mad = statistics.median(abs(x - med) for x in b)
    return {"key_bytes": first.bits / 8, "median_bytes": med, "spread": 1.4826 * mad / med,
            "key_ratio": first.bits / 8 / med, "frames": len(rest)}


def write_frames_csv(frames: list[Frame], path: str | Path) -> None:
    """The frames as CSV (send_s, capture_s, bytes), in capture order, to a new file `path`:
    written whole beside it first, then linked into place, so an existing file (FileExistsError)
    is never replaced and a failed write leaves nothing."""
    import os
    import tempfile

    path = Path(path)
    rows = ["send_s,capture_s,bytes"] + [f"{f.time_s:.6f},{f.encoded_s:.6f},{f.bits / 8:.0f}"
                                         for f in sorted(frames, key=lambda f: f.encoded_s)]
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(rows) + "\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as the umask allows (mkstemp's file is 0600)
        os.link(tmp, path)
    finally:
        os.unlink(tmp)


def read_frames_csv(path: str | Path) -> list[Frame]:
    with open(path, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or set(rows[0]) != {"send_s", "capture_s", "bytes"}:
        raise ValueError(f"{path}: not a frames CSV (send_s,capture_s,bytes)")
    return [Frame(float(r["send_s"]), 8 * float(r["bytes"]), float(r["capture_s"])) for r in rows]


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rtclab.realclient.frames", description=__doc__.split("\n\n")[0])
    ap.add_argument("pcap")
    ap.add_argument("sender_csv")
    ap.add_argument("--offset", type=float)
    ap.add_argument("--from", dest="lo", type=float, default=0.0)
    ap.add_argument("--to", dest="hi", type=float, default=60.0)
    ap.add_argument("--fps", type=float, default=30.0, help="the input frame rate the detector divides by (30)")
    ap.add_argument("--frames-csv", metavar="PATH", help="also write the video frames (send_s, capture_s, bytes) there")
    a = ap.parse_args(argv)
    from rtclab.classify import CaptureError

    try:
        captured = read_capture(a.pcap)
        times, rows = _sender_log(a.sender_csv)
    except (OSError, ValueError, CaptureError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    frames = video_frames(captured)
    if a.frames_csv:
        try:
            write_frames_csv(frames, a.frames_csv)
        except FileExistsError:
            print(f"error: --frames-csv {a.frames_csv}: exists; rtclab never replaces a file it did not write "
                  "(choose another path)", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"error: --frames-csv {a.frames_csv}: {e.strerror or e}", file=sys.stderr)
            return 2
    if len(frames) > START_FRAMES:
        z = frame_sizes(frames)
        print(f"first frame (the key frame) {z['key_bytes']:.0f} B; frames after the first {START_FRAMES}: median "
              f"{z['median_bytes']:.0f} B, robust spread {z['spread']:.3f}; key / median {z['key_ratio']:.2f}")
    off = a.offset if a.offset is not None else _offset(frames, rows)
    if a.offset is None:
        print(f"capture times + {off:g} s = the sender log's (matched per-second rates)")
    frames = sorted((Frame(f.time_s + off, f.bits, None if f.capture_s is None else f.capture_s + off) for f in frames),
                    key=lambda f: f.encoded_s)

    def at(t: float, key: str) -> float:
        return float(rows[max(0, bisect.bisect_right(times, t) - 1)][key])

    util = replay(frames, lambda t: at(t, "encoder_target_bps"), a.fps)
    packets = [(t + off, size) for t, size in sent_packets(captured)]
    per: dict[int, list] = collections.defaultdict(list)
    for f, u in zip(frames, util):
        t = f.encoded_s
        if a.lo <= t < a.hi:
            per[int(t)].append((f, u, at(t, "encoder_target_bps") / (0.95 * at(t, "target_bps"))))
    print("second  frames  kbit/frame  gaps (input frames)  replayed adjusted/alloc  Chromium's"
          "  1.5 x acked + 10 kbit/s  estimate")
    prev = None
    for s in sorted(per):
        v = per[s]
        gaps = []
        for f, _, _ in v:
            if prev is not None:
                gaps.append(round((f.encoded_s - prev) * a.fps))
            prev = f.encoded_s
        u = sum(x[1] for x in v) / len(v)
        real = sum(x[2] for x in v) / len(v)
        kbit = sum(x[0].bits for x in v) / len(v) / 1e3
        acked = acked_rate(packets, s + 0.5)
        limit = f"{(1.5 * acked + 10e3) / 1e3:.0f}" if acked else "-"
        print(f"{s:6d}  {len(v):6d}  {kbit:10.1f}  {str(dict(sorted(collections.Counter(gaps).items()))):19s}  "
              f"{1 / min(2.0, max(1.0, u)):23.2f}  {real:10.2f}  {limit:>23s}  {at(s + 0.5, 'target_bps') / 1e3:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
