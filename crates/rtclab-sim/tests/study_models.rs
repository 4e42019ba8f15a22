//! The fairness study's competitor models in the simulator (spec `copa-qlibra-tcp.md`
//! §2.7-2.8): the Zoom-like sender's retransmission, FEC and self-congestion, and an
//! application-limited live push over TCP (Bilibili-like).
mod common;
use common::*;

fn zoom_on_lossy_link(extra: &str) -> serde_json::Value {
    let s = parse(&format!(
        r#"
name = "zoom-rtx"
duration = "60s"
[link]
capacity = "5Mbps"
queue = {{ limit = "100KB" }}
loss = {{ model = "iid", rate = 0.03 }}
[metrics]
warmup = "10s"
[[flows]]
kind = "media"
cc = "zoom_like"
rtt = "40ms"
media = {{ max_bitrate = "800kbps", key_frame_requests = false {extra} }}
"#
    ));
    run(s, 1).0.summary
}

/// 3 % random loss on a short path: lost packets are resent (a few % of the bytes) and fewer
/// frames are lost than with retransmission off; FEC stays a baseline-plus share. The
/// receiver's key-frame requests are off here: with 32 % FEC only 5-8 of 1 500 frames stay
/// incomplete either way, and the requested key frames (their number differs between the two
/// runs) would swamp the retransmission effect at such counts (with requests on: 8 vs 5).
#[test]
fn zoom_like_retransmits_on_short_paths() {
    let with = zoom_on_lossy_link("");
    let without = zoom_on_lossy_link(", zoom_like = { rtx_max_rtt_ms = 0 }");
    let c = &with["flows"][0]["media"]["composition"];
    let (rtx, fec) = (c["rtx"].as_f64().unwrap(), c["fec"].as_f64().unwrap());
    let lost =
        |s: &serde_json::Value| s["flows"][0]["media"]["incomplete_frames"].as_u64().unwrap();
    println!("zoom_like, 3 % loss: rtx share {rtx:.3}, fec share {fec:.3}, incomplete frames {} (rtx off: {})", lost(&with), lost(&without));
    assert!(rtx > 0.01 && rtx < 0.1, "{rtx}");
    assert!(fec > 0.2 && fec < 0.5, "{fec}");
    assert_eq!(without["flows"][0]["media"]["composition"]["rtx"].as_f64(), Some(0.0));
    assert!(lost(&with) < lost(&without), "{} vs {}", lost(&with), lost(&without));
}

/// Alone on a 0.5 Mbit/s bottleneck the Zoom-like sender sends more than gets through (the
/// study's self-congestion: 0.6 Mbit/s into 0.5) and probes while constrained.
#[test]
fn zoom_like_overshoots_a_small_bottleneck() {
    let s = parse(
        r#"
name = "zoom-small"
duration = "120s"
[link]
capacity = "500kbps"
queue = { limit = "35500B" }
[metrics]
warmup = "30s"
[[flows]]
kind = "media"
cc = "zoom_like"
rtt = "230ms"
media = { max_bitrate = "800kbps" }
"#,
    );
    let out = run(s, 1).0.summary;
    let f = &out["flows"][0];
    let send = f["sending_rate_mbps"].as_f64().unwrap();
    let thr = f["throughput_mbps"].as_f64().unwrap();
    println!(
        "zoom_like alone on 0.5 Mbit/s: sends {send:.3}, gets {thr:.3} Mbit/s, probe clusters {}",
        f["media"]["probe_clusters"]
    );
    assert!(send > 1.05 * thr, "{send} vs {thr}");
    assert!(thr > 0.45, "{thr}");
    assert!(f["media"]["probe_clusters"].as_u64().unwrap() > 0);
}

/// A live stream pushed over TCP at 1 Mbit/s: on a 10 Mbit/s link it gets exactly its rate
/// with a small send-buffer lag; on a 0.8 Mbit/s link the lag grows with the run (the study's
/// Bilibili A/V delay of tens of seconds).
#[test]
fn app_limited_tcp_stream() {
    let scenario = |cap: &str| {
        parse(&format!(
            r#"
name = "live-push"
duration = "60s"
[link]
capacity = "{cap}"
queue = {{ limit = "50KB" }}
[metrics]
warmup = "5s"
[[flows]]
kind = "tcp"
cc = "cubic"
cubic = {{ beta = 0.85 }}
rtt = "10ms"
rate = "1Mbps"
"#
        ))
    };
    let fast = run(scenario("10Mbps"), 1).0.summary;
    let slow = run(scenario("800kbps"), 1).0.summary;
    let thr = fast["flows"][0]["throughput_mbps"].as_f64().unwrap();
    let lag_fast = fast["flows"][0]["app_delay_ms"]["mean"].as_f64().unwrap();
    let lag_slow = slow["flows"][0]["app_delay_ms"]["max"].as_f64().unwrap();
    println!("live push at 1 Mbit/s: {thr:.3} Mbit/s on 10 Mbit/s (lag {lag_fast:.1} ms), max lag {lag_slow:.0} ms on 0.8 Mbit/s");
    assert!((thr - 1.0).abs() < 0.03, "{thr}");
    assert!(lag_fast < 20.0, "{lag_fast}");
    // 60 s at 1 Mbit/s into 0.8 Mbit/s: 12 s of data cannot be sent, so the last packet sent
    // waited ≈ 12 s, a little more for the window's own losses and recoveries.
    assert!(lag_slow > 10_000.0 && lag_slow < 15_000.0, "{lag_slow}");
}
