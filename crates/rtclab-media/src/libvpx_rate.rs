//! A model of libvpx VP8's one-pass CBR rate control as libwebrtc configures it: what a real
//! encoder does to the target it is given at low rates (frames it cannot make small enough,
//! frames it drops).
//!
//! Structure from libvpx `vp8/encoder/onyx_if.c` (`encode_frame_to_data_rate`) and
//! `ratectrl.c`; settings from libwebrtc's `LibvpxVp8Encoder::InitEncode`
//! (`rc_buf_initial_sz` 500 ms, `rc_buf_optimal_sz` 600 ms, `rc_buf_sz` 1000 ms,
//! `rc_dropframe_thresh` 30 with frame dropping on, `rc_max_quantizer` 56):
//!
//! - A buffer of bits (`bits_off_target`) earns target / fps per input frame and pays each
//!   encoded frame's size; it is capped at the buffer size and may go negative.
//! - The decimation factor (0-3) follows the buffer against the drop mark (30 % of the optimal
//!   level) and its 2/3, 1/4 and 1/8: a factor d drops d of every d + 1 frames and raises the
//!   frame budget by 3/2 (d = 1) or 5/4 (d = 2, 3). A key frame is never decimated.
//! - A frame that would start with the buffer under-run (below 0) is dropped (libvpx's
//!   buffer-underrun drop, as `vp8_pick_frame_size` does in CBR with dropping allowed).
//! - The frame's budget is steered by the buffer (ours: ± half the budget as the buffer sits
//!   half an optimal level over or under the optimal one: libvpx's `calc_pframe_target_size`
//!   does this through its under/overshoot percentages and active quantizer range).
//!
//! - libwebrtc's `LibvpxVp8Encoder` never lets the dropping run longer than 2 s
//!   (`kDefaultMaxFrameDropInterval`, field trial `WebRTC-VP8-MaxFrameInterval`): a frame asked
//!   for 2 s or more after the last one encoded is encoded with frame dropping off
//!   (`rc_dropframe_thresh` 0 for that frame: no decimation, no under-run drop), "even if this
//!   causes some bitrate overshoot", so that receivers do not take the gap for a fault. The
//!   caller says so with `decide`'s `allow_drop`.
//!
//! What the quantizer cannot do is the model's own parameter: at the highest quantizer
//! (`rc_max_quantizer` 56) a frame of a given picture and content cannot be made smaller than
//! `min_bits_per_pixel` × width × height × `complexity` (a key frame: that times its size
//! ratio). Under that floor the encoder overshoots its budget, the buffer runs down, and
//! decimation and under-run drops take the frame rate down instead: the low-rate behaviour
//! Chromium's logs show (640x480 near 100 kbit/s: 4-5 of 26-28 frames a second sent,
//! docs/realclient.md). The floor's value and its source are in docs/algorithms/encoder.md.

/// libwebrtc's VP8 quantizer range (`rc_min_quantizer` 2, `rc_max_quantizer` 56) on libvpx's
/// internal 0-127 scale (`q_trans`), the scale `VP8E_GET_LAST_QUANTIZER` and so `getStats()`'s
/// `qpSum` report: 2 and 106 (Chromium 156 at its floor reports exactly 106 a frame).
pub const QP_MIN: u32 = 2;
pub const QP_MAX: u32 = 106;
/// The quantizer's effect on size: a frame's size is its floor × exp(`QP_LOG_SLOPE` × (106 −
/// QP)). Fitted to Chromium 156's frames on constant-rate links that are not judged
/// (docs/algorithms/encoder.md, "The QP model").
pub const QP_LOG_SLOPE: f64 = 0.0116;
/// A source picture scaled down to a share r of its pixels keeps more detail per pixel: its
/// frames at a given quantizer are r^`SCALED_SIZE_EXPONENT` of the full picture's, not r of
/// it. Measured on Chromium 156 scaling its 640x480 canvas to 320x240 on constant-rate links
/// that are not judged (docs/algorithms/encoder.md, "The QP model"): 0.64 of the size at a
/// quarter of the pixels.
pub const SCALED_SIZE_EXPONENT: f64 = 0.33;

/// The pixel count whose floor a `pixels` picture scaled from a `source_pixels` one has (the
/// source's own size: the picture's).
pub fn effective_pixels(pixels: f64, source_pixels: f64) -> f64 {
    if pixels >= source_pixels || source_pixels <= 0.0 {
        pixels
    } else {
        source_pixels * (pixels / source_pixels).powf(SCALED_SIZE_EXPONENT)
    }
}

/// The buffer settings, in seconds of the target rate.
pub const BUFFER_S: f64 = 1.0;
pub const OPTIMAL_S: f64 = 0.6;
pub const INITIAL_S: f64 = 0.5;
/// `rc_dropframe_thresh`: the drop mark as a percentage of the optimal level.
pub const DROP_THRESHOLD_PCT: f64 = 30.0;

