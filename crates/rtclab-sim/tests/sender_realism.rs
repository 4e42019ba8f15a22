//! A real stack's encoder side in the simulator (issue 42): libvpx VP8's rate control and
//! libwebrtc's encoder bitrate adjuster — a media flow's defaults (`media.sender =
//! "libwebrtc"`) — reproduce Chromium's stall after a capacity dip (docs/realclient.md,
//! docs/algorithms/encoder.md), and switching the adjuster off, as Chromium's field trial
//! `WebRTC-VideoRateControl/bitrate_adjuster:false/` does, releases it.
mod common;
use common::*;

/// `rtclab realclient`'s built-in dip (1.5 Mbit/s, 0.1 for 5 s at 20 s, 300 ms buffer, 40 ms
/// RTT) with send-side GCC and libwebrtc's protection.
fn dip(media: &str) -> rtclab_sim::RunOutput {
    let s = parse(&format!(
        r#"
name = "dip"
duration = "60s"
[link]
capacity = {{ schedule = [ {{ at = "0s", rate = "1.5Mbps" }}, {{ at = "20s", rate = "0.1Mbps" }}, {{ at = "25s", rate = "1.5Mbps" }} ] }}
queue = {{ limit = "300ms" }}
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
media = {{ protection = {{ kind = "webrtc", rtx = true }}{media} }}
"#
    ));
    run(s, 1).0
}

/// `dip` with these media keys beside the protection (none: the defaults).
fn dip_with(keys: &str) -> rtclab_sim::RunOutput {
    dip(&if keys.is_empty() { String::new() } else { format!(", {keys}") })
}

/// Mean of a flows column over (a, b] seconds.
fn mean(out: &rtclab_sim::RunOutput, name: &str, a: f64, b: f64) -> f64 {
    let (t, v) = (col(&out.flows, "time_s"), col(&out.flows, name));
    let xs: Vec<f64> =
        t.iter().zip(v).filter(|(t, _)| **t > a && **t <= b).map(|(_, v)| *v).collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

#[test]
fn vp8_and_the_bitrate_adjuster_stall_after_a_dip_and_the_trial_releases_it() {
    // The defaults (the libwebrtc sender: 640x480 VP8 under libvpx's rate control, the
    // adjuster on), the field trial, and the ideal sender.
    let stalled = dip_with("");
    let released = dip_with("bitrate_adjuster = false");
    let ideal = dip_with(r#"sender = "ideal", resolution = "640x480""#);
    let (s, r, i) = (
        mean(&stalled, "target_mbps", 55.0, 60.0),
        mean(&released, "target_mbps", 55.0, 60.0),
        mean(&ideal, "target_mbps", 55.0, 60.0),
    );
    let fps = mean(&stalled, "frame_rate", 40.0, 60.0);
    println!("target at 55-60 s: defaults (vp8 + adjuster) {s:.3}, adjuster off {r:.3}, ideal sender {i:.3}; defaults' frame rate 40-60 s {fps:.1}");
    // Chromium 156 on the same link: 0.10-0.16 Mbit/s at 2-5 fps, and 0.47-1.38 with the trial.
    assert!(s < 0.3, "{s}");
    assert!(fps < 8.0, "{fps}");
    assert!(r > 0.6 && i > 0.6, "{r} {i}");
    // The rate control's drops count among the sender's dropped frames (the ideal encoder's
    // are congestion-window pushback's alone).
    let dropped = |o: &rtclab_sim::RunOutput| {
        o.summary["flows"][0]["media"]["frames_dropped_by_sender"].as_u64().unwrap()
    };
    assert!(dropped(&stalled) > dropped(&ideal) + 300, "{} {}", dropped(&stalled), dropped(&ideal));
    // Before the dip all three fill the link alike.
    for out in [&stalled, &released, &ideal] {
        assert!(mean(out, "target_mbps", 10.0, 20.0) > 1.1);
    }
}

/// Series `name` over (a, b] seconds.
fn series(out: &rtclab_sim::RunOutput, name: &str, a: f64, b: f64) -> Vec<f64> {
    let (t, v) = (col(&out.flows, "time_s"), col(&out.flows, name));
    t.iter().zip(v).filter(|(t, _)| **t > a && **t <= b).map(|(_, v)| *v).collect()
}

#[test]
fn with_resolution_adaptation_the_sender_shrinks_its_picture_in_the_dip_and_does_not_stall() {
    // Chromium 156 at its own degradation preference (maintain-framerate for a camera-like
    // track) scales to 320 wide after the dip and recovers (docs/realclient.md); the same
    // encoder with libwebrtc's quality scaler in the simulator.
    let adapt = dip_with(
        r#"encoder_model = "libvpx_vp8", bitrate_adjuster = true, degradation = "maintain_framerate""#,
    );
    let widths = series(&adapt, "frame_width", 0.0, 60.0);
    let (t55, w_dip) =
        (mean(&adapt, "target_mbps", 55.0, 60.0), series(&adapt, "frame_width", 24.0, 32.0));
    let fps = mean(&adapt, "frame_rate", 40.0, 60.0);
    println!(
        "maintain_framerate: target at 55-60 s {t55:.3} Mbit/s, frame rate 40-60 s {fps:.1}; width per bin: {:?}",
        widths.iter().step_by(5).collect::<Vec<_>>()
    );
    assert!(w_dip.iter().any(|w| *w < 640.0), "no downscale in the dip: {w_dip:?}");
    assert!(t55 > 0.4, "{t55}");
    assert!(fps > 15.0, "{fps}");
    // Without adaptation (maintain_resolution, the default) there is no width series.
    let keep = dip_with("");
    assert!(keep.flows.column("frame_width").is_none());
}
