//! A media flow: its controller and feedback, encoder, packetizer and pacer, protection, and the
//! receiver's playout and decoder.

use super::cc::*;
use super::entry::{MediaCc, MediaEntry};
use super::spec::*;
use super::values::*;
use crate::config::*;
use crate::units::RateValue;
use crate::ConfigError;
use rtclab_cc::gcc::detector::DetectorConfig;
use rtclab_cc::gcc::{GccConfig, GccPaperConfig};
use rtclab_cc::registry::Role;
use rtclab_core::{Rate, TimeDelta};
use rtclab_media::encoder::EncoderConfig;
use rtclab_media::packetizer::PacketizerConfig;
use rtclab_media::receiver::FeedbackMode;
use std::path::Path;

/// The receiving endpoint's own send-side estimate that sets libwebrtc's TWCC cadence: in a
/// one-way call it never leaves libwebrtc's default start rate (`kDefaultStartBitrateBps`).
const RECEIVER_SEND_ESTIMATE_BPS: f64 = 300_000.0;

/// A media flow's sending rates: (start, min, max).
type Bitrates = (Rate, Rate, Rate);

pub(super) fn media_spec(
    f: &MediaEntry,
    at: &dyn Fn(&str) -> String,
    base_dir: &Path,
) -> Result<FlowKindSpec, ConfigError> {
    use rtclab_media::sender::MediaSenderConfig;
    let p = f.media;
    let cc = &f.cc;
    let rates = bitrates(p, at)?;
    let (start, min, max) = rates;
    let fps = p.and_then(|p| p.fps).unwrap_or(30.0);
    if !(fps > 0.0 && fps <= 240.0) {
        return Err(ConfigError::new(
            at("media.fps"),
            format!("{fps} is out of range: accepted (0, 240]"),
        ));
    }
    let (ccspec, feedback) = media_controller(f, p, cc, rates, base_dir, at)?;
    let encoder = encoder_config(p, &f.cc, fps, min, max, base_dir, at)?;
    let (pacer_burst, packetizer) = pacer_and_packetizer(f, p, at)?;
    if p.is_some_and(|p| p.zoom_like.is_some()) && !matches!(ccspec, MediaCcSpec::ZoomLike(_)) {
        return Err(ConfigError::new(
            at("media.zoom_like"),
            format!("Zoom-like parameters given but cc is {:?}", cc.name()),
        ));
    }
    if p.is_some_and(|p| p.tree.is_some()) && !matches!(ccspec, MediaCcSpec::Tree(_)) {
        return Err(ConfigError::new(
            at("media.tree"),
            format!("a tree is given but cc is {:?} (use cc = \"tree\")", cc.name()),
        ));
    }
    let protection = protection_spec(p.and_then(|p| p.protection.as_ref()), &ccspec, at)?;
    let ecn = media_ecn(p, &feedback, at)?;
    if p.is_some_and(|p| p.feedback_cadence.is_some()) && !matches!(feedback, FeedbackMode::Ccfb(_))
    {
        return Err(ConfigError::new(
            at("media.feedback_cadence"),
            "applies to RFC 8888 feedback only: set feedback = \"rfc8888\"",
        ));
    }
    let sender = MediaSenderConfig {
        encoder,
        packetizer,
        start_bitrate: start,
        pacer_burst,
        protection,
        ecn,
    };
    let (playout, decode) = receiver_stages(p, at)?;
    let key_frame_requests = p.and_then(|p| p.key_frame_requests).unwrap_or(true);
    // libwebrtc with NACK waits 3 s
    let frame_wait =
        seconds_within(p.and_then(|p| p.frame_wait.as_ref()), 10, "media.frame_wait", at)?;
    let frame_rate_control = p.and_then(|p| p.frame_rate_control.clone());
    if let Some(name) = &frame_rate_control {
        rtclab_media::afr::controller::FrameRatePolicy::by_name(name, 2.0, 0.95, false)
            .map_err(|e| ConfigError::new(at("media.frame_rate_control"), e))?;
    }
    Ok(FlowKindSpec::Media(Box::new(MediaSpec {
        cc: ccspec,
        sender,
        feedback,
        playout,
        decode,
        key_frame_requests,
        frame_wait,
        frame_rate_control,
    })))
}

