//! Every tunable of both GCC generations by name (see [`crate::params`]).

use super::kalman::DelayStatistic;
use super::loss_based::LossBasedConfig;
use super::{GccConfig, GccPaperConfig};
use crate::params::{ms, param, Param};
pub use crate::params::{set, Kind, Value};

/// `gcc` (send-side, today's libwebrtc).
pub static GCC_PARAMS: &[Param<GccConfig>] = &[
    param!(
        GccConfig,
        "trendline_window",
        "packet groups in the trendline regression (20)",
        Integer,
        2.0,
        1000.0,
        |c| c.trendline.window_size as f64,
        |c, v| c.trendline.window_size = v as usize
    ),
    param!(
        GccConfig,
        "trendline_smoothing",
        "EWMA coefficient of the accumulated delay (0.9)",
        Real,
        0.0,
        0.999,
        |c| c.trendline.smoothing_coef,
        |c, v| c.trendline.smoothing_coef = v
    ),
    param!(
        GccConfig,
        "trendline_threshold_gain",
        "slope gain in the statistic (4)",
        Real,
        0.01,
        100.0,
        |c| c.trendline.threshold_gain,
        |c, v| c.trendline.threshold_gain = v
    ),
    param!(
        GccConfig,
        "k_up",
        "threshold gain when the statistic is above it, per ms (0.0087)",
        Real,
        0.0,
        1.0,
        |c| c.trendline.detector.k_up,
        |c, v| c.trendline.detector.k_up = v
    ),
    param!(
        GccConfig,
        "k_down",
        "threshold gain when the statistic is below it, per ms (0.039)",
        Real,
        0.0,
        1.0,
        |c| c.trendline.detector.k_down,
        |c, v| c.trendline.detector.k_down = v
    ),
    param!(
        GccConfig,
        "min_threshold",
        "threshold clamp, low (6)",
        Real,
        0.0,
        1000.0,
        |c| c.trendline.detector.min_threshold,
        |c, v| c.trendline.detector.min_threshold = v
    ),
    param!(
        GccConfig,
        "max_threshold",
        "threshold clamp, high (600)",
        Real,
        0.0,
        10000.0,
        |c| c.trendline.detector.max_threshold,
        |c, v| c.trendline.detector.max_threshold = v
    ),
    param!(
        GccConfig,
        "max_adapt_offset",
        "statistic beyond threshold + this freezes adaptation, ms (15)",
        Real,
        0.0,
        1000.0,
        |c| c.trendline.detector.max_adapt_offset,
        |c, v| c.trendline.detector.max_adapt_offset = v
    ),
    param!(
        GccConfig,
        "overuse_time_ms",
        "time above the threshold before over-use, ms (10)",
        Real,
        0.0,
        10000.0,
        |c| c.trendline.detector.overusing_time_threshold_ms,
        |c, v| c.trendline.detector.overusing_time_threshold_ms = v
    ),
    param!(
        GccConfig,
        "beta",
        "multiplicative decrease of the acked rate (0.85)",
        Real,
        0.05,
        0.99,
        |c| c.aimd.beta,
        |c, v| c.aimd.beta = v
    ),
    param!(
        GccConfig,
        "increase_factor",
        "multiplicative increase per second (1.08)",
        Real,
        1.0,
        2.0,
        |c| c.aimd.increase_factor_per_s,
        |c, v| c.aimd.increase_factor_per_s = v
    ),
    param!(
        GccConfig,
        "loss_low",
        "loss below which the loss rule increases (0.02)",
        Real,
        0.0,
        1.0,
        |c| c.loss.low_loss,
        |c, v| c.loss.low_loss = v
    ),
    param!(
        GccConfig,
        "loss_high",
        "loss above which the loss rule decreases (0.10)",
        Real,
        0.0,
        1.0,
        |c| c.loss.high_loss,
        |c, v| c.loss.high_loss = v
    ),
    param!(
        GccConfig,
        "loss_based_v2",
        "LossBasedBweV2 as the loss controller; false: the classic 2 %/10 % rule only (true)",
        flag loss_v2.enabled
    ),
    param!(
        GccConfig,
        "lbv2_window",
        "LossBasedBweV2 observations kept (15)",
        Integer,
        2.0,
        1000.0,
        |c| c.loss_v2.window as f64,
        |c, v| c.loss_v2.window = v as usize
    ),
    param!(
        GccConfig,
        "lbv2_observation_ms",
        "LossBasedBweV2 observation length in send time, ms (250)",
        Integer,
        1.0,
        10000.0,
        |c| c.loss_v2.observation_min.as_millis_f64(),
        |c, v| c.loss_v2.observation_min = rtclab_core::TimeDelta::from_millis(v as i64)
    ),
    param!(
        GccConfig,
        "lbv2_temporal_weight",
        "LossBasedBweV2 weight per observation of age (0.9)",
        Real,
        0.01,
        1.0,
        |c| c.loss_v2.temporal_weight,
        |c, v| {
            c.loss_v2.temporal_weight = v;
            c.loss_v2.instant_upper_weight = v
        }
    ),
    param!(
        GccConfig,
        "lbv2_hold_factor",
        "LossBasedBweV2 HOLD duration growth, 0 = no HOLD (2)",
        Real,
        0.0,
        100.0,
        |c| c.loss_v2.hold_factor,
        |c, v| c.loss_v2.hold_factor = v
    ),
    param!(
        GccConfig,
        "lbv2_byte_loss",
        "LossBasedBweV2 counts lost bytes, not packets (true)",
        flag loss_v2.byte_loss
    ),
    param!(
        GccConfig,
        "loss_report_packets",
        "packets per loss evaluation (20)",
        Integer,
        1.0,
        100000.0,
        |c| c.loss_report_packets as f64,
        |c, v| c.loss_report_packets = v as u32
    ),
    param!(
        GccConfig,
        "initial_pacing_factor",
        "pacing factor before the first feedback (2.5; a media flow on TWCC: its pacing_factor, as libwebrtc's video stream sets it)",
        Real,
        0.1,
        100.0,
        |c| c.initial_pacing_factor,
        |c, v| c.initial_pacing_factor = v
    ),
    param!(
        GccConfig,
        "pacing_factor",
        "pacing rate / target (1.1)",
        Real,
        0.1,
        100.0,
        |c| c.pacing_factor,
        |c, v| c.pacing_factor = v
    ),
    param!(
        GccConfig,
        "probing",
        "probe clusters at all (true)",
        flag probe.enabled
    ),
    param!(
        GccConfig,
        "probe_first_scale",
        "first initial probe / start rate (3)",
        Real,
        0.0,
        100.0,
        |c| c.probe.first_exponential_scale,
        |c, v| c.probe.first_exponential_scale = v
    ),
    param!(
        GccConfig,
        "probe_second_scale",
        "second initial probe / start rate, 0 = none (6)",
        Real,
        0.0,
        100.0,
        |c| c.probe.second_exponential_scale,
        |c, v| c.probe.second_exponential_scale = v
    ),
    param!(
        GccConfig,
        "probe_further_scale",
        "further probe / estimate (2)",
        Real,
        1.0,
        100.0,
        |c| c.probe.further_scale,
        |c, v| c.probe.further_scale = v
    ),
    param!(
        GccConfig,
        "probe_further_threshold",
        "estimate / last probe needed to probe further (0.7)",
        Real,
        0.0,
        1.0,
        |c| c.probe.further_probe_threshold,
        |c, v| c.probe.further_probe_threshold = v
    ),
    param!(
        GccConfig,
        "alr_probing",
        "periodic probes while application-limited (false)",
        flag probe.periodic_alr_probing
    ),
    param!(
        GccConfig,
        "alr_probe_interval_ms",
        "ALR probe period, ms (5000)",
        Real,
        1.0,
        3600000.0,
        |c| c.probe.alr_interval.as_millis_f64(),
        |c, v| c.probe.alr_interval = ms(v)
    ),
    param!(
        GccConfig,
        "alr_probe_scale",
        "ALR probe / estimate (2)",
        Real,
        1.0,
        100.0,
        |c| c.probe.alr_scale,
        |c, v| c.probe.alr_scale = v
    ),
    param!(
        GccConfig,
        "probe_min_packets",
        "packets per probe cluster (5)",
        Integer,
        1.0,
        1000.0,
        |c| c.probe.min_probe_packets as f64,
        |c, v| c.probe.min_probe_packets = v as u32
    ),
    param!(
        GccConfig,
        "probe_duration_ms",
        "probe cluster duration, ms (15)",
        Real,
        1.0,
        1000.0,
        |c| c.probe.min_probe_duration.as_millis_f64(),
        |c, v| c.probe.min_probe_duration = ms(v)
    ),
    param!(
        GccConfig,
        "max_probe_kbps",
        "probe rate cap, kbit/s (5000)",
        Real,
        1.0,
        1.0e7,
        |c| c.max_probe_bitrate_bps / 1000.0,
        |c, v| c.max_probe_bitrate_bps = v * 1000.0
    ),
    param!(
        GccConfig,
        "alr_bandwidth_usage",
        "ALR budget rate / estimate (0.80)",
        Real,
        0.01,
        10.0,
        |c| c.alr.bandwidth_usage_ratio,
        |c, v| c.alr.bandwidth_usage_ratio = v
    ),
    param!(
        GccConfig,
        "alr_start_ratio",
        "unused budget that starts ALR (0.40)",
        Real,
        -1.0,
        1.0,
        |c| c.alr.start_budget_ratio,
        |c, v| c.alr.start_budget_ratio = v
    ),
    param!(
        GccConfig,
        "alr_stop_ratio",
        "unused budget that ends ALR (-0.60)",
        Real,
        -1.0,
        1.0,
        |c| c.alr.stop_budget_ratio,
        |c, v| c.alr.stop_budget_ratio = v
    ),
    param!(
        GccConfig,
        "pushback",
        "congestion-window pushback (true)",
        flag pushback.enabled
    ),
    param!(
        GccConfig,
        "pushback_queue_ms",
        "queue the window allows beyond the RTT, ms (350)",
        Real,
        0.0,
        100000.0,
        |c| c.pushback.accepted_queue.as_millis_f64(),
        |c, v| c.pushback.accepted_queue = ms(v)
    ),
    param!(
        GccConfig,
        "pushback_min_kbps",
        "pushback floor, kbit/s (30)",
        Real,
        0.0,
        1.0e6,
        |c| c.pushback.min_pushback_bps / 1000.0,
        |c, v| c.pushback.min_pushback_bps = v * 1000.0
    ),
    param!(
        GccConfig,
        "pushback_drop_frames",
        "drop frames instead of lowering the target (true)",
        flag pushback.drop_frame_only
    ),
    param!(
        GccConfig,
        "rtt_backoff",
        "back off when feedback stops (true)",
        flag rtt_backoff.enabled
    ),
    param!(
        GccConfig,
        "rtt_limit_ms",
        "corrected RTT that triggers backoff, ms (3000)",
        Real,
        1.0,
        3600000.0,
        |c| c.rtt_backoff.limit.as_millis_f64(),
        |c, v| c.rtt_backoff.limit = ms(v)
    ),
    param!(
        GccConfig,
        "rtt_drop_fraction",
        "target multiplier per backoff step (0.8)",
        Real,
        0.01,
        1.0,
        |c| c.rtt_backoff.drop_fraction,
        |c, v| c.rtt_backoff.drop_fraction = v
    ),
    param!(
        GccConfig,
        "rtt_drop_interval_ms",
        "time between backoff steps, ms (1000)",
        Real,
        1.0,
        3600000.0,
        |c| c.rtt_backoff.drop_interval.as_millis_f64(),
        |c, v| c.rtt_backoff.drop_interval = ms(v)
    ),
    param!(
        GccConfig,
        "rtt_floor_kbps",
        "backoff floor, kbit/s (5)",
        Real,
        0.0,
        1.0e6,
        |c| c.rtt_backoff.floor_bps / 1000.0,
        |c, v| c.rtt_backoff.floor_bps = v * 1000.0
    ),
];

