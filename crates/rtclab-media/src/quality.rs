//! A documented picture-quality proxy from bitrate and resolution, for comparing runs — not a
//! perceptual metric (no pixels are coded; PSNR/SSIM/VMAF need real video).
//!
//! Quality rises with the logarithm of the bits the encoder spends per pixel, the shape of
//! the log utility ABR work uses for bitrate (Pensieve's and BOLA's `ln(R / R_min)`), made
//! resolution-aware by counting bits per pixel per frame (bpp = bitrate / (width × height ×
//! fps)) and anchored at two points of H.264-class coding: 0.002 bpp is unwatchable (0) and
//! 0.2 bpp is visually transparent (100):
//!
//! `Q = 100 · clamp(ln(bpp / 0.002) / ln(100), 0, 1)`
//!
//! 720p at 30 fps: 2 Mbit/s → 78, 500 kbit/s → 48; 1080p at 60 fps, 20 Mbit/s → 95.

/// Bits per pixel at which the proxy reaches 0 and 100.
pub const BPP_FLOOR: f64 = 0.002;
pub const BPP_TRANSPARENT: f64 = 0.2;

/// The proxy in [0, 100] for a media bitrate (bit/s), a resolution and a frame rate; None
/// when any of them is not positive.
pub fn quality_proxy(bitrate_bps: f64, width: u32, height: u32, fps: f64) -> Option<f64> {
    let pixels = width as f64 * height as f64 * fps;
    if !(bitrate_bps > 0.0 && pixels > 0.0) {
        return None;
    }
    let bpp = bitrate_bps / pixels;
    let q = (bpp / BPP_FLOOR).ln() / (BPP_TRANSPARENT / BPP_FLOOR).ln();
    Some(100.0 * q.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_points() {
        let q = |r: f64, w, h, f| quality_proxy(r, w, h, f).unwrap().round();
        assert_eq!(q(2e6, 1280, 720, 30.0), 78.0);
        assert_eq!(q(5e5, 1280, 720, 30.0), 48.0);
        assert_eq!(q(20e6, 1920, 1080, 60.0), 95.0);
        assert_eq!(q(1e3, 1920, 1080, 60.0), 0.0);
        assert_eq!(q(1e9, 640, 360, 30.0), 100.0);
        assert_eq!(quality_proxy(0.0, 1280, 720, 30.0), None);
        // Monotone in bitrate, falling with resolution.
        assert!(q(3e6, 1280, 720, 30.0) > q(2e6, 1280, 720, 30.0));
        assert!(q(2e6, 1920, 1080, 30.0) < q(2e6, 1280, 720, 30.0));
    }
}
