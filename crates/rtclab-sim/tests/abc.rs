//! ABC (Goyal et al., NSDI'20), the Zhuge evaluation's baseline: its sender (`cc = "abc"`)
//! behind its router (`[[middleboxes]] kind = "abc"`). Behaviour checks; the figures are in
//! `rtclab repro zhuge` (S2, S3) and docs/algorithms/abc.md.
mod common;
use common::*;

fn scenario(cc: &str, router: bool, capacity: &str, duration: f64) -> String {
    let mb = if router { "[[middleboxes]]\nkind = \"abc\"\nat = \"bottleneck\"\n" } else { "" };
    format!(
        r#"duration = "{duration}s"
[link]
capacity = {capacity}
queue = {{ limit = "250pkt" }}
{mb}[[flows]]
kind = "tcp"
cc = "{cc}"
rtt = "50ms"
[metrics]
warmup = "5s"
bin = "50ms"
"#
    )
}

fn num(v: &serde_json::Value, path: &[&str]) -> f64 {
    path.iter().fold(v, |v, k| &v[*k]).as_f64().unwrap_or(f64::NAN)
}

/// The router's target (0.98 μ, drained towards 10 ms of queue) holds the link near full with a
/// short queue, where CUBIC fills the 250-packet buffer (250 ms at 12 Mbit/s).
#[test]
fn abc_fills_the_link_with_a_short_queue() {
    let (abc, _) = run(parse(&scenario("abc", true, "\"12Mbps\"", 30.0)), 1);
    let (cubic, _) = run(parse(&scenario("cubic", false, "\"12Mbps\"", 30.0)), 1);
    let s = &abc.summary;
    let util = num(s, &["link", "utilization"]);
    let q95 = num(&s["flows"][0], &["queuing_delay_ms", "p95"]);
    let q50 = num(&s["flows"][0], &["queuing_delay_ms", "p50"]);
    let cubic_q50 = num(&cubic.summary["flows"][0], &["queuing_delay_ms", "p50"]);
    let marks = &s["middleboxes"][0]["metrics"];
    println!("abc: utilization {util:.3}, queue p50 {q50:.1} ms p95 {q95:.1} ms; cubic queue p50 {cubic_q50:.1} ms; marks {marks}");
    assert!(util > 0.85, "utilization {util}");
    assert!(q50 < 30.0 && q95 < 60.0, "queue p50 {q50} p95 {q95}");
    assert!(cubic_q50 > 3.0 * q50.max(1.0), "cubic {cubic_q50} vs abc {q50}");
    let share = num(marks, &["accelerate_share"]);
    assert!((0.35..0.65).contains(&share), "accelerate share {share}");
}

/// A 30 -> 3 Mbit/s drop (spec A.8 S3, k = 10): within a few round trips the router's target
/// falls with the dequeue rate and the brakes shrink the window, so the RTT is back under
/// 200 ms well inside the 20 s window; without its router the ABC sender sees only accelerates
/// and its window grows without bound (the warning `validate` prints).
#[test]
fn abc_follows_a_bandwidth_drop_and_needs_its_router() {
    let cap =
        "{ schedule = [ { at = \"0s\", rate = \"30Mbps\" }, { at = \"20s\", rate = \"3Mbps\" } ] }";
    let (o, _) = run(parse(&scenario("abc", true, cap, 40.0)), 1);
    let t = col(&o.flows, "time_s");
    let q = col(&o.flows, "queuing_delay_ms_max");
    let over: Vec<f64> =
        (0..t.len()).filter(|&i| t[i] >= 20.0 && 50.0 + q[i] > 200.0).map(|i| t[i]).collect();
    let last = over.last().copied().unwrap_or(20.0);
    println!("abc after the drop: {} bins with RTT > 200 ms, the last at {last:.2} s", over.len());
    assert!(last < 30.0, "still above 200 ms at {last} s");
    let tail: Vec<f64> = (0..t.len()).filter(|&i| t[i] >= 35.0).map(|i| q[i]).collect();
    let mean_tail = tail.iter().sum::<f64>() / tail.len() as f64;
    assert!(mean_tail < 60.0, "queue {mean_tail} ms at the end");

    let alone = parse(&scenario("abc", false, "\"12Mbps\"", 10.0));
    let w = alone.warnings();
    assert!(w.iter().any(|e| e.message.contains("no `abc` middlebox")), "{w:?}");
}

#[test]
fn abc_settings_that_cannot_work_are_rejected() {
    let base = scenario("abc", true, "\"12Mbps\"", 10.0);
    for (extra, path, words) in [
        ("delayed_ack = true\n", "flows[0].delayed_ack", "every packet"),
        ("ecn = true\n", "flows[0].ecn", "ECN field"),
    ] {
        let text = base.replace("rtt = \"50ms\"\n", &format!("rtt = \"50ms\"\n{extra}"));
        let e = rtclab_scenario::from_toml_str(&text, std::path::Path::new(".")).unwrap_err();
        assert_eq!(e.path, path);
        assert!(e.message.contains(words), "{}", e.message);
    }
    let media = base.replace("kind = \"tcp\"", "kind = \"media\"");
    let e = rtclab_scenario::from_toml_str(&media, std::path::Path::new(".")).unwrap_err();
    assert!(e.message.contains("tcp flows only"), "{}", e.message);
}
