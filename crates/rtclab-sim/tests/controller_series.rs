//! Controller-specific series come from the controllers' own `metrics()`, not from the engine.
mod common;
use common::*;

#[test]
fn copa_and_bbr_state_reach_the_time_series() {
    let text = r#"duration = "10s"
[link]
capacity = "20Mbps"
queue = { limit = "2bdp" }
[[flows]]
kind = "tcp"
cc = "copa"
rtt = "40ms"
[[flows]]
kind = "tcp"
cc = "bbr"
rtt = "40ms"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
"#;
    let (out, _) = run(parse(text), 1);
    let c = &out.flows;
    for name in ["delta", "velocity", "competitive", "btl_bw_mbps", "detector_state", "acked_mbps"]
    {
        assert!(c.column(name).is_some(), "no column {name}: {:?}", c.names);
    }
    let flow = col(c, "flow");
    let of = |name: &str, f: f64| -> Vec<f64> {
        col(c, name).iter().zip(flow).filter(|(_, &g)| g == f).map(|(v, _)| *v).collect()
    };
    // Copa (flow 0) reports δ = 0.5 in default mode, its velocity and mode; BBR (flow 1) its
    // mode code (0 startup .. 3 PROBE_RTT) and bottleneck bandwidth; GCC (flow 2) its detector.
    assert!(of("delta", 0.0).contains(&0.5));
    assert!(of("velocity", 0.0).iter().all(|v| v.is_finite() && *v >= 1.0));
    assert!(of("delta", 1.0).iter().all(|v| v.is_nan()));
    let bbr_state = of("cc_state", 1.0);
    assert!(bbr_state.contains(&2.0), "BBR reaches PROBE_BW: {bbr_state:?}");
    assert!(of("btl_bw_mbps", 1.0).iter().any(|&b| b > 1.0));
    assert!(of("detector_state", 2.0).iter().all(|s| [-1.0, 0.0, 1.0].contains(s)));
    assert!(of("threshold", 2.0).iter().all(|t| t.is_finite()));
}

/// The paper's receiver reports its Kalman filter's noise variance (`noise_var`, what 2013's
/// rate control reads). A 2013 Chrome sender paced at 1.5× in 5 ms bursts shows the filter a
/// far noisier delay signal than one sending each frame as one burst (docs/algorithms/gcc.md,
/// "the step 400 → 3000 kbit/s": 40-52 against 4-7 ms² there).
#[test]
fn the_paper_receiver_reports_its_filter_noise_and_pacing_raises_it() {
    let mean_noise = |pacing: f64| {
        let text = format!(
            r#"duration = "30s"
[link]
capacity = "1Mbps"
queue = {{ limit = "60KB" }}
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "50ms"
media = {{ threshold = 25, adaptive_threshold = false, max_bitrate = "2000kbps", tfrc_floor = true, gcc = {{ remb_statistic = true, rate_control_2013 = true, overuse_time_ms = 100, receiver_rtt_ms = 50, pacing_factor = {pacing} }} }}
"#
        );
        let (out, _) = run(parse(&text), 1);
        let t = col(&out.flows, "time_s");
        let v: Vec<f64> = col(&out.flows, "noise_var")
            .iter()
            .zip(t)
            .filter(|(n, &t)| t > 10.0 && n.is_finite())
            .map(|(n, _)| *n)
            .collect();
        assert!(!v.is_empty() && v.iter().all(|&n| n > 0.0), "{v:?}");
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (unpaced, paced) = (mean_noise(100.0), mean_noise(1.5));
    assert!(paced > 3.0 * unpaced, "paced {paced} vs unpaced {unpaced}");
}