/// `media.ecn`: the packets' ECN field. Only RFC 8888 feedback carries the field back, so
/// with any other feedback a mark would change how the network treats the packets (marked,
/// not dropped) with the sender never learning of it.
fn media_ecn(
    p: Option<&MediaParams>,
    feedback: &FeedbackMode,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_core::Ecn, ConfigError> {
    let ecn = requested_ecn(p);
    if ecn == rtclab_core::Ecn::NotEct {
        return Ok(ecn);
    }
    if !matches!(feedback, FeedbackMode::Ccfb(_)) {
        return Err(ConfigError::new(
            at("media.ecn"),
            "ECN on media needs feedback = \"rfc8888\": only RFC 8888 reports each packet's ECN field back to the sender (TWCC, REMB and receiver reports do not), so CE marks would go unseen",
        ));
    }
    Ok(ecn)
}

/// RFC 8888 feedback at the cadence `media.feedback_cadence` names.
fn ccfb_config(p: Option<&MediaParams>) -> rtclab_media::ccfb::CcfbConfig {
    match p.and_then(|p| p.feedback_cadence) {
        Some(FeedbackCadence::Scream) => rtclab_media::ccfb::CcfbConfig::scream(),
        None | Some(FeedbackCadence::Libwebrtc) => rtclab_media::ccfb::CcfbConfig::default(),
    }
}

/// The ECN field `media.ecn` asks for.
fn requested_ecn(p: Option<&MediaParams>) -> rtclab_core::Ecn {
    match p.and_then(|p| p.ecn) {
        None | Some(MediaEcn::Off) => rtclab_core::Ecn::NotEct,
        Some(MediaEcn::Ect0) => rtclab_core::Ecn::Ect0,
        Some(MediaEcn::Ect1) => rtclab_core::Ecn::Ect1,
    }
}

/// `media.start_bitrate`, `min_bitrate`, `max_bitrate` (300 kbit/s, 30 kbit/s, 2 Mbit/s).
fn bitrates(p: Option<&MediaParams>, at: &dyn Fn(&str) -> String) -> Result<Bitrates, ConfigError> {
    let rate = |v: Option<RateValue>, default: Rate, field: &str| -> Result<Rate, ConfigError> {
        let r = v.map_or(default, |r| r.0);
        if r == Rate::ZERO {
            return Err(ConfigError::new(at(&format!("media.{field}")), "must be positive"));
        }
        Ok(r)
    };
    let start = rate(p.and_then(|p| p.start_bitrate), Rate::from_kbps(300), "start_bitrate")?;
    let min = rate(p.and_then(|p| p.min_bitrate), Rate::from_kbps(30), "min_bitrate")?;
    let max = rate(p.and_then(|p| p.max_bitrate), Rate::from_kbps(2_000), "max_bitrate")?;
    if min > max || start < min || start > max {
        return Err(ConfigError::new(
            at("media"),
            format!("need min_bitrate <= start_bitrate <= max_bitrate, got {min}, {start}, {max}"),
        ));
    }
    Ok((start, min, max))
}

/// The overuse detector's threshold settings, applied to a controller's default detector.
fn detector_tuning(
    p: Option<&MediaParams>,
    at: &dyn Fn(&str) -> String,
) -> Result<impl Fn(DetectorConfig) -> DetectorConfig, ConfigError> {
    let threshold = p.and_then(|p| p.threshold);
    if let Some(t) = threshold {
        // gcc_paper's default statistic (the paper's m) runs on thresholds below libwebrtc's 6.
        if !(t > 0.0 && t <= 600.0) {
            return Err(ConfigError::new(
                at("media.threshold"),
                format!("{t} is out of range: accepted (0, 600] (ms-equivalents of the detector's statistic)"),
            ));
        }
    }
    let adaptive = p.and_then(|p| p.adaptive_threshold).unwrap_or(true);
    let tune = move |d: DetectorConfig| DetectorConfig {
        adaptive,
        initial_threshold: threshold.unwrap_or(d.initial_threshold),
        ..d
    };
    Ok(tune)
}

/// The media flow's controller and the feedback that drives it.
fn media_controller(
    f: &MediaEntry,
    p: Option<&MediaParams>,
    cc: &MediaCc,
    rates: Bitrates,
    base_dir: &Path,
    at: &dyn Fn(&str) -> String,
) -> Result<(MediaCcSpec, FeedbackMode), ConfigError> {
    let (start, min, max) = rates;
    let tune = detector_tuning(p, at)?;
    let ecn = requested_ecn(p);
    // ECN on media implies RFC 8888 feedback, the one that reports it back (gcc_paper's REMB
    // cannot: `media_ecn` says so).
    let feedback_name = p
        .and_then(|p| p.feedback)
        .or((ecn != rtclab_core::Ecn::NotEct && !matches!(cc, MediaCc::GccPaper))
            .then_some(FeedbackName::Ccfb));
    let (ccspec, feedback) = match (cc, feedback_name) {
        (MediaCc::Gcc, None | Some(FeedbackName::Twcc) | Some(FeedbackName::Ccfb)) => {
            gcc_spec(p, rates, &tune, feedback_name, at)?
        }
        (MediaCc::GccPaper, None | Some(FeedbackName::Remb)) => {
            gcc_paper_spec(p, rates, &tune, at)?
        }
        (MediaCc::Gcc, Some(FeedbackName::Remb)) => {
            return Err(ConfigError::new(
                at("media.feedback"),
                "\"remb\" cannot drive cc = \"gcc\", which estimates at the sender from per-packet feedback; use feedback = \"twcc\" (or cc = \"gcc_paper\")",
            ))
        }
        (MediaCc::GccPaper, Some(FeedbackName::Twcc)) => {
            return Err(ConfigError::new(
                at("media.feedback"),
                "\"twcc\" cannot drive cc = \"gcc_paper\", whose estimator runs at the receiver and reports REMB; use feedback = \"remb\" (or cc = \"gcc\")",
            ))
        }
        (MediaCc::GccPaper, Some(FeedbackName::Ccfb)) => {
            return Err(ConfigError::new(
                at("media.feedback"),
                "\"rfc8888\" cannot drive cc = \"gcc_paper\", whose estimator runs at the receiver and reports REMB; use feedback = \"remb\" (or cc = \"gcc\")",
            ))
        }
        (MediaCc::ZoomLike, fb) => {
            let feedback = per_packet_feedback(p, fb, "zoom_like", 100, at)?;
            let mut z = rtclab_cc::ZoomLikeConfig {
                max_media_bps: max.as_bps() as f64,
                min_media_bps: min.as_bps() as f64,
                start_media_bps: start.as_bps() as f64,
                ..Default::default()
            };
            apply_params(
                rtclab_cc::zoom_like::ZOOM_LIKE_PARAMS,
                &mut z,
                p.and_then(|p| p.zoom_like.as_ref()),
                "media.zoom_like",
                at,
            )?;
            (MediaCcSpec::ZoomLike(z), feedback)
        }
        (MediaCc::Tree, fb) => {
            let feedback = per_packet_feedback(p, fb, "tree", 50, at)?;
            (MediaCcSpec::Tree(tree_spec(p, min, max, start, base_dir, at)?), feedback)
        }
        (MediaCc::Window { cc, initial_window }, fb) => {
            // Acknowledgement cadence of a QUIC receiver (max_ack_delay 25 ms).
            let feedback = per_packet_feedback(p, fb, cc.name(), 25, at)?;
            let iw = initial_window.unwrap_or(10);
            if iw == 0 || iw > 1000 {
                return Err(ConfigError::new(
                    at("initial_window"),
                    format!("{iw} is out of range: accepted 1..=1000 packets"),
                ));
            }
            let packet = f.packet_size.map_or(1248, |s| s.0.min(65_535) as u32);
            let media = rtclab_cc::registry::MediaArgs {
                min_bps: min.as_bps() as f64,
                start_bps: start.as_bps() as f64,
                max_bps: max.as_bps() as f64,
                ecn,
            };
            let spec = window_cc_spec(cc, packet, iw, Role::Media, Some(media), at)?;
            (MediaCcSpec::Window(spec), feedback)
        }
    };
    Ok((ccspec, feedback))
}

/// Today's send-side GCC with TWCC or RFC 8888 feedback.
fn gcc_spec(
    p: Option<&MediaParams>,
    (start, min, max): Bitrates,
    tune: &dyn Fn(DetectorConfig) -> DetectorConfig,
    feedback_name: Option<FeedbackName>,
    at: &dyn Fn(&str) -> String,
) -> Result<(MediaCcSpec, FeedbackMode), ConfigError> {
    let mut g = GccConfig {
        start_bitrate_bps: start.as_bps() as f64,
        min_bitrate_bps: min.as_bps() as f64,
        max_bitrate_bps: max.as_bps() as f64,
        ..GccConfig::default()
    };
    g.trendline.detector = tune(g.trendline.detector);
    if p.and_then(|p| p.tfrc_floor).is_some() {
        return Err(ConfigError::new(
            at("media.tfrc_floor"),
            "applies to cc = \"gcc_paper\" only (the 2013 loss rule)",
        ));
    }
    if p.and_then(|p| p.rtcp_2013).is_some() {
        return Err(ConfigError::new(
            at("media.rtcp_2013"),
            "applies to cc = \"gcc_paper\" only (its receiver sends the receiver reports)",
        ));
    }
    apply_params(
        rtclab_cc::gcc::params::GCC_PARAMS,
        &mut g,
        p.and_then(|p| p.gcc.as_ref()),
        "media.gcc",
        at,
    )?;
    // With transport-wide feedback, libwebrtc's video send stream sets the pacing factor when it
    // is created (`VideoSendStreamImpl`: `GetConfiguredPacingFactor` -> `kStrictPacingMultiplier`
    // 1.1 -> `RtpTransportControllerSend::SetPacingFactor`), so GoogCC paces at it from the first
    // packet; only with RFC 8888 feedback (where `SetPacingFactor` is not called) does GoogCC's
    // own 2.5 hold until the first feedback. An `initial_pacing_factor` given by name wins.
    let given_initial =
        p.and_then(|p| p.gcc.as_ref()).is_some_and(|m| m.contains_key("initial_pacing_factor"));
    if feedback_name != Some(FeedbackName::Ccfb) && !given_initial {
        g.initial_pacing_factor = g.pacing_factor;
    }
    loss_bounds(g.loss.low_loss, g.loss.high_loss, at)?;
    if g.trendline.detector.min_threshold > g.trendline.detector.max_threshold {
        return Err(ConfigError::new(at("media.gcc"), "need min_threshold <= max_threshold"));
    }
    let feedback = if feedback_name == Some(FeedbackName::Ccfb) {
        if p.and_then(|p| p.feedback_interval).is_some() {
            return Err(ConfigError::new(at("media.feedback_interval"), "applies to twcc feedback only (RFC 8888 feedback follows frames and its 500 kbit/s budget)"));
        }
        FeedbackMode::Ccfb(ccfb_config(p))
    } else {
        // libwebrtc's cadence for a receiver whose own send-side estimate is its start
        // rate (a one-way call: the receiving endpoint sends no media): 50 ms.
        let interval = p.and_then(|p| p.feedback_interval).map_or_else(
            || rtclab_media::feedback::libwebrtc_twcc_interval(RECEIVER_SEND_ESTIMATE_BPS),
            |d| d.0,
        );
        if interval <= rtclab_core::TimeDelta::ZERO {
            return Err(ConfigError::new(at("media.feedback_interval"), "must be positive"));
        }
        FeedbackMode::Twcc { interval }
    };
    Ok((MediaCcSpec::Gcc(Box::new(g)), feedback))
}

/// GCC's loss rule needs `loss_low <= loss_high`.
fn loss_bounds(low: f64, high: f64, at: &dyn Fn(&str) -> String) -> Result<(), ConfigError> {
    if low > high {
        return Err(ConfigError::new(
            at("media.gcc"),
            format!("need loss_low <= loss_high, got {low} > {high}"),
        ));
    }
    Ok(())
}

/// The 2017 paper's receiver-side GCC with REMB and receiver reports.
fn gcc_paper_spec(
    p: Option<&MediaParams>,
    (start, min, max): Bitrates,
    tune: &dyn Fn(DetectorConfig) -> DetectorConfig,
    at: &dyn Fn(&str) -> String,
) -> Result<(MediaCcSpec, FeedbackMode), ConfigError> {
    if p.and_then(|p| p.feedback_interval).is_some() {
        return Err(ConfigError::new(
            at("media.feedback_interval"),
            "applies to twcc feedback only",
        ));
    }
    // The statistic picks the detector's defaults (bounds in its units), so it is read
    // before the other parameters, which may then override them.
    let remb_path = matches!(
        p.and_then(|p| p.gcc.as_ref()).and_then(|g| g.get("remb_statistic")),
        Some(crate::config::ParamValue::Bool(true))
    );
    let base = if remb_path { GccPaperConfig::remb_path() } else { GccPaperConfig::default() };
    let mut g = GccPaperConfig {
        start_bitrate_bps: start.as_bps() as f64,
        min_bitrate_bps: min.as_bps() as f64,
        max_bitrate_bps: max.as_bps() as f64,
        ..base
    };
    g.detector = tune(g.detector);
    g.loss.tfrc_floor = p.and_then(|p| p.tfrc_floor).unwrap_or(false);
    apply_params(
        rtclab_cc::gcc::params::GCC_PAPER_PARAMS,
        &mut g,
        p.and_then(|p| p.gcc.as_ref()),
        "media.gcc",
        at,
    )?;
    loss_bounds(g.loss.low_loss, g.loss.high_loss, at)?;
    let rr_randomized = p.and_then(|p| p.rtcp_2013).unwrap_or(false);
    Ok((
        MediaCcSpec::GccPaper(g),
        FeedbackMode::RembAndRr {
            estimator: Box::new(g),
            rr_interval: rtclab_core::TimeDelta::from_secs(1),
            rr_randomized,
        },
    ))
}

/// A duration key within 0..=`max_s` seconds.
fn seconds_within(
    d: Option<&crate::units::Duration>,
    max_s: i64,
    key: &str,
    at: &dyn Fn(&str) -> String,
) -> Result<Option<TimeDelta>, ConfigError> {
    match d {
        Some(d) if d.0 < TimeDelta::ZERO || d.0 > TimeDelta::from_secs(max_s) => {
            Err(ConfigError::new(at(key), format!("must be within 0..={max_s} s")))
        }
        d => Ok(d.map(|d| d.0)),
    }
}

/// The encoder the keys of `media` start from, the sender `media.sender` names: "libwebrtc"
/// ([`EncoderConfig::libwebrtc_vp8`]) unless the controller is a model of another
/// application's sender (cc = "zoom_like", whose frames follow its own model), or "ideal" (an
/// encoder that meets its target, `EncoderConfig::default()`; rtclab's default until
/// 2026-12-01).
fn sender_base(
    p: Option<&MediaParams>,
    cc: &MediaCc,
    fps: f64,
    at: &dyn Fn(&str) -> String,
) -> Result<EncoderConfig, ConfigError> {
    match p.and_then(|p| p.sender.as_deref()) {
        None if matches!(cc, MediaCc::ZoomLike) => Ok(EncoderConfig { fps, ..Default::default() }),
        None | Some("libwebrtc") => Ok(EncoderConfig::libwebrtc_vp8(fps)),
        Some("ideal") => Ok(EncoderConfig { fps, ..Default::default() }),
        Some(other) => Err(ConfigError::new(
            at("media.sender"),
            format!("unknown sender {other:?}: accepted \"libwebrtc\", \"ideal\""),
        )),
    }
}

/// The encoder: frame rate, rate range, key frames, encode time and lag, frame sizes.
fn encoder_config(
    p: Option<&MediaParams>,
    cc: &MediaCc,
    fps: f64,
    min: Rate,
    max: Rate,
    base_dir: &Path,
    at: &dyn Fn(&str) -> String,
) -> Result<EncoderConfig, ConfigError> {
    let base = sender_base(p, cc, fps, at)?;
    let mut encoder = EncoderConfig { min_bitrate: min, max_bitrate: max, ..base };
    match p.and_then(|p| p.key_frame_interval).map(|d| d.0) {
        Some(d) if d == rtclab_core::TimeDelta::ZERO => encoder.key_frame_interval = None,
        Some(d) => encoder.key_frame_interval = Some(d),
        None => {}
    }
    // A number key within `lo..=hi`.
    let number = |v: Option<f64>, lo: f64, hi: f64, key: &str, meaning: &str| match v {
        Some(v) if !(lo..=hi).contains(&v) => Err(ConfigError::new(
            at(key),
            format!("{v} is out of range: accepted {lo}..={hi} ({meaning})"),
        )),
        v => Ok(v),
    };
    if let Some(d) =
        seconds_within(p.and_then(|p| p.encode_time.as_ref()), 1, "media.encode_time", at)?
    {
        encoder.encode_time = d;
    }
    if let Some(d) =
        seconds_within(p.and_then(|p| p.encoder_lag.as_ref()), 10, "media.encoder_lag", at)?
    {
        encoder.rate_time_constant = d;
    }
    let jitter = p.and_then(|p| p.frame_size_jitter);
    if let Some(j) = number(
        jitter,
        0.0,
        0.5,
        "media.frame_size_jitter",
        "the spread of frame sizes around the rate",
    )? {
        encoder.size_jitter = j;
    }
    let key_size = p.and_then(|p| p.key_frame_size);
    if let Some(k) =
        number(key_size, 1.0, 20.0, "media.key_frame_size", "a key frame's size in normal frames")?
    {
        encoder.key_frame_factor = k;
    }
    let share = p.and_then(|p| p.encoder_target_share);
    if let Some(s) = number(
        share,
        0.1,
        1.0,
        "media.encoder_target_share",
        "the share of the controller's target the encoder is given",
    )? {
        encoder.target_share = s;
    }
    let complexity = number(
        p.and_then(|p| p.content_complexity),
        0.05,
        20.0,
        "media.content_complexity",
        "scales the libvpx_vp8 frame-size floor",
    )?;
    let model = match p.and_then(|p| p.encoder_model.as_deref()) {
        Some(m) => m,
        // A replayed frame-size trace is the encoder (the libwebrtc sender's libvpx model would
        // size the frames itself); a model asked for by name beside it is an error below.
        None if p.and_then(|p| p.frame_sizes.as_ref()).is_some() => "ideal",
        None if encoder.model == rtclab_media::encoder::EncoderModel::Ideal => "ideal",
        None => "libvpx_vp8",
    };
    match model {
        "ideal" => {
            encoder.model = rtclab_media::encoder::EncoderModel::Ideal;
            if complexity.is_some() {
                return Err(ConfigError::new(
                    at("media.content_complexity"),
                    "applies to encoder_model = \"libvpx_vp8\" only (the ideal encoder has no \
                     frame-size floor)",
                ));
            }
        }
        "libvpx_vp8" => {
            encoder.model = rtclab_media::encoder::EncoderModel::LibvpxVp8 {
                min_bits_per_pixel: rtclab_media::encoder::VP8_MIN_BITS_PER_PIXEL,
                complexity: complexity.unwrap_or(1.0),
            };
        }
        other => {
            return Err(ConfigError::new(
                at("media.encoder_model"),
                format!("unknown encoder model {other:?}: accepted \"ideal\", \"libvpx_vp8\""),
            ));
        }
    }
    if let Some(b) = p.and_then(|p| p.bitrate_adjuster) {
        encoder.bitrate_adjuster = b;
    }
    if let Some(d) = seconds_within(
        p.and_then(|p| p.max_frame_drop_interval.as_ref()),
        10,
        "media.max_frame_drop_interval",
        at,
    )? {
        if encoder.model == rtclab_media::encoder::EncoderModel::Ideal {
            return Err(ConfigError::new(
                at("media.max_frame_drop_interval"),
                "applies to encoder_model = \"libvpx_vp8\" only (the ideal encoder drops no frame)",
            ));
        }
        encoder.max_frame_drop_interval = (d > TimeDelta::ZERO).then_some(d);
    }
    if let Some(j) = number(
        p.and_then(|p| p.floor_jitter),
        0.0,
        0.5,
        "media.floor_jitter",
        "the spread of the frame-size floor from frame to frame",
    )? {
        if encoder.model == rtclab_media::encoder::EncoderModel::Ideal {
            return Err(ConfigError::new(
                at("media.floor_jitter"),
                "applies to encoder_model = \"libvpx_vp8\" only (the ideal encoder has no \
                 frame-size floor)",
            ));
        }
        encoder.floor_jitter = j;
    }
    match p.and_then(|p| p.degradation.as_deref()) {
        None | Some("maintain_resolution") => {}
        Some("maintain_framerate") => {
            if encoder.model == rtclab_media::encoder::EncoderModel::Ideal {
                return Err(ConfigError::new(
                    at("media.degradation"),
                    "\"maintain_framerate\" needs encoder_model = \"libvpx_vp8\" (resolution \
                     adaptation reads the encoder's QP and dropped frames; the ideal encoder has \
                     neither)",
                ));
            }
            encoder.degradation = rtclab_media::encoder::Degradation::MaintainFramerate;
        }
        Some("balanced") => {
            return Err(ConfigError::new(
                at("media.degradation"),
                "\"balanced\" (libwebrtc's frame rate and resolution by turns) is not modelled: \
                 accepted \"maintain_resolution\", \"maintain_framerate\"",
            ));
        }
        Some(other) => {
            return Err(ConfigError::new(
                at("media.degradation"),
                format!(
                    "unknown degradation preference {other:?}: accepted \"maintain_resolution\", \
                     \"maintain_framerate\""
                ),
            ));
        }
    }
    if let Some(r) = p.and_then(|p| p.resolution.as_deref()) {
        let parsed = r.split_once(['x', 'X']).and_then(|(w, h)| {
            Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?))
        });
        match parsed {
            Some((w, h)) if (16..=16_384).contains(&w) && (16..=16_384).contains(&h) => {
                (encoder.width, encoder.height) = (w, h);
            }
            _ => {
                return Err(ConfigError::new(
                    at("media.resolution"),
                    format!(
                    "{r:?} is not WIDTHxHEIGHT with each side in 16..=16384 (e.g. \"1920x1080\")"
                ),
                ))
            }
        }
    }
    if let Some(path) = p.and_then(|p| p.frame_sizes.as_deref()) {
        if encoder.model != rtclab_media::encoder::EncoderModel::Ideal {
            return Err(ConfigError::new(
                at("media.frame_sizes"),
                "replays frame sizes, which encoder_model = \"libvpx_vp8\" would size itself: \
                 use one or the other",
            ));
        }
        encoder.size_trace = read_frame_sizes(base_dir, path, &at("media.frame_sizes"))?;
        encoder.size_trace_scaled = p.and_then(|p| p.frame_sizes_scaled).unwrap_or(true);
    } else if p.and_then(|p| p.frame_sizes_scaled).is_some() {
        return Err(ConfigError::new(at("media.frame_sizes_scaled"), "needs media.frame_sizes"));
    }
    Ok(encoder)
}

