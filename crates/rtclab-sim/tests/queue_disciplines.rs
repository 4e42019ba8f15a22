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
}
