//! The foundation issue's figures, measured on the built-in scenarios.
mod common;
use common::*;

/// CUBIC alone, 1 BDP drop-tail, 100 Mbit/s / 20 ms: utilization >= 0.95 after slow start
/// (the scenario's 5 s warm-up excludes slow start).
#[test]
fn cubic_alone_fills_the_link() {
    let (out, _) = run(builtin("cubic-alone"), 1);
    let u = out.summary["link"]["utilization"].as_f64().unwrap();
    println!("cubic-alone utilization after slow start: {u:.4}");
    assert!(u >= 0.95, "utilization {u}");
}

/// Two CUBIC flows, same RTT, 60 s: Jain >= 0.95 over the last 30 s. (The scenario has no
/// random element, so one seed is the whole story.)
#[test]
fn two_cubic_flows_share_fairly() {
    let (out, _) = run(builtin("two-cubic"), 1);
    let j = out.summary["fairness"]["jain"].as_f64().unwrap();
    println!("two-cubic Jain over the last 30 s: {j:.4}");
    assert!(j >= 0.95, "Jain {j}");
}