/// The pacer's burst and the packetizer's largest packet.
fn pacer_and_packetizer(
    f: &MediaEntry,
    p: Option<&MediaParams>,
    at: &dyn Fn(&str) -> String,
) -> Result<(Option<TimeDelta>, PacketizerConfig), ConfigError> {
    // The 2017 paper's pacer sends 5 ms bursts; today's libwebrtc paces smoothly.
    let default_burst = match f.cc {
        MediaCc::GccPaper => Some(rtclab_core::TimeDelta::from_millis(5)),
        _ => None,
    };
    let pacer_burst = p
        .and_then(|p| p.pacer_burst)
        .map_or(default_burst, |d| Some(d.0))
        .filter(|d| *d > rtclab_core::TimeDelta::ZERO);
    if pacer_burst.is_some_and(|d| d > rtclab_core::TimeDelta::from_secs(1)) {
        return Err(ConfigError::new(
            at("media.pacer_burst"),
            "is out of range: accepted 0s..=1s (the paper uses 5ms)",
        ));
    }
    // packet_size is the largest packet on the wire (the MTU the packetizer fills).
    let mut packetizer = PacketizerConfig::default();
    if let Some(size) = f.packet_size {
        let min = packetizer.overhead as u64 + 52;
        if size.0 < min || size.0 > 65_535 {
            return Err(ConfigError::new(
                at("packet_size"),
                format!("{} B is out of range for media: accepted {min}..=65535 B (48 B of headers + payload)", size.0),
            ));
        }
        packetizer.max_payload = size.0 as u32 - packetizer.overhead;
    }
    Ok((pacer_burst, packetizer))
}

