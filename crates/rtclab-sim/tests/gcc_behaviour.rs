//! Send-side GCC end to end in the simulator, against libwebrtc's own scenario tests
//! (`goog_cc_network_control_unittest.cc`, spec `gcc.md` §6.2) and the derived probing check
//! (§6.3).
mod common;
use common::*;

/// The target (Mbit/s) in the bin ending at `t` seconds.
fn target_at(out: &rtclab_sim::RunOutput, t: f64) -> f64 {
    let c = &out.flows;
    let time = col(c, "time_s");
    let target = col(c, "target_mbps");
    let i =
        time.iter().position(|x| (*x - t).abs() < 1e-6).unwrap_or_else(|| panic!("no bin at {t}"));
    target[i]
}

fn first_time_above(out: &rtclab_sim::RunOutput, mbps: f64) -> Option<f64> {
    let c = &out.flows;
    let time = col(c, "time_s");
    col(c, "target_mbps").iter().zip(time).find(|(v, _)| **v >= mbps).map(|(_, t)| *t)
}

/// One call on `link`. libwebrtc's scenario tests send from a synthetic source that meets its
/// target: the ideal sender (`media.sender`), so that what is tested is the controller.
fn media_scenario(link: &str, rtt: &str, media: &str, duration: &str) -> String {
    format!(
        r#"
name = "t"
duration = "{duration}"
[link]
capacity = {link}
queue = {{ limit = "10s" }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "{rtt}"
media = {{ sender = "ideal", {media} }}
"#
    )
}

/// libwebrtc `UpdatesTargetRateBasedOnLinkCapacity`: start 300 kbit/s, max 1500; 500 kbit/s
/// link, 100 ms delay -> 450 ± 100 kbit/s after 25 s; 800 kbit/s -> 750 ± 150 after 20 s more.
#[test]
fn target_follows_link_capacity_like_libwebrtc() {
    let s = media_scenario(
        r#"{ schedule = [ { at = "0s", rate = "500kbps" }, { at = "25s", rate = "800kbps" } ] }"#,
        "100ms",
        r#"start_bitrate = "300kbps", min_bitrate = "10kbps", max_bitrate = "1500kbps""#,
        "45s",
    );
    let (out, _) = run(parse(&s), 1);
    let (a, b) = (target_at(&out, 25.0) * 1000.0, target_at(&out, 45.0) * 1000.0);
    println!("target after 25 s on 500 kbit/s: {a:.0} kbit/s (libwebrtc 450 ± 100)");
    println!("target after 20 s more on 800 kbit/s: {b:.0} kbit/s (libwebrtc 750 ± 150)");
    assert!((a - 450.0).abs() <= 100.0, "{a}");
    assert!((b - 750.0).abs() <= 150.0, "{b}");
}

/// The same test's last phase: 100 kbit/s and 200 ms delay -> 90 ± 25 kbit/s after 50 s.
#[test]
fn target_follows_a_drop_to_100_kbps() {
    let s = media_scenario(
        r#"{ schedule = [ { at = "0s", rate = "800kbps" }, { at = "20s", rate = "100kbps" } ] }"#,
        "200ms",
        r#"start_bitrate = "300kbps", min_bitrate = "10kbps", max_bitrate = "1500kbps""#,
        "70s",
    );
    let (out, _) = run(parse(&s), 1);
    let c = target_at(&out, 70.0) * 1000.0;
    println!("target 50 s after a drop to 100 kbit/s: {c:.0} kbit/s (libwebrtc 90 ± 25)");
    assert!((c - 90.0).abs() <= 25.0, "{c}");
}

/// Probing: from 300 kbit/s on a 2.5 Mbit/s link, the initial probes (0.9 and 1.8 Mbit/s)
/// and one further probe reach the 2 Mbit/s maximum within a second; without probing the
/// multiplicative increase (8 %/s) needs well over 10 s (spec §6.3: ~27 s to 2.5 Mbit/s).
#[test]
fn probing_ramps_up_within_a_second() {
    let media = r#"start_bitrate = "300kbps", max_bitrate = "2000kbps""#;
    let s = media_scenario(r#""2500kbps""#, "50ms", media, "30s");
    let (out, _) = run(parse(&s), 1);
    let with = first_time_above(&out, 1.9).unwrap();
    let probes = out.summary["flows"][0]["media"]["probe_clusters"].as_u64().unwrap();
    let s = media_scenario(
        r#""2500kbps""#,
        "50ms",
        &format!("{media}, gcc = {{ probing = false }}"),
        "30s",
    );
    let (out, _) = run(parse(&s), 1);
    let without = first_time_above(&out, 1.9).unwrap_or(f64::INFINITY);
    println!(
        "time to 1.9 Mbit/s: {with:.1} s with probing ({probes} clusters), {without:.1} s without"
    );
    assert!(with <= 1.0, "{with}");
    assert!(without >= 10.0, "{without}");
    assert!(probes >= 2);
}

/// RFC 8888 feedback drives the same estimator: on the paper's staircase, utilization within
/// 0.05 of the TWCC run.
#[test]
fn rfc8888_feedback_matches_twcc_on_the_staircase() {
    // The ideal sender (an encoder that meets its target): the feedback is what differs.
    let text = std::fs::read_to_string(builtin_dir().join("gcc-staircase.toml"))
        .unwrap()
        .replace(r#"media = { start_bitrate"#, r#"media = { sender = "ideal", start_bitrate"#);
    let twcc = parse(&text);
    let ccfb =
        parse(&text.replace(r#"media = { sender"#, r#"media = { feedback = "rfc8888", sender"#));
    let (a, _) = run(twcc, 1);
    let (b, _) = run(ccfb, 1);
    let ua = a.summary["link"]["utilization"].as_f64().unwrap();
    let ub = b.summary["link"]["utilization"].as_f64().unwrap();
    let qa = a.summary["flows"][0]["queuing_delay_ms"]["p95"].as_f64().unwrap();
    let qb = b.summary["flows"][0]["queuing_delay_ms"]["p95"].as_f64().unwrap();
    println!(
        "staircase utilization: twcc {ua:.3}, rfc8888 {ub:.3}; p95 queue {qa:.1} / {qb:.1} ms"
    );
    assert!((ua - ub).abs() <= 0.05, "{ua} vs {ub}");
    assert!(b.summary["flows"][0]["media"]["frames"].as_u64().unwrap() > 10_000);
}

/// Congestion-window pushback: when the return path stalls feedback for seconds, frames are
/// dropped at the sender instead of piling up (libwebrtc's DropFrame mode); with pushback off
/// none are.
#[test]
fn pushback_drops_frames_when_feedback_stalls() {
    let base = |extra: &str| {
        format!(
            r#"
name = "t"
duration = "40s"
[link]
capacity = "2000kbps"
queue = {{ limit = "10s" }}
[reverse_link]
capacity = {{ schedule = [ {{ at = "0s", rate = "1Mbps" }}, {{ at = "20s", rate = "2kbps" }}, {{ at = "23s", rate = "1Mbps" }} ] }}
queue = {{ limit = "10s" }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "100ms"
media = {{ start_bitrate = "1000kbps", max_bitrate = "1500kbps" {extra} }}
"#
        )
    };
    let (on, _) = run(parse(&base("")), 1);
    let (off, _) = run(parse(&base(", gcc = { pushback = false }")), 1);
    let d_on = on.summary["flows"][0]["media"]["frames_dropped_by_sender"].as_u64().unwrap();
    let d_off = off.summary["flows"][0]["media"]["frames_dropped_by_sender"].as_u64().unwrap();
    println!("frames dropped by pushback during a feedback stall: {d_on} (off: {d_off})");
    assert!(d_on > 0);
    assert_eq!(d_off, 0);
}

/// libwebrtc `LossBasedControlDoesModestBackoffToHighLoss` (run there with LossBasedBweV2,
/// the default): start 300 kbit/s, min 10, max 1500; 2 Mbit/s with 10 % random loss, 200 ms
/// each way; after 120 s the target is above 100 kbit/s. The classic 2 %/10 % rule alone
/// (`loss_based_v2 = false`) decreases on every report above 10 % loss and ends far lower
/// (the upstream comment: "bandwidth drops to ~10 kbps").
#[test]
fn loss_based_v2_backs_off_modestly_to_high_loss() {
    let s = |v2: bool| {
        format!(
            r#"
name = "t"
duration = "120s"
[link]
capacity = "2Mbps"
queue = {{ limit = "10s" }}
loss = {{ model = "iid", rate = 0.1 }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "400ms"
media = {{ start_bitrate = "300kbps", min_bitrate = "10kbps", max_bitrate = "1500kbps", gcc = {{ loss_based_v2 = {v2} }} }}
"#
        )
    };
    let (v2, _) = run(parse(&s(true)), 1);
    let (classic, _) = run(parse(&s(false)), 1);
    let (a, b) = (target_at(&v2, 120.0) * 1000.0, target_at(&classic, 120.0) * 1000.0);
    println!("target after 120 s at 10 % loss: LossBasedBweV2 {a:.0} kbit/s (libwebrtc > 100), classic rule {b:.0}");
    assert!(a > 100.0, "{a}");
    assert!(b < a, "{b} vs {a}");
}