/// What the rate control decided for one input frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Encode with this many bytes.
    Encode(f64),
    /// Dropped by decimation or buffer under-run.
    Drop,
}

#[derive(Clone, Debug)]
pub struct Vp8RateControl {
    /// Smallest frame, bits per pixel at the highest quantizer, for content of complexity 1.
    pub min_bits_per_pixel: f64,
    pub complexity: f64,
    buffer_bits: f64,
    decimation_factor: u8,
    decimation_count: u8,
    started: bool,
    pub decimated: u64,
    pub underrun_drops: u64,
}

impl Vp8RateControl {
    pub fn new(min_bits_per_pixel: f64, complexity: f64) -> Self {
        Vp8RateControl {
            min_bits_per_pixel,
            complexity,
            buffer_bits: 0.0,
            decimation_factor: 0,
            decimation_count: 0,
            started: false,
            decimated: 0,
            underrun_drops: 0,
        }
    }

    /// The smallest frame the encoder can make of a `pixels` picture (bytes).
    pub fn floor_bytes(&self, pixels: f64, key: bool, key_ratio: f64) -> f64 {
        let f = self.min_bits_per_pixel * pixels * self.complexity / 8.0;
        if key {
            f * key_ratio
        } else {
            f
        }
    }

    /// The QP a frame of `bytes` was encoded at: the quantizer that makes a `pixels` picture that
    /// size, within the encoder's range (a frame at its floor is at `QP_MAX`).
    pub fn qp(&self, bytes: f64, pixels: f64, key: bool, key_ratio: f64) -> u32 {
        let floor = self.floor_bytes(pixels, key, key_ratio).max(1.0);
        let q = f64::from(QP_MAX) - (bytes.max(1.0) / floor).ln() / QP_LOG_SLOPE;
        q.round().clamp(f64::from(QP_MIN), f64::from(QP_MAX)) as u32
    }

    /// One input frame at `target_bps` and `fps` (`key` frames are never decimated; with
    /// `allow_drop` false nothing is, as libvpx with `rc_dropframe_thresh` 0): the decision and
    /// the bits the buffer earned for it (pass them to `encoded`).
    pub fn decide(
        &mut self,
        target_bps: f64,
        fps: f64,
        key: bool,
        allow_drop: bool,
    ) -> (Decision, f64) {
        let per_frame = target_bps / fps.max(1e-9);
        let (max, optimal) = (BUFFER_S * target_bps, OPTIMAL_S * target_bps);
        if !self.started {
            self.started = true;
            self.buffer_bits = INITIAL_S * target_bps;
        }
        self.buffer_bits = self.buffer_bits.min(max);
        let drop_mark = DROP_THRESHOLD_PCT / 100.0 * optimal;
        let (m75, m50, m25) = (drop_mark * 2.0 / 3.0, drop_mark / 4.0, drop_mark / 8.0);
        let b = self.buffer_bits;
        if !allow_drop {
            // libvpx's `drop_frames_allowed` off: the decimation state is left, its count reset.
            self.decimation_count = 0;
            let steer = (0.5 * (b - optimal) / optimal.max(1.0)).clamp(-0.5, 0.5);
            return (Decision::Encode(per_frame * (1.0 + steer) / 8.0), per_frame);
        }
        if b > drop_mark && self.decimation_factor > 0 {
            self.decimation_factor -= 1;
        }
        let d = self.decimation_factor;
        self.decimation_factor = if b > m75 && d > 0 {
            1
        } else if b < m25 && (d == 2 || d == 3) {
            3
        } else if b < m50 && (d == 1 || d == 2) {
            2
        } else if b < m75 && (d == 0 || d == 1) {
            1
        } else {
            d
        };
        let mut budget = per_frame;
        if self.decimation_factor > 0 {
            budget *= if self.decimation_factor == 1 { 1.5 } else { 1.25 };
            if key {
                self.decimation_count = self.decimation_factor;
            } else if self.decimation_count > 0 {
                self.decimation_count -= 1;
                self.buffer_bits = (self.buffer_bits + per_frame).min(max);
                self.decimated += 1;
                return (Decision::Drop, per_frame);
            } else {
                self.decimation_count = self.decimation_factor;
            }
        } else {
            self.decimation_count = 0;
        }
        if !key && self.buffer_bits < 0.0 {
            self.buffer_bits = (self.buffer_bits + per_frame).min(max);
            self.underrun_drops += 1;
            return (Decision::Drop, per_frame);
        }
        let steer = (0.5 * (self.buffer_bits - optimal) / optimal.max(1.0)).clamp(-0.5, 0.5);
        (Decision::Encode(budget * (1.0 + steer) / 8.0), per_frame)
    }

