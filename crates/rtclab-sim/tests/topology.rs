//! Topologies as data: named links, per-flow paths, the `[link]` shorthand unchanged.
mod common;
use common::*;

/// One long flow across three links, one short flow on each (the classic parking lot).
pub const PARKING_LOT: &str = r#"name = "parking-lot"
duration = "30s"
[[links]]
name = "l1"
capacity = "10Mbps"
delay = "5ms"
queue = { limit = "50ms" }
[[links]]
name = "l2"
capacity = "10Mbps"
delay = "5ms"
queue = { limit = "50ms" }
[[links]]
name = "l3"
capacity = "10Mbps"
delay = "5ms"
queue = { limit = "50ms" }
[[flows]]
name = "long"
kind = "tcp"
path = ["l1", "l2", "l3"]
rtt = "10ms"
[[flows]]
name = "short1"
kind = "tcp"
path = ["l1"]
rtt = "10ms"
[[flows]]
name = "short2"
kind = "tcp"
path = ["l2"]
rtt = "10ms"
[[flows]]
name = "short3"
kind = "tcp"
path = ["l3"]
rtt = "10ms"
[metrics]
warmup = "5s"
"#;

#[test]
fn parking_lot_runs_and_reports_every_link() {
    let (out, sim) = run(parse(PARKING_LOT), 1);
    let s = &out.summary;
    let links = s["links"].as_array().unwrap();
    assert_eq!(links.len(), 3, "{links:?}");
    let thr: Vec<f64> = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["throughput_mbps"].as_f64().unwrap())
        .collect();
    let rtt: Vec<f64> =
        s["flows"].as_array().unwrap().iter().map(|f| f["rtt_ms"].as_f64().unwrap()).collect();
    for l in links {
        println!(
            "{} util {:.3} queue p50 {:.1} ms drops {}",
            l["name"],
            l["utilization"].as_f64().unwrap(),
            l["queuing_delay_sampled_ms"]["p50"].as_f64().unwrap_or(f64::NAN),
            l["drops"]["queue_overflow"]
        );
        assert!(l["utilization"].as_f64().unwrap() > 0.9, "{l}");
    }
    println!(
        "throughput long {:.2}, short {:.2} {:.2} {:.2} Mbit/s",
        thr[0], thr[1], thr[2], thr[3]
    );
    // Base RTT: access 10 ms + 3 links x 5 ms each way for the long flow, 10 + 2 x 5 for a short.
    assert_eq!(rtt, vec![40.0, 20.0, 20.0, 20.0]);
    // The long flow crosses three bottlenecks with twice the RTT: it gets less than each short.
    for &t in &thr[1..] {
        assert!(thr[0] < t, "{thr:?}");
    }
    // Each link carries the long flow plus its short flow: about its capacity.
    for k in 1..4 {
        assert!(thr[0] + thr[k] > 9.0, "{thr:?}");
    }
    // Conservation across the three links.
    let st = out.stats;
    let (held_data, held_acks) = sim.packets_in_network();
    assert_eq!(st.sent_packets, st.delivered_packets + st.dropped_packets + held_data);
    assert_eq!(st.sent_acks, st.delivered_acks + st.dropped_acks + held_acks);
    assert_eq!(s["link"]["name"], "l1");
}

#[test]
fn the_shorthand_is_a_link_named_bottleneck() {
    let (out, _) = run(builtin("two-cubic"), 1);
    assert_eq!(out.summary["link"]["name"], "bottleneck");
    let links = out.summary["links"].as_array().unwrap();
    assert_eq!(links.len(), 1);
    assert_eq!(links[0]["utilization"], out.summary["link"]["utilization"]);
    assert_eq!(links[0]["drops"], out.summary["link"]["drops"]);
    assert_eq!(out.summary["rtclab_version"], env!("CARGO_PKG_VERSION"));
}

