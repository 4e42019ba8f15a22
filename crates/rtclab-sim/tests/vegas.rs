//! TCP Vegas, the built-in controller added through the capabilities table, in a scenario:
//! alone on a 10 Mbit/s link with a 200 ms buffer it fills the link and keeps a few packets
//! queued without a loss, and its `alpha`/`beta` move where it settles (docs/algorithms/vegas.md).
mod common;
use common::*;

const SCENARIO: &str = r#"
duration = "30s"
[link]
capacity = "10Mbps"
queue = { limit = "200ms" }
[metrics]
warmup = "15s"
[[flows]]
kind = "tcp"
cc = "vegas"
rtt = "50ms"
"#;

fn settled(params: &str) -> (f64, f64, f64) {
    let text = SCENARIO.replace("rtt = \"50ms\"", &format!("rtt = \"50ms\"\n{params}"));
    let (out, _) = run(parse(&text), 1);
    let s = &out.summary;
    assert_eq!(s["flows"][0]["cc"], "vegas");
    assert_eq!(s["link"]["drops"]["queue_overflow"], 0, "Vegas lost packets");
    let util = s["link"]["utilization"].as_f64().unwrap();
    let q50 = s["flows"][0]["queuing_delay_ms"]["p50"].as_f64().unwrap();
    let diff = *col(&out.flows, "vegas_diff_packets").last().unwrap();
    (util, q50, diff)
}

#[test]
fn vegas_holds_a_few_packets_queued_without_loss() {
    let (util, q50, diff) = settled("");
    println!("vegas defaults: utilization {util:.3}, queue p50 {q50:.1} ms, diff {diff:.2}");
    assert!(util > 0.98, "utilization {util}");
    // alpha..beta = 2..4 packets (1.2 ms each at 10 Mbit/s) by the round's minimum RTT; the
    // median packet sees about two more.
    assert!((2.0..5.0).contains(&diff), "diff {diff}");
    assert!((2.0..10.0).contains(&q50), "median queue {q50} ms");
    let (util, q50_big, diff) = settled("params = { alpha = 10, beta = 12 }");
    println!("vegas 10/12: utilization {util:.3}, queue p50 {q50_big:.1} ms, diff {diff:.2}");
    assert!((10.0..13.0).contains(&diff), "diff {diff}");
    assert!(q50_big > q50 + 4.0, "{q50_big} vs {q50}");
}
