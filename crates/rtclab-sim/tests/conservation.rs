//! Conservation identities: every packet sent is delivered, dropped, or still held by an
//! element at the end; drops recorded by reason add up to the totals.
mod common;
use common::*;

fn check(text: &str, seed: u64) {
    let (out, sim) = run(parse(text), seed);
    let st = out.stats;
    let (held_data, held_acks) = sim.packets_in_network();
    // Elements that make packets (FastAck's forged ACKs and local retransmissions) and absorb
    // them (the client ACKs it answers) add to both sides.
    let m = sim.packets_made_and_absorbed();
    assert_eq!(
        st.sent_packets + m.made.0,
        st.delivered_packets + st.dropped_packets + held_data + m.absorbed.0,
        "data, seed {seed}: {st:?} {m:?}"
    );
    assert_eq!(
        st.sent_acks + m.made.1,
        st.delivered_acks + st.dropped_acks + held_acks + m.absorbed.1,
        "acks, seed {seed}: {st:?} {m:?}"
    );
    // Per-flow drop reasons add up to the link's (no warm-up in these scenarios).
    let link_drops: u64 = out.summary["link"]["drops"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let flow_drops: u64 = out.summary["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["drops"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum::<u64>())
        .sum();
    assert_eq!(link_drops, flow_drops);
    assert_eq!(st.dropped_packets, flow_drops);
}

#[test]
fn conservation_holds_across_link_and_loss_models() {
    let cases = [
        r#"duration = "15s"
[link]
capacity = "20Mbps"
queue = { limit = "20pkt" }
loss = { model = "iid", rate = 0.02 }
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 3
[[flows]]
kind = "cbr"
rate = "8Mbps"
rtt = "10ms"
"#,
        r#"duration = "15s"
[link]
capacity = { trace = "traces/TMobile-LTE-short-30s.down", format = "mahimahi" }
queue = { limit = "30KB" }
[reverse_link]
capacity = "2Mbps"
queue = { limit = "10pkt" }
loss = { model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.2 }
[[flows]]
kind = "tcp"
cc = "reno"
rtt = "60ms"
jitter = "4ms"
delayed_ack = true
count = 2
"#,
        r#"duration = "15s"
[link]
capacity = { schedule = [{ at = "0s", rate = "30Mbps" }, { at = "5s", rate = "0Mbps" }, { at = "6s", rate = "5Mbps" }] }
queue = { limit = "50ms" }
[[flows]]
kind = "tcp"
rtt = "20ms"
stop = "12s"
[[flows]]
kind = "tcp"
cc = "newreno"
rtt = "100ms"
start = "3s"
"#,
        r#"duration = "20s"
[link]
capacity = "1500kbps"
queue = { limit = "100ms" }
loss = { model = "iid", rate = 0.03 }
[reverse_link]
capacity = "200kbps"
queue = { limit = "5pkt" }
loss = { model = "iid", rate = 0.05 }
[[flows]]
kind = "media"
cc = "gcc"
rtt = "50ms"
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "80ms"
start = "2s"
"#,
        r#"duration = "15s"
[link]
capacity = { trace = "traces/TMobile-LTE-short-30s.down", format = "mahimahi" }
queue = { kind = "codel", limit = "200pkt", target_ms = 5, interval_ms = 100 }
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 3
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
"#,
        // Flow-queueing and class-based disciplines: packets held in per-flow queues, moved
        // between classes, dropped from other flows' heads, all counted.
        r#"duration = "12.003s"
[link]
capacity = { trace = "traces/TMobile-LTE-short-30s.down", format = "mahimahi" }
queue = { kind = "confucius", limit = "150pkt" }
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 3
[[flows]]
kind = "tcp"
cc = "copa"
rtt = "30ms"
start = "3s"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
"#,
        r#"duration = "10.002s"
[link]
capacity = "8Mbps"
queue = { kind = "fq_codel", limit = "120pkt", flows = 4 }
[reverse_link]
capacity = "1Mbps"
queue = { kind = "sfq", limit = "20pkt" }
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 5
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
"#,
        r#"duration = "10.001s"
[link]
capacity = "8Mbps"
queue = { kind = "pie", limit = "80pkt" }
[reverse_link]
capacity = "1Mbps"
queue = { kind = "drr", limit = "10pkt", weight1 = 3 }
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 3
"#,
        // Zhuge holding TCP ACKs and rewriting TWCC, at the end of a drop.
        r#"duration = "8.004s"
[link]
capacity = { schedule = [ { at = "0s", rate = "20Mbps" }, { at = "7.9s", rate = "2Mbps" } ] }
queue = { limit = "100pkt" }
[[middleboxes]]
kind = "zhuge"
at = "bottleneck"
warmup_ms = 500
[[flows]]
kind = "tcp"
cc = "copa"
delayed_ack = false
rtt = "40ms"
count = 2
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
"#,
        // Zhuge reporting on its own 1 ms cadence: the client's TWCC absorbed, the AP's made.
        r#"duration = "10.0005s"
[link]
capacity = { schedule = [ { at = "0s", rate = "20Mbps" }, { at = "6s", rate = "2Mbps" } ] }
queue = { limit = "100pkt" }
[[middleboxes]]
kind = "zhuge"
at = "bottleneck"
cadence_ms = 1
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
count = 2
"#,
        // FastAck forging ACKs, absorbing the client's and resending last-hop losses, with a
        // media flow it leaves alone and forged ACKs still held at the end.
        r#"duration = "10.007s"
[link]
capacity = "10Mbps"
queue = { limit = "30pkt" }
loss = { model = "iid", rate = 0.02 }
[[middleboxes]]
kind = "fast_ack"
at = "bottleneck"
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 2
[[flows]]
kind = "tcp"
cc = "copa"
delayed_ack = false
rtt = "30ms"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
"#,
        // A middlebox holding feedback: what it holds at the end is counted.
        r#"duration = "10.005s"
[link]
capacity = "10Mbps"
queue = { limit = "50ms" }
[[middleboxes]]
kind = "ack_aggregation"
at = "bottleneck"
interval_ms = 20
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 2
[[flows]]
kind = "media"
cc = "gcc"
rtt = "30ms"
"#,
    ];
    for (i, c) in cases.iter().enumerate() {
        for seed in 1..=3 {
            check(c, seed + 10 * i as u64);
        }
    }
}