/// The shorthand and the same topology written as one named link give identical results.
#[test]
fn shorthand_and_explicit_link_agree() {
    let short = r#"duration = "20s"
[link]
capacity = "20Mbps"
queue = { limit = "1bdp" }
loss = { model = "iid", rate = 0.001 }
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 2
"#;
    let explicit = r#"duration = "20s"
[[links]]
name = "bottleneck"
capacity = "20Mbps"
queue = { limit = "1bdp" }
loss = { model = "iid", rate = 0.001 }
[[flows]]
kind = "tcp"
rtt = "40ms"
count = 2
"#;
    let (a, _) = run(parse(short), 3);
    let (b, _) = run(parse(explicit), 3);
    // Same elements and routes; only the loss stream's label differs ("link.loss" vs
    // "links.bottleneck.loss"), so compare a lossless pair for identity...
    let (a0, _) = run(parse(&short.replace("loss = { model = \"iid\", rate = 0.001 }\n", "")), 3);
    let (b0, _) =
        run(parse(&explicit.replace("loss = { model = \"iid\", rate = 0.001 }\n", "")), 3);
    assert_eq!(a0.summary["flows"], b0.summary["flows"]);
    assert_eq!(a0.summary["link"], b0.summary["link"]);
    // ...and the lossy pair for the same shape of result.
    let u = |o: &rtclab_sim::RunOutput| o.summary["link"]["utilization"].as_f64().unwrap();
    println!("lossy: utilization {:.3} (shorthand) / {:.3} (named)", u(&a), u(&b));
    assert!(u(&a) > 0.8 && u(&b) > 0.8);
}

/// A link's delay adds to every crossing flow's RTT; the reverse path mirrors by default and
/// may be given; a reverse bottleneck on a named link limits the feedback.
#[test]
fn link_delays_reverse_paths_and_reverse_bottlenecks() {
    let text = r#"duration = "10s"
[[links]]
name = "access"
capacity = "50Mbps"
delay = "2ms"
[[links]]
name = "core"
capacity = "10Mbps"
delay = "20ms"
reverse = { capacity = "1Mbps", queue = { limit = "20pkt" } }
[[links]]
name = "back"
capacity = "100Mbps"
delay = "1ms"
[[flows]]
kind = "tcp"
path = ["access", "core"]
[[flows]]
kind = "tcp"
path = ["access", "core"]
reverse_path = ["back"]
"#;
    let s = parse(text);
    assert_eq!(s.flows[0].base_rtt.as_millis_f64(), 44.0);
    assert_eq!(s.flows[0].reverse_path, vec![1, 0]);
    assert_eq!(s.flows[1].base_rtt.as_millis_f64(), 23.0);
    let (out, _) = run(s, 1);
    let links = out.summary["links"].as_array().unwrap();
    let names: Vec<(String, String)> = links
        .iter()
        .map(|l| (l["name"].as_str().unwrap().into(), l["direction"].as_str().unwrap().into()))
        .collect();
    assert!(names.contains(&("core".into(), "reverse".into())), "{names:?}");
    // Only flow 0's ACKs cross core's 1 Mbit/s reverse bottleneck.
    let rev = links.iter().find(|l| l["name"] == "core" && l["direction"] == "reverse").unwrap();
    assert!(rev["delivered_mbps"].as_f64().unwrap() > 0.05, "{rev}");
}

