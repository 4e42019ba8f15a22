//! Zhuge at the bottleneck's hop (spec `zhuge-metis.md` A.8 S3, the bandwidth drop): behaviour
//! checks; the figures are in `rtclab repro zhuge`-style runs documented in
//! docs/algorithms/zhuge.md.
mod common;
use common::*;

fn s3(flow: &str, zhuge: bool) -> String {
    s3_at(flow, zhuge, 40.0)
}

fn s3_at(flow: &str, zhuge: bool, drop: f64) -> String {
    let mb = if zhuge {
        "[[middleboxes]]\nkind = \"zhuge\"\nat = \"bottleneck\"\nqshort = false\n"
    } else {
        ""
    };
    format!(
        r#"duration = "{dur}s"
[link]
capacity = {{ schedule = [ {{ at = "0s", rate = "30Mbps" }}, {{ at = "{drop}s", rate = "3Mbps" }} ] }}
queue = {{ limit = "250pkt" }}
{mb}[[flows]]
{flow}
rtt = "50ms"
[metrics]
bin = "50ms"
"#,
        dur = drop + 10.0
    )
}

/// Seconds within [drop, drop + 10 s) in which the flow's RTT (base 50 ms + its queuing delay in the
/// bin) exceeded 200 ms.
fn rtt_over_200(o: &rtclab_sim::RunOutput, drop: f64) -> f64 {
    let t = col(&o.flows, "time_s");
    let q = col(&o.flows, "queuing_delay_ms_max");
    let f = col(&o.flows, "flow");
    (0..t.len()).filter(|&i| f[i] == 0.0 && t[i] >= drop && 50.0 + q[i] > 200.0).count() as f64
        * 0.05
}

/// Copa (δ = 0.5, default mode only, an ACK per segment, as the Zhuge simulations ran it):
/// with Zhuge delaying its ACKs as the AP's queue grows, the time with RTT > 200 ms after a
/// 30 -> 3 Mbit/s drop shrinks on average over drop instants (the paper varies the instant;
/// measured here: 3.40 s -> 2.44 s over drops at 10, 20, 30, 40 s).
#[test]
fn zhuge_shortens_copas_degradation_after_a_bandwidth_drop() {
    let copa = "kind = \"tcp\"\ncc = \"copa\"\ndelayed_ack = false\ncopa = { mode_switch = false }";
    let (mut a, mut b) = (0.0, 0.0);
    for drop in [10.0, 20.0, 30.0, 40.0] {
        let (fifo, _) = run(parse(&s3_at(copa, false, drop)), 1);
        let (zh, _) = run(parse(&s3_at(copa, true, drop)), 1);
        let (x, y) = (rtt_over_200(&fifo, drop), rtt_over_200(&zh, drop));
        println!("copa, drop at {drop} s: RTT > 200 ms for {x:.2} s (FIFO) vs {y:.2} s (Zhuge)");
        a += x / 4.0;
        b += y / 4.0;
    }
    println!("copa mean: {a:.2} s (FIFO) vs {b:.2} s (Zhuge)");
    assert!(a > 1.0, "the drop must hurt without Zhuge: {a}");
    assert!(b < a, "Zhuge {b} vs FIFO {a}");
}

/// GCC over rewritten TWCC: the AP reports packets as they reach its queue, so the sender
/// sees the overuse at once: 200 ms after the drop (30 -> 3 Mbit/s) its target is already
/// within 2x the new capacity, where without Zhuge it is still far above (measured: 4.5 vs
/// 26 Mbit/s; the 10 s key frame lands on the drop, so the exact value moves with the
/// encoder's key-frame accounting).
#[test]
fn zhuge_makes_gcc_react_within_a_feedback_interval() {
    let gcc =
        "kind = \"media\"\ncc = \"gcc\"\nmedia = { sender = \"ideal\", max_bitrate = \"50Mbps\" }";
    let target_at = |o: &rtclab_sim::RunOutput, at: f64| {
        let t = col(&o.flows, "time_s");
        let v = col(&o.flows, "target_mbps");
        let i = t.iter().position(|&x| (x - at).abs() < 1e-9).unwrap();
        v[i]
    };
    let (fifo, _) = run(parse(&s3(gcc, false)), 1);
    let (zh, _) = run(parse(&s3(gcc, true)), 1);
    let (a, b) = (target_at(&fifo, 40.2), target_at(&zh, 40.2));
    println!("gcc target 200 ms after the drop: {a:.2} Mbit/s (FIFO) vs {b:.2} (Zhuge)");
    assert!(a > 10.0 && b < 6.0 && b < a / 4.0, "FIFO {a}, Zhuge {b}");
}

/// The released simulator's cadence: the AP sends its own TWCC every 1 ms and absorbs the
/// client's. GCC still reacts within a report interval (one millisecond instead of the client's
/// wait), and keeps the link busy before the drop.
#[test]
fn zhuge_reporting_every_millisecond_drives_gcc() {
    let gcc =
        "kind = \"media\"\ncc = \"gcc\"\nmedia = { sender = \"ideal\", max_bitrate = \"50Mbps\" }";
    let text = s3(gcc, true).replace("qshort = false\n", "qshort = false\ncadence_ms = 1\n");
    let (o, _) = run(parse(&text), 1);
    let m = &o.summary["middleboxes"][0]["metrics"];
    let made = m["reports_originated"].as_f64().unwrap();
    println!("{m}");
    assert!(made > 30_000.0, "about one report per ms with packets: {made}");
    assert!(m["client_reports_absorbed"].as_f64().unwrap() > 100.0, "{m}");
    assert_eq!(m["feedback_rewritten"].as_f64().unwrap(), 0.0);
    let t = col(&o.flows, "time_s");
    let v = col(&o.flows, "target_mbps");
    let at = |x: f64| v[t.iter().position(|&y| (y - x).abs() < 1e-9).unwrap()];
    println!("target before the drop {:.2}, 200 ms after {:.2} Mbit/s", at(39.0), at(40.2));
    assert!(at(39.0) > 15.0, "the 30 Mbit/s link is used: {}", at(39.0));
    assert!(at(40.2) < 6.0, "reaction within 200 ms: {}", at(40.2));
}

#[test]
fn zhuge_where_no_feedback_passes_is_rejected() {
    let text = r#"duration = "5s"
[[links]]
name = "down"
capacity = "10Mbps"
[[links]]
name = "up"
capacity = "10Mbps"
[[middleboxes]]
kind = "zhuge"
at = "down"
[[flows]]
kind = "tcp"
path = ["down"]
reverse_path = ["up"]
rtt = "40ms"
"#;
    let e = rtclab_scenario::from_toml_str(text, &builtin_dir()).unwrap_err();
    assert_eq!(e.path, "middleboxes[0].at");
    assert!(e.message.contains("a zhuge middlebox at \"down\" sees no feedback path"), "{e}");
    // FastAck answers the flow's ACKs itself: the same placement rule.
    let fast_ack = text.replace("kind = \"zhuge\"", "kind = \"fast_ack\"");
    let e = rtclab_scenario::from_toml_str(&fast_ack, &builtin_dir()).unwrap_err();
    assert_eq!(e.path, "middleboxes[0].at");
    assert!(e.message.contains("a fast_ack middlebox at \"down\" sees no feedback path"), "{e}");
    let e = rtclab_scenario::from_toml_str(
        &text.replace("qshort", "x").replace("at = \"down\"", "at = \"down\"\nqshortt = 1"),
        &builtin_dir(),
    )
    .unwrap_err();
    assert!(e.message.contains("known:") && e.message.contains("qshort"), "{e}");
}
