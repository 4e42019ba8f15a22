//! NewReno's sawtooth and CUBIC's cubic growth, observed in full simulations, against their
//! formulas.
mod common;
use common::*;

fn flow_series(text: &str, bin_ms: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let s = parse(&text.replace("BIN", &format!("{bin_ms}ms")));
    let (out, _) = run(s, 1);
    let t = col(&out.flows, "time_s").to_vec();
    let w = col(&out.flows, "cwnd_packets").to_vec();
    let r = col(&out.flows, "srtt_ms").to_vec();
    (t, w, r)
}

/// Reno in congestion avoidance grows by one packet per RTT and halves on loss.
#[test]
fn newreno_sawtooth() {
    let text = r#"duration = "60s"
[link]
capacity = "10Mbps"
queue = { limit = "1bdp" }
[[flows]]
kind = "tcp"
cc = "newreno"
rtt = "50ms"
[metrics]
bin = "BIN"
"#;
    let (t, w, srtt) = flow_series(text, 50);
    let mut halvings = 0;
    let mut slopes = Vec::new();
    for i in 1..w.len() {
        if t[i] < 5.0 {
            continue;
        }
        if w[i] < w[i - 1] {
            // A loss: cwnd drops to half of the window at the loss (+-1 packet of growth in the bin).
            let ratio = w[i] / w[i - 1];
            assert!((0.45..=0.56).contains(&ratio), "t={} {} -> {}", t[i], w[i - 1], w[i]);
            halvings += 1;
        } else if i >= 20 && w[i - 20..=i].windows(2).all(|p| p[1] >= p[0]) {
            // 1 s without loss: packets gained per RTT.
            let gained = w[i] - w[i - 20];
            let rtts = (t[i] - t[i - 20]) / (srtt[i - 10] / 1e3);
            slopes.push(gained / rtts);
        }
    }
    assert!(halvings >= 5, "only {halvings} loss events");
    let mean = slopes.iter().sum::<f64>() / slopes.len() as f64;
    println!("NewReno: {halvings} halvings, {mean:.3} packets per RTT in avoidance");
    assert!((0.9..=1.1).contains(&mean), "growth {mean} packets/RTT");
}

/// After a loss CUBIC follows W(t) = C (t - K)^3 + W_max with C = 0.4, beta = 0.7, in packets
/// and independent of the RTT.
#[test]
fn cubic_growth_follows_the_cubic() {
    let text = r#"duration = "40s"
[link]
capacity = "100Mbps"
queue = { limit = "1bdp" }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "20ms"
cubic = { hystart = false, tcp_friendliness = false, fast_convergence = false }
[metrics]
bin = "BIN"
"#;
    let (t, w, _) = flow_series(text, 20);
    // Without fast convergence W_max is the window at the loss; take the longest epoch
    // between two losses after the slow-start overshoot has settled.
    let drops: Vec<usize> = (1..w.len()).filter(|&i| t[i] > 5.0 && w[i] < w[i - 1] * 0.9).collect();
    assert!(drops.len() >= 2, "losses at {drops:?}");
    let (a, b) = drops.windows(2).map(|p| (p[0], p[1])).max_by_key(|&(a, b)| b - a).unwrap();
    let w_max = w[a - 1];
    let c = 410.0 / 1024.0;
    let k = (w_max * (1.0 - 717.0 / 1024.0) / c).cbrt();
    let t0 = t[a];
    let mut checked = 0;
    for i in a + 5..b - 1 {
        let dt = t[i] - t0;
        let want = c * (dt - k).powi(3) + w_max;
        let got = w[i];
        assert!(
            (got - want).abs() <= 0.03 * w_max,
            "t-t0={dt:.2}: cwnd {got} vs W(t) {want:.1} (K={k:.2})"
        );
        checked += 1;
    }
    println!("CUBIC epoch: W_max {w_max}, K {k:.2} s, {checked} samples within 3 % of W(t)");
    assert!(checked > 50);
}
