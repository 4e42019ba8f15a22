"""The libvpx_vp8 model's measured constants are what the shipped Chromium runs give
(`rtclab.encoder_fit`; docs/algorithms/encoder.md, "The QP model")."""

import re
from pathlib import Path

from rtclab import encoder_fit

ROOT = Path(__file__).resolve().parent.parent


def _rust_const(path: str, name: str) -> float:
    text = (ROOT / path).read_text()
    m = re.search(rf"pub const {name}: f64 = ([0-9.]+);", text)
    assert m, f"{name} not found in {path}"
    return float(m.group(1))


def test_the_model_constants_are_the_fit_of_the_recorded_runs():
    f = encoder_fit.fit()
    rate = "crates/rtclab-media/src/libvpx_rate.rs"
    assert f["qp_windows"] >= 50
    assert round(f["qp_log_slope"], 4) == _rust_const(rate, "QP_LOG_SLOPE")
    assert f["qp_log_slope_rms"] < 0.1  # log-linear in QP, within about 10 %
    assert round(f["scaled_size_exponent"], 2) == _rust_const(rate, "SCALED_SIZE_EXPONENT")
    # The floor the encoder uses was measured on `vp8-floor` (0.15 Mbit/s); these runs agree
    # within 10 %.
    floor = _rust_const("crates/rtclab-media/src/encoder.rs", "VP8_MIN_BITS_PER_PIXEL")
    assert abs(f["floor_bpp_640x480"] / floor - 1) < 0.10
    # A picture scaled down keeps more bits per pixel than one drawn at that size.
    assert f["floor_bpp_320x240_scaled"] > f["floor_bpp_320x240_native"] > f["floor_bpp_640x480"]


def test_windows_skip_key_frames_and_size_changes(tmp_path):
    head = ("time_s,target_bps,bytes_sent,encoder_target_bps,retransmitted_bytes,frame_width,fps,quality_limitation,"
            "frames_encoded,key_frames_encoded,pli_received,nack_received,huge_frames_sent,qp_sum,frame_height")
    rows = [head]
    for i in range(60):
        t = i * 0.2
        w, keys = (640 if i < 40 else 320), (1 if i < 33 else 2)
        rows.append(f"{t},1e6,{i * 2500},1e6,0,{w},30,none,{i * 6},{keys},0,0,0,{i * 6 * 50},{w * 3 // 4}")
    (tmp_path / "run1-sender.csv").write_text("\n".join(rows) + "\n")
    ws = encoder_fit.windows(tmp_path)
    # 1 s windows from row 25: (25,30) stays; the key frame at 33 cuts (30,35), the size change at
    # 40 cuts (35,40); (40,45), (45,50), (50,55) stay
    assert [w["width"] for w in ws] == [640, 320, 320, 320]
    assert all(abs(w["qp"] - 50) < 1e-9 for w in ws)
    assert abs(ws[0]["bpp"] - 2500 * 5 * 8 / 30 / (640 * 480)) < 1e-12