#[test]
fn bad_topologies_are_named() {
    let e = |t: &str| rtclab_scenario::from_toml_str(t, &builtin_dir()).unwrap_err();
    let base = |links: &str, flow: &str| {
        format!("duration = \"5s\"\n{links}\n[[flows]]\nkind = \"tcp\"\n{flow}\n")
    };
    let two = "[[links]]\nname = \"a\"\ncapacity = \"1Mbps\"\ndelay = \"5ms\"\n[[links]]\nname = \"b\"\ncapacity = \"1Mbps\"\n";
    let x = e(&base(two, ""));
    assert_eq!(x.path, "flows[0].path");
    assert!(x.message.contains("\"a\", \"b\""), "{x}");
    let x = e(&base(two, "path = [\"a\", \"c\"]"));
    assert_eq!(x.path, "flows[0].path[1]");
    assert!(x.message.contains("no link named \"c\""), "{x}");
    let x = e(&base(two, "path = [\"a\", \"a\"]"));
    assert!(x.message.contains("twice"), "{x}");
    let x = e(&base(two, "path = [\"b\"]"));
    assert_eq!(x.path, "flows[0].rtt");
    assert!(x.message.contains("no propagation delay"), "{x}");
    let x = e(&base("[[links]]\nname = \"a\"\ncapacity = \"1Mbps\"\n[[links]]\nname = \"a\"\ncapacity = \"1Mbps\"\n", "rtt = \"10ms\"\npath = [\"a\"]"));
    assert_eq!(x.path, "links[1].name");
    let x = e(&base(
        "[link]\ncapacity = \"1Mbps\"\n[[links]]\nname = \"a\"\ncapacity = \"1Mbps\"\n",
        "rtt = \"10ms\"",
    ));
    assert!(x.message.contains("not both"), "{x}");
    let x = e(&base("[link]\ncapacity = \"1Mbps\"\n", ""));
    assert_eq!(x.path, "flows[0].rtt");
    let x = e(&base(
        "[link]\ncapacity = \"10Mbps\"\n[[middleboxes]]\nkind = \"nope\"\nat = \"bottleneck\"\n",
        "rtt = \"10ms\"",
    ));
    assert_eq!(x.path, "middleboxes[0].kind");
    let x = e(&base(
        "[link]\ncapacity = \"10Mbps\"\n[[middleboxes]]\nkind = \"nope\"\nat = \"l9\"\n",
        "rtt = \"10ms\"",
    ));
    assert_eq!(x.path, "middleboxes[0].at");
    assert!(x.message.contains("\"bottleneck\""), "{x}");
}

/// A middlebox from the scenario sits at its hop and sees the feedback: ACK aggregation at
/// 20 ms batches raises the smoothed RTT the sender measures by about half a batch.
#[test]
fn a_scenario_middlebox_acts_on_the_feedback_of_its_hop() {
    let base = r#"duration = "10s"
[link]
capacity = "10Mbps"
queue = { kind = "codel" }
[[flows]]
kind = "tcp"
rtt = "40ms"
"#;
    let with = format!("{base}[[middleboxes]]\nkind = \"ack_aggregation\"\nat = \"bottleneck\"\ninterval_ms = 20\n");
    let srtt = |t: &str| {
        let (out, _) = run(parse(t), 1);
        let s = col(&out.flows, "srtt_ms");
        s[s.len() / 2..].iter().sum::<f64>() / (s.len() - s.len() / 2) as f64
    };
    let (a, b) = (srtt(base), srtt(&with));
    println!("srtt without {a:.1} ms, with 20 ms ACK aggregation {b:.1} ms");
    assert!(b > a + 5.0 && b < a + 25.0, "{a} {b}");
    let s = parse(&with);
    assert_eq!(s.middleboxes.len(), 1);
    let e = rtclab_scenario::from_toml_str(
        &with.replace("interval_ms = 20", "interval_ms = 0"),
        &builtin_dir(),
    )
    .unwrap_err();
    assert_eq!(e.path, "middleboxes[0].interval_ms");
}

/// A registered flow kind runs through the generic endpoint path: an on/off source next to
/// TCP takes its duty cycle of the link.
#[test]
fn a_registered_flow_kind_runs() {
    let text = r#"duration = "20s"
[link]
capacity = "10Mbps"
[[flows]]
kind = "onoff"
rtt = "20ms"
params = { rate_mbps = 4, on_ms = 500, off_ms = 1500 }
[[flows]]
kind = "tcp"
rtt = "20ms"
"#;
    let (out, _) = run(parse(text), 1);
    let f = &out.summary["flows"][0];
    assert_eq!(f["kind"], "onoff");
    let t = f["throughput_mbps"].as_f64().unwrap();
    println!("onoff throughput {t:.2} Mbit/s (duty cycle 0.25 of 4 Mbit/s = 1)");
    assert!((0.9..1.1).contains(&t), "{t}");
    let e = |t: &str| rtclab_scenario::from_toml_str(t, &builtin_dir()).unwrap_err();
    let x = e(&text.replace("rate_mbps = 4", "rate_mbps = -4"));
    assert_eq!(x.path, "flows[0].params.rate_mbps");
    let x = e(&text.replace("kind = \"onoff\"", "kind = \"onof\""));
    assert!(x.message.contains("`onoff`"), "{x}");
}
