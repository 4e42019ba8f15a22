//! FastAck at the bottleneck's hop (the Zhuge evaluation's TCP baseline, spec `zhuge-metis.md`
//! A.8): the sender's control loop ends at the AP, the queue's losses still reach the sender,
//! losses after the link are repaired by the AP (its placement check is in `zhuge.rs`).
//! Figures: docs/algorithms/fast_ack.md.
mod common;
use common::*;

fn scenario(mb: &str, loss: &str, cc: &str) -> String {
    format!(
        r#"duration = "20s"
[link]
capacity = "10Mbps"
queue = {{ limit = "60pkt" }}
{loss}
{mb}
[[flows]]
kind = "tcp"
cc = "{cc}"
rtt = "60ms"
[metrics]
bin = "100ms"
"#
    )
}

const FAST_ACK: &str = "[[middleboxes]]\nkind = \"fast_ack\"\nat = \"bottleneck\"\nhold_ms = 0";

fn mean_after(o: &rtclab_sim::RunOutput, name: &str, from: f64) -> f64 {
    let t = col(&o.flows, "time_s");
    let v = col(&o.flows, name);
    let xs: Vec<f64> =
        (0..t.len()).filter(|&i| t[i] >= from && v[i].is_finite()).map(|i| v[i]).collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The forged ACKs leave the AP when the link has sent the segment: the sender's smoothed RTT
/// is the return half of the path (30 ms) plus the queue, not the whole 60 ms.
#[test]
fn the_senders_loop_ends_at_the_access_point() {
    for cc in ["cubic", "copa"] {
        let (plain, _) = run(parse(&scenario("", "", cc)), 1);
        let (fa, _) = run(parse(&scenario(FAST_ACK, "", cc)), 1);
        let (a, b) = (mean_after(&plain, "srtt_ms", 5.0), mean_after(&fa, "srtt_ms", 5.0));
        let (qa, qb) = (
            mean_after(&plain, "queuing_delay_ms_mean", 5.0),
            mean_after(&fa, "queuing_delay_ms_mean", 5.0),
        );
        println!("{cc}: srtt {a:.1} ms (queue {qa:.1}) vs {b:.1} ms with FastAck (queue {qb:.1})");
        assert!((a - 60.0 - qa).abs() < 6.0, "{cc}: plain srtt {a} vs 60 + {qa}");
        assert!((b - 30.0 - qb).abs() < 6.0, "{cc}: FastAck srtt {b} vs 30 + {qb}");
        let fm = &fa.summary["middleboxes"][0]["metrics"];
        assert!(fm["forged_acks"].as_f64().unwrap() > 1000.0, "{fm}");
        assert!(
            fm["passed_acks"].as_f64().unwrap() < 50.0,
            "only the first round trip's ACKs pass: {fm}"
        );
        let util = fa.summary["link"]["utilization"].as_f64().unwrap();
        assert!(util > 0.9, "{cc}: utilization {util}");
    }
}

/// Losses before the link (here a 1 % random loss in front of the queue) are never
/// acknowledged: the sender sees and repairs them itself, and the receiver gets every
/// segment in order (goodput ≈ throughput); the AP answers for nothing it did not send.
#[test]
fn the_queues_losses_still_reach_the_sender() {
    let loss = "loss = { model = \"iid\", rate = 0.01 }";
    let (fa, _) = run(parse(&scenario(FAST_ACK, loss, "cubic")), 1);
    let f = &fa.summary["flows"][0];
    let (thr, good) = (f["throughput_mbps"].as_f64().unwrap(), f["goodput_mbps"].as_f64().unwrap());
    let retx = f["retransmits"].as_u64().unwrap();
    println!("throughput {thr:.2}, goodput {good:.2} Mbit/s, sender retransmits {retx}");
    assert!(retx > 50, "the sender repaired the losses: {retx}");
    assert!(good > 0.9 * thr && thr < 10.5, "{good} vs {thr}");
    let sent = f["sending_rate_mbps"].as_f64().unwrap();
    assert!(sent < 12.0, "no flood: the sender sent {sent} Mbit/s into a 10 Mbit/s link");
}

/// Losses after the AP's link (a 2 % random loss on the last hop, `air`) are the AP's to
/// repair: the client's duplicate ACKs and SACK blocks make it resend the missing segments
/// from its cache, the sender never sees them, and the client gets the data in order
/// (measured: 323 local resends, no sender retransmission, goodput 9.36 of 9.72 Mbit/s; one
/// hole per client loop, as the released code repairs, left 7.7).
#[test]
fn losses_after_the_link_are_repaired_by_the_access_point() {
    let text = r#"duration = "20s"
[[links]]
name = "ap"
capacity = "10Mbps"
queue = { limit = "60pkt" }
[[links]]
name = "air"
capacity = "1Gbps"
loss = { model = "iid", rate = 0.02 }
[[middleboxes]]
kind = "fast_ack"
at = "ap"
hold_ms = 0
[[flows]]
kind = "tcp"
cc = "copa"
delayed_ack = false
rtt = "60ms"
path = ["ap", "air"]
"#;
    let (o, _) = run(parse(text), 1);
    let f = &o.summary["flows"][0];
    let m = &o.summary["middleboxes"][0]["metrics"];
    let local = m["local_retransmissions"].as_f64().unwrap();
    let (thr, good) = (f["throughput_mbps"].as_f64().unwrap(), f["goodput_mbps"].as_f64().unwrap());
    let retx = f["retransmits"].as_u64().unwrap();
    println!(
        "local resends {local}, sender retransmits {retx}, throughput {thr:.2}, goodput {good:.2}"
    );
    assert!(local > 100.0 && local < 600.0, "about one resend per loss (2 % of ~16,000): {m}");
    assert!(retx < 20, "the sender saw the last hop's losses: {retx}");
    assert!(good > 0.9 * thr && thr > 5.0, "{good} vs {thr}");
}
