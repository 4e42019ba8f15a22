//! Video over TCP (`video = {...}` on a tcp flow; `rtclab_transport::tcp_video`): the encoder
//! follows the socket, frames reach the receiver in order and are timed there, and a capacity
//! drop shows up in the frame delay until the encoder has come down.
mod common;
use common::*;

fn scenario(capacity: &str, loss: &str) -> String {
    format!(
        r#"duration = "30s"
[link]
capacity = {capacity}
queue = {{ limit = "250pkt" }}
{loss}
[[flows]]
kind = "tcp"
cc = "copa"
rtt = "50ms"
delayed_ack = false
copa = {{ mode_switch = false }}
video = {{}}
[metrics]
bin = "100ms"
"#
    )
}

fn mean_between(o: &rtclab_sim::RunOutput, name: &str, from: f64, to: f64) -> f64 {
    let t = col(&o.flows, "time_s");
    let v = col(&o.flows, name);
    let xs: Vec<f64> = (0..t.len())
        .filter(|&i| t[i] > from && t[i] <= to && v[i].is_finite())
        .map(|i| v[i])
        .collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn metric(o: &rtclab_sim::RunOutput, k: &str) -> f64 {
    o.summary["flows"][0]["metrics"][k].as_f64().unwrap_or_else(|| panic!("no {k}"))
}

/// On a constant 10 Mbit/s link the encoder settles below the capacity, every frame arrives
/// at 25 fps, and frames take about the path's one-way trip plus the queue.
#[test]
fn the_encoder_follows_the_socket_and_every_frame_arrives() {
    let (o, _) = run(parse(&scenario("\"10Mbps\"", "")), 1);
    let target = mean_between(&o, "target_mbps", 10.0, 30.0);
    let fps = mean_between(&o, "rendered_fps", 10.0, 30.0);
    let (encoded, frames) = (metric(&o, "video_frames_encoded"), metric(&o, "video_frames"));
    let p50 = metric(&o, "video_frame_delay_ms_p50");
    println!("target {target:.2} Mbit/s, {fps:.1} fps, {frames}/{encoded} frames, p50 {p50:.0} ms");
    assert!(target > 3.0 && target < 10.0, "encoder at {target} Mbit/s on a 10 Mbit/s link");
    assert!((fps - 25.0).abs() < 1.0, "{fps} fps");
    assert!(encoded - frames <= 5.0, "frames lost in order delivery: {frames} of {encoded}");
    assert!(p50 > 25.0 && p50 < 250.0, "frame delay p50 {p50} ms");
    assert_eq!(metric(&o, "video_frames_blocked"), 0.0, "a 5 MiB buffer never blocks");
}

/// Random loss: TCP repairs it, so frames still complete in order (later, not fewer).
#[test]
fn losses_delay_frames_but_lose_none() {
    let (o, _) = run(parse(&scenario("\"10Mbps\"", "loss = { model = \"iid\", rate = 0.01 }")), 2);
    let (encoded, frames) = (metric(&o, "video_frames_encoded"), metric(&o, "video_frames"));
    assert!(o.summary["flows"][0]["retransmits"].as_f64().unwrap() > 10.0);
    assert!(encoded - frames <= 10.0, "{frames} of {encoded} frames delivered");
}

/// A drop from 10 to 2 Mbit/s: frames wait in the queue until the encoder,
/// seeing bytes pending in the socket, has cut its bitrate below the new capacity.
#[test]
fn a_capacity_drop_delays_frames_until_the_encoder_comes_down() {
    let cap = r#"{ schedule = [{ at = "0s", rate = "10Mbps" }, { at = "15s", rate = "2Mbps" }] }"#;
    let (o, _) = run(parse(&scenario(cap, "")), 1);
    let before = mean_between(&o, "target_mbps", 10.0, 15.0);
    let after = mean_between(&o, "target_mbps", 20.0, 30.0);
    let worst = mean_between(&o, "frame_delay_ms_max", 15.0, 18.0);
    let late = mean_between(&o, "frame_delay_ms_max", 25.0, 30.0);
    println!("target {before:.2} -> {after:.2} Mbit/s; frame delay max {worst:.0} ms after the drop, {late:.0} ms later");
    assert!(before > 3.0 && after < 2.0, "encoder {before} -> {after} Mbit/s");
    assert!(worst > late, "the drop's frames wait ({worst} ms vs {late} ms later)");
}