    /// The frame encoded in `bytes` after an `Encode` decision that earned `per_frame` bits.
    pub fn encoded(&mut self, bytes: f64, per_frame_bits: f64, target_bps: f64) {
        self.buffer_bits =
            (self.buffer_bits + per_frame_bits - bytes * 8.0).min(BUFFER_S * target_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `secs` at `fps` and returns (frames sent per second, sent kbit/s).
    fn run(
        rc: &mut Vp8RateControl,
        target_kbps: f64,
        pixels: f64,
        fps: f64,
        secs: f64,
    ) -> (f64, f64) {
        let (mut sent, mut bits) = (0u32, 0.0);
        let target = target_kbps * 1000.0;
        for _ in 0..(secs * fps) as usize {
            if let (Decision::Encode(budget), earned) = rc.decide(target, fps, false, true) {
                let size = budget.max(rc.floor_bytes(pixels, false, 1.0));
                rc.encoded(size, earned, target);
                sent += 1;
                bits += size * 8.0;
            }
        }
        (sent as f64 / secs, bits / secs / 1000.0)
    }

    #[test]
    fn above_its_floor_the_encoder_sends_every_frame_at_the_target() {
        let mut rc = Vp8RateControl::new(0.065, 1.0);
        let (fps, kbps) = run(&mut rc, 1000.0, 640.0 * 480.0, 30.0, 30.0);
        assert_eq!(fps, 30.0);
        assert!((kbps - 1000.0).abs() < 30.0, "{kbps}");
    }

    #[test]
    fn under_its_floor_it_drops_frames_and_keeps_about_the_rate() {
        // 640x480 at 0.065 bit per pixel: 2.5 kB frames; 100 kbit/s buys 5 of them a second.
        let mut rc = Vp8RateControl::new(0.065, 1.0);
        let (fps, kbps) = run(&mut rc, 100.0, 640.0 * 480.0, 28.0, 60.0);
        assert!((4.0..=6.5).contains(&fps), "{fps}");
        assert!((90.0..=115.0).contains(&kbps), "{kbps}");
        assert!(rc.decimated > 0 && rc.underrun_drops > 0);
    }

    #[test]
    fn a_scaled_picture_keeps_more_bits_than_its_pixels() {
        let src = 640.0 * 480.0;
        assert_eq!(effective_pixels(src, src), src);
        let quarter = effective_pixels(src / 4.0, src);
        assert!((quarter / src - 0.25f64.powf(SCALED_SIZE_EXPONENT)).abs() < 1e-12);
        assert!(quarter > src / 4.0 && quarter < src);
    }

    #[test]
    fn the_qp_falls_as_frames_grow_past_the_floor() {
        let rc = Vp8RateControl::new(0.06, 1.0);
        let px = 640.0 * 480.0;
        let floor = rc.floor_bytes(px, false, 1.0);
        assert_eq!(rc.qp(floor, px, false, 1.0), QP_MAX);
        assert_eq!(rc.qp(floor * 0.5, px, false, 1.0), QP_MAX);
        let twice = rc.qp(floor * 2.0, px, false, 1.0);
        assert_eq!(twice, (106.0 - 2f64.ln() / QP_LOG_SLOPE).round() as u32);
        assert_eq!(rc.qp(floor * 1e6, px, false, 1.0), QP_MIN);
        // A key frame of the key ratio's size is at the same QP as its delta frame.
        assert_eq!(rc.qp(floor * 2.0 * 3.0, px, true, 3.0), twice);
    }

    #[test]
    fn with_dropping_off_a_frame_is_encoded_whatever_the_buffer() {
        let mut rc = Vp8RateControl::new(0.065, 1.0);
        let pixels = 640.0 * 480.0;
        run(&mut rc, 30.0, pixels, 30.0, 5.0); // far under the floor: the buffer is negative
        assert!(matches!(rc.decide(30_000.0, 30.0, false, true).0, Decision::Drop));
        let (d, earned) = rc.decide(30_000.0, 30.0, false, false);
        let Decision::Encode(b) = d else { panic!("dropped with dropping off") };
        rc.encoded(b.max(rc.floor_bytes(pixels, false, 1.0)), earned, 30_000.0);
    }

    #[test]
    fn a_key_frame_is_never_dropped() {
        let mut rc = Vp8RateControl::new(0.065, 1.0);
        let pixels = 640.0 * 480.0;
        run(&mut rc, 50.0, pixels, 30.0, 5.0);
        for _ in 0..10 {
            let (d, earned) = rc.decide(50_000.0, 30.0, true, true);
            let Decision::Encode(b) = d else { panic!("key frame dropped") };
            rc.encoded(b.max(rc.floor_bytes(pixels, true, 3.0)), earned, 50_000.0);
        }
    }
}
