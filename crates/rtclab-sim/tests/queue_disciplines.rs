//! Queue disciplines chosen by name in a scenario behave as their algorithm says.
mod common;
use common::*;

fn scenario(queue: &str) -> String {
    format!(
        r#"duration = "30s"
[link]
capacity = "20Mbps"
queue = {queue}
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = 2
[metrics]
warmup = "5s"
"#
    )
}

/// Two CUBIC flows into a 4-BDP buffer: drop-tail keeps it mostly full, CoDel holds the
/// standing queue near its 5 ms target and drops as AQM, not as overflow.
#[test]
fn codel_keeps_the_standing_queue_near_its_target() {
    let (dt, _) = run(parse(&scenario(r#"{ limit = "4bdp" }"#)), 1);
    let (cd, _) = run(parse(&scenario(r#"{ kind = "codel", limit = "4bdp" }"#)), 1);
    let q =
        |o: &rtclab_sim::RunOutput| o.summary["link"]["queuing_delay_ms"]["p50"].as_f64().unwrap();
    let u = |o: &rtclab_sim::RunOutput| o.summary["link"]["utilization"].as_f64().unwrap();
    let drops =
        |o: &rtclab_sim::RunOutput, r: &str| o.summary["link"]["drops"][r].as_u64().unwrap();
    println!(
        "droptail: median queue {:.1} ms, util {:.3}; codel: median queue {:.1} ms, util {:.3}, aqm drops {}",
        q(&dt),
        u(&dt),
        q(&cd),
        u(&cd),
        drops(&cd, "aqm")
    );
    assert_eq!(cd.summary["link"]["queue_kind"], "codel");
    assert!(q(&dt) > 60.0, "drop-tail queue {}", q(&dt));
    assert!(q(&cd) < 15.0, "codel queue {}", q(&cd));
    assert!(drops(&cd, "aqm") > 0 && drops(&cd, "queue_overflow") == 0);
    assert!(u(&cd) > 0.85, "codel utilization {}", u(&cd));
}

/// ECN-capable CUBIC (RFC 3168) through CoDel with `ecn = true`: the queue marks instead of
/// dropping, the senders answer the echoes with window reductions, and the standing queue and
/// utilization stay as with drops — without a single retransmission.
#[test]
fn ecn_capable_tcp_is_marked_not_dropped_and_backs_off() {
    let text = scenario(r#"{ kind = "codel", limit = "4bdp", ecn = true }"#)
        .replace("count = 2", "count = 2\necn = true");
    let (o, _) = run(parse(&text), 1);
    let link = &o.summary["link"];
    let q = link["queuing_delay_ms"]["p50"].as_f64().unwrap();
    let marks: u64 = o.summary["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["ecn_marks"].as_u64().unwrap())
        .sum();
    let retx: u64 = o.summary["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["retransmits"].as_u64().unwrap())
        .sum();
    println!(
        "ecn: median queue {q:.1} ms, util {:.3}, marks {marks}, retransmits {retx}, drops {}",
        link["utilization"], link["drops"]
    );
    assert!(marks > 20, "marks {marks}");
    assert_eq!(link["drops"]["aqm"].as_u64().unwrap(), 0, "ECT packets are marked, not dropped");
    assert_eq!(retx, 0, "nothing was lost");
    assert!(q < 15.0, "the senders backed off: median queue {q}");
    assert!(link["utilization"].as_f64().unwrap() > 0.85);
    // Without ECN on the senders the same queue drops.
    let (plain, _) = run(parse(&scenario(r#"{ kind = "codel", limit = "4bdp", ecn = true }"#)), 1);
    assert!(plain.summary["link"]["drops"]["aqm"].as_u64().unwrap() > 0);
}

#[test]
fn bad_queue_kinds_and_parameters_are_named() {
    let e = |q: &str| rtclab_scenario::from_toml_str(&scenario(q), &builtin_dir()).unwrap_err();
    let x = e(r#"{ kind = "fq_kodel" }"#);
    assert_eq!(x.path, "link.queue.kind");
    assert!(x.message.contains("droptail") && x.message.contains("codel"), "{x}");
    let x = e(r#"{ kind = "codel", target_ms = -1 }"#);
    assert_eq!(x.path, "link.queue.target_ms");
    assert!(x.message.contains("0.01..=10000"), "{x}");
    let x = e(r#"{ kind = "codel", targett_ms = 5 }"#);
    assert_eq!(x.path, "link.queue.targett_ms");
    assert!(x.message.contains("known: target_ms, interval_ms, ecn"), "{x}");
    let x = e(r#"{ kind = "droptail", target_ms = 5 }"#);
    assert!(x.message.contains("takes none"), "{x}");
    let x = e(r#"{ kind = "codel", ecn = "yes" }"#);
    assert_eq!(x.path, "link.queue.ecn");
    assert!(e(r#"{ kind = "fq_kodel" }"#)
        .message
        .contains("fq_codel, pie, dualpi2, sfq, drr, confucius"));
    let x = e(r#"{ kind = "fq_codel", flows = 0 }"#);
    assert_eq!(x.path, "link.queue.flows");
    assert!(x.message.contains("1..=65536"), "{x}");
    let x = e(r#"{ kind = "confucius", target1 = 0.6 }"#);
    assert!(x.message.contains("target1 < target2 < target3"), "{x}");
    assert_eq!(x.path, "link.queue");
    // Related parameters are judged together: lowering target2 below the default target1
    // is fine when target1 is lowered too.
    let ok = scenario(r#"{ kind = "confucius", target1 = 0.02, target2 = 0.1 }"#);
    assert!(rtclab_scenario::from_toml_str(&ok, &builtin_dir()).is_ok());
    let x = e(r#"{ kind = "drr", weight1 = 1.5 }"#);
    assert!(x.message.contains("whole number"), "{x}");
    let x = e(r#"{ kind = "pie", lambda_per_ms = 0.004 }"#);
    assert!(x.message.contains("known: target_ms, tupdate_ms"), "{x}");
}

/// Two CUBIC flows and a 1 Mbit/s constant-rate flow over 20 Mbit/s with a 4-BDP buffer.
fn mixed(queue: &str) -> rtclab_sim::RunOutput {
    let text = scenario(queue).replace(
        "[metrics]",
        "[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nrtt = \"40ms\"\n[metrics]",
    );
    run(parse(&text), 1).0
}

fn flow_q(o: &rtclab_sim::RunOutput, i: usize, p: &str) -> f64 {
    o.summary["flows"][i]["queuing_delay_ms"][p].as_f64().unwrap()
}

fn mbps(o: &rtclab_sim::RunOutput, i: usize) -> f64 {
    o.summary["flows"][i]["throughput_mbps"].as_f64().unwrap()
}

/// FQ-CoDel, SFQ and Confucius isolate the sparse flow from the CUBIC flows' queue (its p95
/// queuing delay drops from the drop-tail buffer's tens of ms to a few ms); FQ-CoDel also
/// keeps the CUBIC flows' own standing queue near CoDel's target, and the link stays busy.
#[test]
fn flow_queueing_disciplines_isolate_a_sparse_flow() {
    let dt = mixed(r#"{ limit = "4bdp" }"#);
    let fq = mixed(r#"{ kind = "fq_codel", limit = "4bdp" }"#);
    let sfq = mixed(r#"{ kind = "sfq", limit = "4bdp" }"#);
    let cf = mixed(r#"{ kind = "confucius", limit = "4bdp" }"#);
    for (name, o) in [("droptail", &dt), ("fq_codel", &fq), ("sfq", &sfq), ("confucius", &cf)] {
        println!(
            "{name}: cbr queue p95 {:.2} ms; cubic queue p50 {:.1} ms; util {:.3}; cubic {:.2}/{:.2} Mbit/s; drops {}",
            flow_q(o, 2, "p95"),
            flow_q(o, 0, "p50"),
            o.summary["link"]["utilization"],
            mbps(o, 0),
            mbps(o, 1),
            o.summary["link"]["drops"]
        );
        assert_eq!(o.summary["link"]["queue_kind"], name);
        assert!(o.summary["link"]["utilization"].as_f64().unwrap() > 0.85, "{name}");
    }
    assert!(flow_q(&dt, 2, "p95") > 40.0);
    for o in [&fq, &sfq, &cf] {
        assert!(flow_q(o, 2, "p95") < 5.0, "{}", o.summary["link"]["queue_kind"]);
    }
    assert!(flow_q(&fq, 0, "p50") < 15.0);
    assert!(fq.summary["link"]["drops"]["aqm"].as_u64().unwrap() > 0);
}

/// PIE steers the two CUBIC flows' queue towards its 15 ms reference with early drops.
#[test]
fn pie_holds_the_queue_near_its_reference() {
    let (o, _) = run(parse(&scenario(r#"{ kind = "pie", limit = "4bdp" }"#)), 1);
    let q = o.summary["link"]["queuing_delay_ms"]["p50"].as_f64().unwrap();
    println!(
        "pie: median queue {q:.1} ms, util {}, drops {}",
        o.summary["link"]["utilization"], o.summary["link"]["drops"]
    );
    assert!(q > 3.0 && q < 30.0, "median queue {q}");
    assert!(o.summary["link"]["drops"]["aqm"].as_u64().unwrap() > 0);
    assert!(o.summary["link"]["utilization"].as_f64().unwrap() > 0.85);
}

/// DRR with weights 1:5 gives the first CUBIC flow (class 0) a sixth of the link and the
/// second five sixths; strict priority gives a constant-rate class-0 flow an empty queue.
#[test]
fn drr_weights_and_strict_priority() {
    let (o, _) =
        run(parse(&scenario(r#"{ kind = "drr", limit = "4bdp", weight0 = 1, weight1 = 5 }"#)), 1);
    let r = mbps(&o, 0) / (mbps(&o, 0) + mbps(&o, 1));
    println!("drr 1:5: {:.2} / {:.2} Mbit/s, share {r:.3}", mbps(&o, 0), mbps(&o, 1));
    assert!((r - 1.0 / 6.0).abs() < 0.03, "class 0 share {r}");
    let text = scenario(r#"{ kind = "drr", limit = "4bdp", strict = true }"#).replace(
        "[[flows]]\nkind = \"tcp\"",
        "[[flows]]\nkind = \"cbr\"\nrate = \"5Mbps\"\nrtt = \"40ms\"\n[[flows]]\nkind = \"tcp\"",
    );
    let (o, _) = run(parse(&text), 1);
    println!(
        "strict: cbr queue p99 {:.2} ms, cubic {:.2}",
        flow_q(&o, 0, "p99"),
        flow_q(&o, 1, "p50")
    );
    assert!(flow_q(&o, 0, "p99") < 1.0);
    assert!(flow_q(&o, 1, "p50") > 20.0);
}

/// Confucius sorts a heterogeneous mix by occupancy (D §8.7.4: BBR -> Q2, CUBIC -> Q3, GCC's
/// video low): each flow's mean class in `queue_class` after the first 5 s is ordered
/// GCC < BBR < CUBIC (measured: 1.0, 1.5, 3.0; BBR splits its time between Q1 and Q2 here).
#[test]
fn confucius_classifies_bbr_and_cubic_by_occupancy() {
    let text = r#"duration = "40s"
[link]
capacity = "20Mbps"
queue = { kind = "confucius", limit = "1000pkt" }
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
media = { start_bitrate = "2Mbps", max_bitrate = "20Mbps" }
[[flows]]
kind = "tcp"
cc = "bbr"
rtt = "40ms"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
"#;
    let (o, _) = run(parse(text), 1);
    let t = col(&o.flows, "time_s");
    let f = col(&o.flows, "flow");
    let c = col(&o.flows, "queue_class");
    let mean = |flow: f64| {
        let v: Vec<f64> = (0..t.len())
            .filter(|&i| f[i] == flow && t[i] > 5.0 && c[i].is_finite())
            .map(|i| c[i])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (gcc, bbr, cubic) = (mean(0.0), mean(1.0), mean(2.0));
    println!("mean class: gcc {gcc:.2}, bbr {bbr:.2}, cubic {cubic:.2}");
    assert!(gcc < bbr && bbr < cubic, "gcc {gcc}, bbr {bbr}, cubic {cubic}");
    assert!(cubic > 2.5);
    // Drop-tail does not classify: no such column.
    let (d, _) = run(parse(&text.replace("kind = \"confucius\", ", "")), 1);
    assert!(d.flows.column("queue_class").is_none());
}

/// L4S (RFC 9332): TCP Prague's ECT(1) packets take DualPI2's low-latency queue, where the
/// step marks keep them under a millisecond, and its accurate-ECN feedback holds it there
/// without a loss; CUBIC's classic queue sits near PI2's 15 ms target; both get a fair part.
#[test]
fn dualpi2_keeps_prague_in_the_low_latency_queue_beside_cubic() {
    let text = r#"duration = "30s"
[link]
capacity = "50Mbps"
queue = { kind = "dualpi2", limit = "250ms" }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "20ms"
[[flows]]
kind = "tcp"
cc = "prague"
rtt = "20ms"
[metrics]
warmup = "5s"
"#;
    let (o, _) = run(parse(text), 1);
    let f = |i: usize, k: &str| o.summary["flows"][i][k].clone();
    let q = |i: usize, p: &str| f(i, "queuing_delay_ms")[p].as_f64().unwrap();
    let (cubic, prague) = (mbps(&o, 0), mbps(&o, 1));
    println!(
        "cubic {cubic:.1} Mbit/s q50 {:.2} ms; prague {prague:.1} Mbit/s q99 {:.2} ms, marks {}",
        q(0, "p50"),
        q(1, "p99"),
        f(1, "ecn_marks")
    );
    assert!(q(1, "p99") < 1.0, "L4S queue p99 {}", q(1, "p99"));
    assert!((10.0..20.0).contains(&q(0, "p50")), "classic queue p50 {}", q(0, "p50"));
    assert!(
        f(1, "ecn_marks").as_u64().unwrap() > 100 && f(1, "retransmits").as_u64().unwrap() == 0
    );
    assert!(cubic > 8.0 && prague > 8.0 && cubic + prague > 47.0, "{cubic} {prague}");
}