/// The receiver's playout (jitter buffer) and decoder.
fn receiver_stages(
    p: Option<&MediaParams>,
    at: &dyn Fn(&str) -> String,
) -> Result<(rtclab_media::playout::Playout, rtclab_media::decoder::DecodeTime), ConfigError> {
    use rtclab_media::decoder::DecodeTime;
    use rtclab_media::playout::Playout;
    let positive =
        |d: Option<crate::units::Duration>, key: &str| -> Result<Option<TimeDelta>, ConfigError> {
            match d {
                Some(d) if d.0 <= TimeDelta::ZERO || d.0 > TimeDelta::from_secs(10) => {
                    Err(ConfigError::new(
                        at(key),
                        "must be positive and at most 10 s (leave it out for none)",
                    ))
                }
                d => Ok(d.map(|d| d.0)),
            }
        };
    let delay = positive(p.and_then(|p| p.playout_delay), "media.playout_delay")?;
    let playout = match p.and_then(|p| p.jitter_buffer.as_deref()) {
        None => delay.map_or(Playout::Immediate, Playout::Fixed),
        Some("adaptive") => Playout::Adaptive { min: delay.unwrap_or(TimeDelta::ZERO) },
        Some(other) => {
            return Err(ConfigError::new(
                at("media.jitter_buffer"),
                format!("unknown jitter buffer {other:?} (accepted: \"adaptive\"; leave it out for a fixed or no playout delay)"),
            ))
        }
    };
    let mut decode = positive(p.and_then(|p| p.decode_time), "media.decode_time")?
        .map_or(DecodeTime::Zero, DecodeTime::Fixed);
    if let Some(name) = p.and_then(|p| p.decoder.as_deref()) {
        if decode != DecodeTime::Zero {
            return Err(ConfigError::new(
                at("media.decoder"),
                "give either decode_time (a constant) or decoder (a device class), not both",
            ));
        }
        let Some(c) = rtclab_media::afr::clients::category(name) else {
            let names: Vec<String> = rtclab_media::afr::clients::CATEGORIES
                .iter()
                .map(|c| format!("{:?}", c.name))
                .collect();
            return Err(ConfigError::new(
                at("media.decoder"),
                format!("unknown device class {name:?} (accepted: {})", names.join(", ")),
            ));
        };
        decode = DecodeTime::Device(c);
    }
    Ok((playout, decode))
}

