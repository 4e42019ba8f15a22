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