/// `gcc_paper` (receiver-side Kalman, the 2017 paper).
pub static GCC_PAPER_PARAMS: &[Param<GccPaperConfig>] = &[
    param!(
        GccPaperConfig,
        "kalman_process_noise_slope",
        "state noise of 1/C (1e-13)",
        Real,
        0.0,
        1.0,
        |c| c.kalman.process_noise[0],
        |c, v| c.kalman.process_noise[0] = v
    ),
    param!(
        GccPaperConfig,
        "kalman_process_noise_offset",
        "state noise of m, ms^2 (1e-3)",
        Real,
        0.0,
        1000.0,
        |c| c.kalman.process_noise[1],
        |c, v| c.kalman.process_noise[1] = v
    ),
    param!(
        GccPaperConfig,
        "kalman_initial_var_noise",
        "initial measurement noise variance (50)",
        Real,
        1e-6,
        1e6,
        |c| c.kalman.initial_var_noise,
        |c, v| c.kalman.initial_var_noise = v
    ),
    param!(
        GccPaperConfig,
        "kalman_initial_offset",
        "initial m, ms (0)",
        Real,
        -1000.0,
        1000.0,
        |c| c.kalman.initial_offset,
        |c, v| c.kalman.initial_offset = v
    ),
    param!(
        GccPaperConfig,
        "k_up",
        "K_u, threshold gain above (0.01)",
        Real,
        0.0,
        1.0,
        |c| c.detector.k_up,
        |c, v| c.detector.k_up = v
    ),
    param!(
        GccPaperConfig,
        "k_down",
        "K_d, threshold gain below (0.00018)",
        Real,
        0.0,
        1.0,
        |c| c.detector.k_down,
        |c, v| c.detector.k_down = v
    ),
    param!(
        GccPaperConfig,
        "min_threshold",
        "threshold clamp, low, ms (0.1; 6 with remb_statistic)",
        Real,
        0.0,
        1000.0,
        |c| c.detector.min_threshold,
        |c, v| c.detector.min_threshold = v
    ),
    param!(
        GccPaperConfig,
        "max_threshold",
        "threshold clamp, high, ms (10; 600 with remb_statistic)",
        Real,
        0.0,
        10000.0,
        |c| c.detector.max_threshold,
        |c, v| c.detector.max_threshold = v
    ),
    param!(
        GccPaperConfig,
        "max_adapt_offset",
        "statistic beyond threshold + this freezes adaptation, ms (0.25; 15 with remb_statistic)",
        Real,
        0.0,
        1000.0,
        |c| c.detector.max_adapt_offset,
        |c, v| c.detector.max_adapt_offset = v
    ),
    param!(
        GccPaperConfig,
        "overuse_time_ms",
        "time above the threshold before over-use, ms (10)",
        Real,
        0.0,
        10000.0,
        |c| c.detector.overusing_time_threshold_ms,
        |c, v| c.detector.overusing_time_threshold_ms = v
    ),
    param!(
        GccPaperConfig,
        "beta",
        "multiplicative decrease of the received rate (0.85)",
        Real,
        0.05,
        0.99,
        |c| c.aimd.beta,
        |c, v| c.aimd.beta = v
    ),
    param!(
        GccPaperConfig,
        "increase_factor",
        "multiplicative increase per second (1.08)",
        Real,
        1.0,
        2.0,
        |c| c.aimd.increase_factor_per_s,
        |c, v| c.aimd.increase_factor_per_s = v
    ),
    param!(
        GccPaperConfig,
        "loss_low",
        "loss below which the sender increases (0.02)",
        Real,
        0.0,
        1.0,
        |c| c.loss.low_loss,
        |c, v| c.loss.low_loss = v
    ),
    param!(
        GccPaperConfig,
        "loss_high",
        "loss above which the sender decreases (0.10)",
        Real,
        0.0,
        1.0,
        |c| c.loss.high_loss,
        |c, v| c.loss.high_loss = v
    ),
    param!(
        GccPaperConfig,
        "incoming_rate_window_ms",
        "window of the received rate, ms (500)",
        Real,
        10.0,
        60000.0,
        |c| c.incoming_rate_window.as_millis_f64(),
        |c, v| c.incoming_rate_window = ms(v)
    ),
    param!(
        GccPaperConfig,
        "remb_interval_ms",
        "REMB period, ms (1000)",
        Real,
        10.0,
        60000.0,
        |c| c.remb_interval.as_millis_f64(),
        |c, v| c.remb_interval = ms(v)
    ),
    param!(
        GccPaperConfig,
        "remb_immediate_ratio",
        "estimate / last REMB that sends at once (0.97)",
        Real,
        0.0,
        1.0,
        |c| c.remb_immediate_ratio,
        |c, v| c.remb_immediate_ratio = v
    ),
    param!(
        GccPaperConfig,
        "cap_loss_by_remb",
        "keep the loss-based rate at or below the REMB (true)",
        flag cap_loss_by_remb
    ),
    param!(
        GccPaperConfig,
        "remb_statistic",
        "compare libwebrtc's REMB-path min(N, 60)·m with the threshold instead of the paper's m (false)",
        Bool,
        0.0,
        1.0,
        |c| (c.statistic == DelayStatistic::RembPath) as u8 as f64,
        |c, v| c.statistic = if v != 0.0 { DelayStatistic::RembPath } else { DelayStatistic::Paper }
    ),
    param!(
        GccPaperConfig,
        "receiver_rtt_ms",
        "RTT the receiver's rate controller assumes; our receivers measure none (200, libwebrtc's default)",
        Real,
        1.0,
        10000.0,
        |c| c.aimd.initial_rtt_ms,
        |c, v| c.aimd.initial_rtt_ms = v
    ),
    param!(
        GccPaperConfig,
        "rate_control_2013",
        "2013 Chrome's rate controller: multiplicative increase only, beta 0.9/0.95, updates once a second; with a static threshold, threshold halved near the max (false)",
        flag rate_control_2013
    ),
    param!(
        GccPaperConfig,
        "loss_rule_2013",
        "the sender's loss rule as the 2012-2013 code (ShapeSimple): 1.08·A + 1 kbit/s at most once per second, TFRC floor with 1000-byte packets; false: the paper's 1.05·(A + 1 kbit/s) per report (false)",
        Bool,
        0.0,
        1.0,
        |c| (c.loss.increase == super::loss_based::IncreaseRule::Once2013) as u8 as f64,
        |c, v| {
            let paper = LossBasedConfig::paper();
            c.loss = if v != 0.0 {
                c.loss.chrome_2013()
            } else {
                LossBasedConfig {
                    increase: paper.increase,
                    tfrc_packet_size: paper.tfrc_packet_size,
                    ..c.loss
                }
            }
        }
    ),
    param!(
        GccPaperConfig,
        "detector_2013",
        "2013's OveruseDetector filter: no burst merging, noise updated while min(N, 60)·abs(m) < threshold, process noise scaled by the shortest frame interval / 33 ms, noise floor 1e-7 (false)",
        flag kalman.chrome_2013
    ),
    param!(
        GccPaperConfig,
        "frame_groups",
        "group arrivals by frame (RTP timestamp) as 2013's OveruseDetector, not by 5 ms abs-send-time bursts (false)",
        flag frame_groups
    ),
    param!(
        GccPaperConfig,
        "pacing_factor",
        "pacing rate / target (1.5)",
        Real,
        0.1,
        100.0,
        |c| c.pacing_factor,
        |c, v| c.pacing_factor = v
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_inside_its_range_and_round_trips() {
        let c = GccConfig::default();
        for p in GCC_PARAMS {
            let v = p.get(&c);
            assert!(
                v >= p.min && v <= p.max,
                "{} default {v} outside {}..={}",
                p.name,
                p.min,
                p.max
            );
            let mut d = c;
            let val = if p.kind == Kind::Bool { Value::Bool(v != 0.0) } else { Value::Num(v) };
            set(GCC_PARAMS, &mut d, p.name, val).unwrap();
            assert_eq!(p.get(&d), v, "{}", p.name);
        }
        let c = GccPaperConfig::default();
        for p in GCC_PAPER_PARAMS {
            let v = p.get(&c);
            assert!(
                v >= p.min && v <= p.max,
                "{} default {v} outside {}..={}",
                p.name,
                p.min,
                p.max
            );
        }
    }

    #[test]
    fn bad_values_name_the_problem() {
        let mut c = GccConfig::default();
        use rtclab_core::params::ParamError;
        let e = set(GCC_PARAMS, &mut c, "beta", Value::Num(1.5)).unwrap_err();
        assert!(matches!(&e, ParamError::OutOfRange { name, .. } if name == "beta"), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("beta = 1.5 is out of range: accepted 0.05..=0.99"), "{e}");
        let e = set(GCC_PARAMS, &mut c, "betta", Value::Num(0.5)).unwrap_err();
        assert!(
            matches!(&e, ParamError::Unknown { known, .. } if known.iter().any(|k| k == "beta"))
        );
        let e = e.to_string();
        assert!(e.contains("unknown parameter \"betta\"") && e.contains("beta"), "{e}");
        let e = set(GCC_PARAMS, &mut c, "probing", Value::Num(1.0)).unwrap_err();
        assert_eq!(e, ParamError::NotBool { name: "probing".into() });
        assert!(e.to_string().contains("true or false"), "{e}");
        let e = set(GCC_PARAMS, &mut c, "trendline_window", Value::Num(2.5)).unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
        set(GCC_PARAMS, &mut c, "probing", Value::Bool(false)).unwrap();
        assert!(!c.probe.enabled);
    }

    #[test]
    fn the_scenario_reference_lists_every_parameter() {
        crate::params::assert_documented(GCC_PARAMS);
        crate::params::assert_documented(GCC_PAPER_PARAMS);
    }
}
