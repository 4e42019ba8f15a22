"""The libvpx_vp8 encoder model's measured constants, fitted again from the Chromium runs they
were measured on (`python -m rtclab.encoder_fit`; docs/algorithms/encoder.md, "The QP model").

The runs are Chromium 156 calls on constant-rate links that no agreement table judges
(`realclient/recorded/chromium-rate/`: 0.3-1.7 Mbit/s with the 640x480 canvas, 0.15-0.6 with a
320x240 canvas, and 0.15-0.6 with Chromium's own degradation preference, which scales the
640x480 canvas down). Each 1 s window from 5 s on without a key frame or a size change gives
the mean QP of its frames (`qpSum`) and their bits per pixel (RTP payload bytes less
retransmissions). Three constants of `crates/rtclab-media/src/libvpx_rate.rs` come from them:

- the floor in bits per pixel at libwebrtc's highest quantizer (QP 106): the median of the
  windows at QP >= 105.5, per picture size;
- `QP_LOG_SLOPE`: log(bits per pixel / floor) = slope x (106 - QP), least squares through the
  origin over the 640x480 windows under QP 104;
- `SCALED_SIZE_EXPONENT`: the 640x480 canvas scaled to 320x240 by Chromium keeps
  r^exponent of the full picture's floor bits, r = 1/4 its pixels.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

#: The recordings the constants come from.
RATE_RUNS = Path(__file__).parent / "realclient" / "recorded" / "chromium-rate"
#: libwebrtc's highest VP8 quantizer on libvpx's 0-127 scale (rc_max_quantizer 56).
QP_MAX = 106


def windows(folder: Path) -> list[dict[str, float]]:
    """The 1 s windows of a recording's sender logs: width, height, pixels, frames, qp, bpp."""
    out = []
    for path in sorted(folder.glob("run*-sender.csv")):
        rows = list(csv.DictReader(path.open()))
        for a, b in zip(rows[25:-5:5], rows[30::5]):
            frames = float(b["frames_encoded"]) - float(a["frames_encoded"])
            keys = float(b["key_frames_encoded"]) - float(a["key_frames_encoded"])
            if frames < 5 or keys > 0 or (a["frame_width"], a["frame_height"]) != (b["frame_width"], b["frame_height"]):
                continue
            payload = (float(b["bytes_sent"]) - float(a["bytes_sent"])
                       - (float(b["retransmitted_bytes"]) - float(a["retransmitted_bytes"])))
            px = float(b["frame_width"]) * float(b["frame_height"])
            out.append({"width": float(b["frame_width"]), "pixels": px, "frames": frames,
                        "qp": (float(b["qp_sum"]) - float(a["qp_sum"])) / frames, "bpp": payload * 8 / frames / px})
    return out


def _source(folder: Path) -> str:
    """"native" (the canvas drawn at the encoded size) or "scaled" (Chromium scaled it down)."""
    env = json.loads((folder / "meta.json").read_text()).get("environment", {})
    return "scaled" if env.get("RTCLAB_CHROMIUM_DEGRADATION") in ("default", "maintain-framerate") else "native"


def fit(folder: Path = RATE_RUNS) -> dict[str, float]:
    """The constants as the recordings give them (module doc)."""
    by: dict[tuple[str, float], list[dict[str, float]]] = {}
    for run in sorted(p for p in folder.iterdir() if p.is_dir()):
        src = _source(run)
        for w in windows(run):
            by.setdefault((src, w["pixels"]), []).append(w)

    def floor(key: tuple[str, float]) -> float:
        at_max = [w["bpp"] for w in by.get(key, []) if w["qp"] >= QP_MAX - 0.5]
        return float(np.median(at_max)) if at_max else math.nan

    vga, qvga = 640.0 * 480, 320.0 * 240
    f_vga = floor(("native", vga))
    free = [w for w in by.get(("native", vga), []) if w["qp"] < QP_MAX - 2]
    x = np.array([QP_MAX - w["qp"] for w in free])
    y = np.log(np.array([w["bpp"] for w in free]) / f_vga)
    slope = float((x * y).sum() / (x * x).sum())
    f_scaled = floor(("scaled", qvga))
    ratio = f_scaled * qvga / (f_vga * vga)  # floor bits, scaled quarter picture / full
    return {"floor_bpp_640x480": f_vga, "floor_bpp_320x240_native": floor(("native", qvga)),
            "floor_bpp_320x240_scaled": f_scaled, "qp_log_slope": slope,
            "qp_log_slope_rms": float(np.sqrt(((y - slope * x) ** 2).mean())), "qp_windows": len(free),
            "scaled_size_ratio": ratio, "scaled_size_exponent": math.log(ratio) / math.log(qvga / vga)}


if __name__ == "__main__":
    for k, v in fit().items():
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")