/// `media.protection`. `auto` is the application model's own protection: retransmission
/// (NACK + RTX) and loss-adaptive FEC belong to the Zoom-like model only.
pub(super) fn protection_spec(
    p: Option<&crate::config::ProtectionConfig>,
    cc: &MediaCcSpec,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_media::protection::ProtectionSpec, ConfigError> {
    use crate::config::ProtectionKind;
    use rtclab_media::protection::ProtectionSpec;
    use rtclab_media::rtx::RtxConfig;
    let kind = p.map_or(ProtectionKind::Auto, |p| p.kind);
    let max_rtt = match p.and_then(|p| p.rtx_max_rtt) {
        Some(d) if d.0 <= TimeDelta::ZERO => {
            return Err(ConfigError::new(at("media.protection.rtx_max_rtt"), "must be positive"))
        }
        d => d.map(|d| d.0),
    };
    for (k, given, kinds) in [
        ("fec", p.and_then(|p| p.fec).is_some(), &[ProtectionKind::Fixed][..]),
        ("code", p.and_then(|p| p.code.as_ref()).is_some(), &[ProtectionKind::Fixed]),
        ("rtx", p.and_then(|p| p.rtx).is_some(), &[ProtectionKind::Fixed, ProtectionKind::Webrtc]),
        ("lambda_exp", p.and_then(|p| p.lambda_exp).is_some(), &[ProtectionKind::Hairpin]),
        ("deadline", p.and_then(|p| p.deadline).is_some(), &[ProtectionKind::Hairpin]),
    ] {
        if given && !kinds.contains(&kind) {
            let names: Vec<String> = kinds
                .iter()
                .map(|k| format!("kind = \"{}\"", format!("{k:?}").to_lowercase()))
                .collect();
            return Err(ConfigError::new(
                at(&format!("media.protection.{k}")),
                format!(
                    "applies to {} only (kind = \"{}\" decides it)",
                    names.join(" or "),
                    format!("{kind:?}").to_lowercase()
                ),
            ));
        }
    }
    Ok(match kind {
        ProtectionKind::None => ProtectionSpec::None,
        ProtectionKind::Auto => {
            let rtx = match cc {
                MediaCcSpec::ZoomLike(z) if z.rtx_max_rtt > TimeDelta::ZERO => Some(RtxConfig {
                    max_rtt: Some(max_rtt.unwrap_or(z.rtx_max_rtt)),
                    ..Default::default()
                }),
                _ => None,
            };
            ProtectionSpec::Auto { rtx }
        }
        ProtectionKind::Fixed => {
            let fec = p.and_then(|p| p.fec).unwrap_or(0.0);
            if !(0.0..=1.0).contains(&fec) {
                return Err(ConfigError::new(
                    at("media.protection.fec"),
                    format!("{fec} is out of range: accepted 0..=1 FEC packets per media packet"),
                ));
            }
            let rtx = p.and_then(|p| p.rtx).unwrap_or(false).then(|| RtxConfig {
                max_rtt: max_rtt.or(RtxConfig::default().max_rtt),
                ..Default::default()
            });
            use rtclab_media::packetizer::FecCode;
            let code = match p.and_then(|p| p.code.as_deref()) {
                None | Some("rs") => FecCode::ReedSolomon,
                Some("xor") => FecCode::Xor,
                Some(other) => {
                    return Err(ConfigError::new(
                        at("media.protection.code"),
                        format!("unknown FEC code {other:?} (accepted: \"rs\", \"xor\")"),
                    ))
                }
            };
            ProtectionSpec::Fixed { fec_ratio: fec, rtx, code }
        }
        ProtectionKind::Webrtc => {
            // libwebrtc's NACK/RTX: at any RTT unless the scenario sets a limit.
            let rtx = p
                .and_then(|p| p.rtx)
                .unwrap_or(false)
                .then(|| RtxConfig { max_rtt, ..RtxConfig::libwebrtc() });
            ProtectionSpec::WebRtc { rtx }
        }
        ProtectionKind::Hairpin => {
            let lambda_exp = p.and_then(|p| p.lambda_exp).unwrap_or(4.0);
            if !(-1.0..=12.0).contains(&lambda_exp) {
                return Err(ConfigError::new(
                    at("media.protection.lambda_exp"),
                    format!("{lambda_exp} is out of range: accepted -1..=12 (λ = 10^-lambda_exp)"),
                ));
            }
            let deadline = p.and_then(|p| p.deadline).map_or(TimeDelta::from_millis(100), |d| d.0);
            if deadline <= TimeDelta::ZERO {
                return Err(ConfigError::new(at("media.protection.deadline"), "must be positive"));
            }
            let rtx = RtxConfig {
                max_rtt: max_rtt.or(RtxConfig::default().max_rtt),
                ..Default::default()
            };
            ProtectionSpec::Hairpin { lambda_exp, deadline, rtx }
        }
    })
}

/// Feedback for a media controller that is not GCC (it needs per-packet reports): TWCC at
/// `default_ms` or RFC 8888; GCC-only parameters and REMB are rejected.
pub(super) fn per_packet_feedback(
    p: Option<&crate::config::MediaParams>,
    fb: Option<FeedbackName>,
    cc: &str,
    default_ms: i64,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_media::receiver::FeedbackMode, ConfigError> {
    use rtclab_media::receiver::FeedbackMode;
    if fb == Some(FeedbackName::Remb) {
        return Err(ConfigError::new(
            at("media.feedback"),
            format!("\"remb\" cannot drive cc = {cc:?}, which needs per-packet feedback; use feedback = \"twcc\" or \"rfc8888\""),
        ));
    }
    if p.is_some_and(|p| {
        p.threshold.is_some()
            || p.adaptive_threshold.is_some()
            || p.tfrc_floor.is_some()
            || p.rtcp_2013.is_some()
            || p.gcc.is_some()
    }) {
        return Err(ConfigError::new(
            at("media"),
            "threshold/adaptive_threshold/tfrc_floor/rtcp_2013/gcc apply to GCC only",
        ));
    }
    if fb == Some(FeedbackName::Ccfb) {
        if p.and_then(|p| p.feedback_interval).is_some() {
            return Err(ConfigError::new(
                at("media.feedback_interval"),
                "applies to twcc feedback only (RFC 8888 feedback follows `feedback_cadence`)",
            ));
        }
        return Ok(FeedbackMode::Ccfb(ccfb_config(p)));
    }
    let interval = p
        .and_then(|p| p.feedback_interval)
        .map_or(rtclab_core::TimeDelta::from_millis(default_ms), |d| d.0);
    if interval <= rtclab_core::TimeDelta::ZERO {
        return Err(ConfigError::new(at("media.feedback_interval"), "must be positive"));
    }
    Ok(FeedbackMode::Twcc { interval })
}

/// cc = "tree": reads and checks the tree file (relative to the scenario file).
pub(super) fn tree_spec(
    p: Option<&crate::config::MediaParams>,
    min: Rate,
    max: Rate,
    start: Rate,
    base_dir: &Path,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_cc::learned::tree::TreeCcConfig, ConfigError> {
    let Some(t) = p.and_then(|p| p.tree.as_ref()) else {
        return Err(ConfigError::new(
            at("media.tree"),
            "cc = \"tree\" needs media.tree = { file = \"tree.json\" } (a tree from `rtclab metis`)",
        ));
    };
    let path = base_dir.join(&t.file);
    let text = read_input_file(&path)
        .map_err(|e| ConfigError::new(at("media.tree.file"), format!("{}: {e}", path.display())))?;
    let tree = rtclab_learn::tree::FlatTree::from_json(&path.display().to_string(), &text)
        .map_err(|e| ConfigError::new(at("media.tree.file"), e))?;
    let step = t.step.map_or(rtclab_core::TimeDelta::from_millis(60), |d| d.0);
    let cfg = rtclab_cc::learned::tree::TreeCcConfig {
        tree: std::sync::Arc::new(tree),
        step,
        start_bps: start.as_bps() as f64,
        min_bps: min.as_bps() as f64,
        max_bps: max.as_bps() as f64,
    };
    cfg.check().map_err(|e| {
        let key = if e.contains("step") { "media.tree.step" } else { "media.tree.file" };
        ConfigError::new(at(key), format!("{}: {e}", path.display()))
    })?;
    Ok(cfg)
}
