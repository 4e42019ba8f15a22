//! Loss recovery of the simulated TCP in whole scenarios.
mod common;
use common::*;

/// Found by the cross-engine comparison (docs/emulator.md): two CUBIC flows on 20 Mbit/s /
/// 10 ms / 1 BDP with 1 ms of non-reordering jitter, seed 2. Before lost retransmissions were
/// detected, flow 0 entered one fast recovery for ~1,500 drops in 4 s and lived on 95
/// retransmission timeouts, taking 98 % of the link; now it recovers by fast retransmit.
#[test]
fn two_cubic_flows_with_jitter_share_the_link() {
    let s = parse(
        r#"
name = "two-cubic-jitter"
duration = "25s"
[link]
capacity = "20Mbps"
queue = { limit = "1bdp", bdp_rtt = "10ms" }
[metrics]
warmup = "5s"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "10ms"
count = 2
jitter = "1ms"
"#,
    );
    let (out, _) = run(s, 2);
    let f = &out.summary["flows"];
    let share = f[0]["share"].as_f64().unwrap();
    println!(
        "flow 0: share {share:.3}, fast retransmits {}, timeouts {}, retransmits {}",
        f[0]["fast_retransmits"], f[0]["timeouts"], f[0]["retransmits"]
    );
    assert!((0.35..0.65).contains(&share), "{share}");
    assert!(f[0]["timeouts"].as_u64().unwrap() < 5);
}
