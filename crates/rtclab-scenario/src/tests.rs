use super::*;
use std::path::Path;

fn err(text: &str) -> ConfigError {
    from_toml_str(text, Path::new(".")).unwrap_err()
}

const BASE: &str = r#"
duration = "10s"
[link]
capacity = "10Mbps"
[[flows]]
kind = "tcp"
rtt = "40ms"
"#;

#[test]
fn minimal_scenario_resolves_with_defaults() {
    let s = from_toml_str(BASE, Path::new(".")).unwrap();
    assert_eq!(s.flows.len(), 1);
    assert_eq!(s.flows[0].kind.cc_name(), "cubic");
    // 1 BDP at 10 Mbit/s and 40 ms = 50 000 bytes.
    assert_eq!(s.main_link().forward.queue_limit, rtclab_net::QueueLimit::Bytes(50_000));
    assert!(s.main_link().reverse.is_none());
}

#[test]
fn unknown_key_names_its_path() {
    let e = err(&BASE.replace("capacity =", "capacityy ="));
    assert!(e.to_string().contains("capacityy"), "{e}");
    let e = err(&format!("{BASE}colour = \"red\"\n"));
    assert_eq!(e.path, "flows[0].colour");
    assert!(e.message.contains("colour"), "{e}");
}

#[test]
fn wrong_units_are_explained() {
    let e = err(&BASE.replace("\"10Mbps\"", "\"5 Mbit\""));
    assert_eq!(e.path, "link.capacity");
    assert!(e.message.contains("\"5 Mbit\"") && e.message.contains("Mbps"), "{e}");
    let e = err(&BASE.replace("\"40ms\"", "40"));
    assert_eq!(e.path, "flows[0].rtt");
    assert!(e.message.contains("no unit"), "{e}");
}

#[test]
fn zero_and_negative_capacity_rejected() {
    let e = err(&BASE.replace("\"10Mbps\"", "\"0Mbps\""));
    assert_eq!(e.path, "link.capacity");
    let e = err(&BASE.replace("\"10Mbps\"", "\"-5Mbps\""));
    assert!(e.message.contains("negative"), "{e}");
}

#[test]
fn start_after_end_rejected() {
    let e = err(&format!("{BASE}start = \"20s\"\n"));
    assert_eq!(e.path, "flows[0].start");
    let e = err(&format!("{BASE}start = \"2s\"\nstop = \"1s\"\n"));
    assert_eq!(e.path, "flows[0].stop");
}

#[test]
fn unknown_algorithm_lists_accepted() {
    let e = err(&format!("{BASE}cc = \"cubik\"\n"));
    assert_eq!(e.path, "flows[0].cc");
    assert!(
        e.message.contains("cubik") && e.message.contains("cubic") && e.message.contains("reno"),
        "{e}"
    );
}

#[test]
fn missing_and_malformed_trace_files() {
    let t = BASE.replace("\"10Mbps\"", "{ trace = \"does-not-exist.up\", format = \"mahimahi\" }");
    let e = err(&t);
    assert_eq!(e.path, "link.capacity.trace");
    assert!(e.message.contains("does-not-exist.up"), "{e}");
    let dir = std::env::temp_dir().join(format!("rtclab-scn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.up"), "1\n2\nthree\n").unwrap();
    let t = BASE.replace("\"10Mbps\"", "{ trace = \"bad.up\", format = \"mahimahi\" }");
    let e = from_toml_str(&t, &dir).unwrap_err();
    assert!(e.message.contains("bad.up:3:"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn toml_syntax_error_names_the_line() {
    let e = err("duration = \"10s\"\n[link\n");
    assert!(e.path.starts_with("line 2"), "{e}");
}

#[test]
fn json_input_gives_same_paths() {
    let e = from_json_str(
        r#"{"duration": "10s", "link": {"capacity": "10Mbps"}, "flows": [{"kind": "tcp", "rtt": "40ms", "cc": "bbq"}]}"#,
        Path::new("."),
    )
    .unwrap_err();
    assert_eq!(e.path, "flows[0].cc");
    assert!(!e.message.contains("column"), "{e}");
}

#[test]
fn cbr_needs_rate_and_no_cc() {
    let e = err(&BASE.replace("kind = \"tcp\"", "kind = \"cbr\""));
    assert_eq!(e.path, "flows[0].rate");
    let e = err(&BASE.replace("kind = \"tcp\"", "kind = \"cbr\"\nrate = \"1Mbps\"\ncc = \"reno\""));
    assert_eq!(e.path, "flows[0].cc");
}

#[test]
fn queue_limits_resolve() {
    let s = from_toml_str(
        &BASE.replace("[[flows]]", "queue = { limit = \"50ms\" }\n[[flows]]"),
        Path::new("."),
    )
    .unwrap();
    assert_eq!(s.main_link().forward.queue_limit, rtclab_net::QueueLimit::Bytes(62_500));
    let e = err(&BASE.replace("[[flows]]", "queue = { limit = \"1ms\" }\n[[flows]]"));
    assert_eq!(e.path, "link.queue.limit");
}

#[test]
#[ignore = "prints example messages for the docs"]
fn print_messages() {
    for t in [
        BASE.replace("capacity =", "capacityy ="),
        BASE.replace("\"10Mbps\"", "\"5 Mbit\""),
        format!("{BASE}cc = \"cubik\"\n"),
        format!("{BASE}start = \"20s\"\n"),
        BASE.replace("\"40ms\"", "40"),
    ] {
        println!("{}", err(&t));
    }
}

const MEDIA: &str = r#"
duration = "10s"
[link]
capacity = "2Mbps"
[[flows]]
kind = "media"
rtt = "40ms"
"#;

#[test]
fn media_defaults_to_gcc_with_twcc() {
    let s = from_toml_str(MEDIA, Path::new(".")).unwrap();
    assert_eq!(s.flows[0].kind.cc_name(), "gcc");
}

#[test]
fn feedback_must_suit_the_controller() {
    let e = err(&format!("{MEDIA}media = {{ feedback = \"remb\" }}\n"));
    assert_eq!(e.path, "flows[0].media.feedback");
    assert!(e.message.contains("twcc"), "{e}");
    let e = err(&format!("{MEDIA}cc = \"gcc_paper\"\nmedia = {{ feedback = \"twcc\" }}\n"));
    assert_eq!(e.path, "flows[0].media.feedback");
    assert!(e.message.contains("remb"), "{e}");
}

#[test]
fn controllers_match_flow_kinds() {
    // Window controllers may drive media flows (their encoder follows cwnd/srtt)…
    assert!(from_toml_str(&format!("{MEDIA}cc = \"cubic\"\n"), Path::new(".")).is_ok());
    // …but not with REMB, which carries no per-packet acknowledgements.
    let e = err(&format!("{MEDIA}cc = \"cubic\"\nmedia = {{ feedback = \"remb\" }}\n"));
    assert_eq!(e.path, "flows[0].media.feedback");
    assert!(e.message.contains("twcc"), "{e}");
    let e = err(&BASE.replace("kind = \"tcp\"", "kind = \"tcp\"\ncc = \"gcc\""));
    assert_eq!(e.path, "flows[0].cc");
    let e = err(&format!("{MEDIA}media = {{ start_bitrate = \"5Mbps\" }}\n"));
    assert_eq!(e.path, "flows[0].media");
}

#[test]
fn rfc8888_pairs_with_gcc_only() {
    let s =
        from_toml_str(&format!("{MEDIA}media = {{ feedback = \"rfc8888\" }}\n"), Path::new("."))
            .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Media(m) => {
            assert!(matches!(m.feedback, rtclab_media::receiver::FeedbackMode::Ccfb(_)))
        }
        _ => panic!("not media"),
    }
    let e = err(&format!("{MEDIA}cc = \"gcc_paper\"\nmedia = {{ feedback = \"rfc8888\" }}\n"));
    assert_eq!(e.path, "flows[0].media.feedback");
    assert!(e.message.contains("REMB"), "{e}");
    let e = err(&format!(
        "{MEDIA}media = {{ feedback = \"rfc8888\", feedback_interval = \"50ms\" }}\n"
    ));
    assert_eq!(e.path, "flows[0].media.feedback_interval");
}

#[test]
fn controller_parameters_by_name_with_ranges() {
    let s = from_toml_str(
        &format!(
            "{MEDIA}media = {{ gcc = {{ beta = 0.9, probing = false, trendline_window = 30 }} }}\n"
        ),
        Path::new("."),
    )
    .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Media(m) => match &m.cc {
            MediaCcSpec::Gcc(g) => {
                assert_eq!(g.aimd.beta, 0.9);
                assert!(!g.probe.enabled);
                assert_eq!(g.trendline.window_size, 30);
            }
            _ => panic!("not gcc"),
        },
        _ => panic!("not media"),
    }
    let e = err(&format!("{MEDIA}media = {{ gcc = {{ beta = 0 }} }}\n"));
    assert_eq!(e.path, "flows[0].media.gcc.beta");
    assert!(e.message.contains("accepted 0.05..=0.99"), "{e}");
    let e = err(&format!("{MEDIA}media = {{ gcc = {{ kalman_initial_var_noise = 5.0 }} }}\n"));
    assert!(e.message.contains("unknown parameter"), "{e}");
    let e = err(&format!("{MEDIA}cc = \"gcc_paper\"\nmedia = {{ gcc = {{ k_down = -1 }} }}\n"));
    assert_eq!(e.path, "flows[0].media.gcc.k_down");
    let e = err(&format!("{MEDIA}media = {{ gcc = {{ loss_low = 0.5, loss_high = 0.2 }} }}\n"));
    assert!(e.message.contains("loss_low <= loss_high"), "{e}");
}

/// A video stream on transport-wide feedback is paced at its pacing factor from its first
/// packet (libwebrtc's `VideoSendStreamImpl` sets it when the stream is created); GoogCC's 2.5
/// before the first feedback holds with RFC 8888 feedback only; a factor given by name wins.
#[test]
fn a_video_stream_on_twcc_is_paced_at_its_factor_from_the_start() {
    let factors = |media: &str| {
        let s = from_toml_str(&format!("{MEDIA}media = {{ {media} }}\n"), Path::new(".")).unwrap();
        match &s.flows[0].kind {
            FlowKindSpec::Media(m) => match &m.cc {
                MediaCcSpec::Gcc(g) => (g.initial_pacing_factor, g.pacing_factor),
                _ => panic!("not gcc"),
            },
            _ => panic!("not media"),
        }
    };
    assert_eq!(factors(""), (1.1, 1.1));
    assert_eq!(factors("feedback = \"twcc\", gcc = { pacing_factor = 1.5 }"), (1.5, 1.5));
    assert_eq!(factors("feedback = \"rfc8888\""), (2.5, 1.1));
    assert_eq!(factors("gcc = { initial_pacing_factor = 3.0 }"), (3.0, 1.1));
}

/// gcc_paper's statistic picks the detector's bounds (in the statistic's units); explicit
/// bounds still win, whatever their order in the table.
#[test]
fn the_gcc_paper_statistic_picks_its_bounds() {
    let paper = |text: &str| {
        let s =
            from_toml_str(&format!("{MEDIA}cc = \"gcc_paper\"\n{text}"), Path::new(".")).unwrap();
        match &s.flows[0].kind {
            FlowKindSpec::Media(m) => match &m.cc {
                MediaCcSpec::GccPaper(g) => *g,
                _ => panic!("not gcc_paper"),
            },
            _ => panic!("not media"),
        }
    };
    use rtclab_cc::gcc::kalman::DelayStatistic;
    let g = paper("");
    assert_eq!(g.statistic, DelayStatistic::Paper);
    assert_eq!((g.detector.min_threshold, g.detector.max_threshold), (0.1, 10.0));
    assert_eq!(g.detector.initial_threshold, 12.5);
    let g = paper("media = { gcc = { remb_statistic = true } }\n");
    assert_eq!(g.statistic, DelayStatistic::RembPath);
    assert_eq!((g.detector.min_threshold, g.detector.max_threshold), (6.0, 600.0));
    let g = paper("media = { gcc = { min_threshold = 2, remb_statistic = true } }\n");
    assert_eq!(g.detector.min_threshold, 2.0);
    let g = paper("media = { threshold = 0.5, adaptive_threshold = false }\n");
    assert!(!g.detector.adaptive && g.detector.initial_threshold == 0.5);
    assert!(!g.rate_control_2013);
    // 2013 Chrome's receiver as the repro runs it.
    let g = paper(
        "media = { threshold = 25, adaptive_threshold = false, gcc = { remb_statistic = true, rate_control_2013 = true, overuse_time_ms = 100 } }\n",
    );
    assert!(g.rate_control_2013 && g.detector.initial_threshold == 25.0);
    assert_eq!(g.detector.overusing_time_threshold_ms, 100.0);
    let e = err(&format!("{MEDIA}media = {{ gcc = {{ rate_control_2013 = 1 }} }}\n"));
    assert!(e.message.contains("rate_control_2013"), "{e}");
    // That year's sender loss rule, with the TFRC floor set beside it in either order.
    let g = paper("media = { tfrc_floor = true, gcc = { loss_rule_2013 = true } }\n");
    assert_eq!(g.loss.increase, rtclab_cc::gcc::loss_based::IncreaseRule::Once2013);
    assert!(g.loss.tfrc_floor && g.loss.tfrc_packet_size == 1000);
    let g = paper("media = { gcc = { loss_rule_2013 = false } }\n");
    assert_eq!(g.loss, rtclab_cc::gcc::loss_based::LossBasedConfig::paper());
    let e = err(&format!("{MEDIA}media = {{ threshold = 0 }}\n"));
    assert!(e.message.contains("(0, 600]"), "{e}");
    // 2013's randomized receiver-report schedule: gcc_paper's receiver only.
    let s = from_toml_str(
        &format!("{MEDIA}cc = \"gcc_paper\"\nmedia = {{ rtcp_2013 = true }}\n"),
        Path::new("."),
    )
    .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Media(m) => assert!(matches!(
            m.feedback,
            rtclab_media::receiver::FeedbackMode::RembAndRr { rr_randomized: true, .. }
        )),
        _ => panic!("not media"),
    }
    let e = err(&format!("{MEDIA}cc = \"gcc\"\nmedia = {{ rtcp_2013 = true }}\n"));
    assert!(e.message.contains("gcc_paper") && e.path.contains("rtcp_2013"), "{e}");
}

#[test]
fn frame_size_files_are_checked() {
    let dir = std::env::temp_dir().join(format!("rtclab-fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ok.txt"), "# bytes per frame\n1200\n\n3400 # key\n").unwrap();
    std::fs::write(dir.join("bad.txt"), "1200\nabc\n").unwrap();
    let s = from_toml_str(
        &format!("{MEDIA}media = {{ frame_sizes = \"ok.txt\", frame_sizes_scaled = false }}\n"),
        &dir,
    )
    .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Media(m) => {
            assert_eq!(m.sender.encoder.size_trace, vec![1200, 3400]);
            assert!(!m.sender.encoder.size_trace_scaled);
        }
        _ => panic!("not media"),
    }
    let e = from_toml_str(&format!("{MEDIA}media = {{ frame_sizes = \"bad.txt\" }}\n"), &dir)
        .unwrap_err();
    assert!(e.message.contains("bad.txt:2"), "{e}");
    let e = from_toml_str(&format!("{MEDIA}media = {{ frame_sizes = \"none.txt\" }}\n"), &dir)
        .unwrap_err();
    assert_eq!(e.path, "flows[0].media.frame_sizes");
    let e = err(&format!("{MEDIA}media = {{ pacer_burst = \"2s\" }}\n"));
    assert_eq!(e.path, "flows[0].media.pacer_burst");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn media_packet_size_sets_the_packetizer_mtu() {
    let s = from_toml_str(&format!("{MEDIA}packet_size = \"1000B\"\n"), Path::new(".")).unwrap();
    assert_eq!(s.flows[0].kind.packet_size(), 1000);
    let e = err(&format!("{MEDIA}packet_size = \"64B\"\n"));
    assert_eq!(e.path, "flows[0].packet_size");
    assert!(e.message.contains("accepted 100..=65535"), "{e}");
}

#[test]
fn copa_variants_and_parameters() {
    let tcp = BASE.replace("kind = \"tcp\"", "kind = \"tcp\"\ncc = \"copa\"");
    let s = from_toml_str(
        &format!("{tcp}copa = {{ variant = \"mvfst\", delta = 0.1 }}\n"),
        Path::new("."),
    )
    .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Tcp { cc: CcSpec::Copa(c), .. } => {
            assert_eq!(c.delta, 0.1);
            assert!(!c.mode_switch, "mvfst has no competitive mode");
        }
        _ => panic!("not copa"),
    }
    let e = err(&format!("{tcp}copa = {{ delta = 0 }}\n"));
    assert_eq!(e.path, "flows[0].copa.delta");
    assert!(e.message.contains("accepted 0.001..=10"), "{e}");
    let e = err(&format!("{tcp}copa = {{ variant = \"bbr\" }}\n"));
    assert_eq!(e.path, "flows[0].copa.variant");
    assert!(e.message.contains("genericcc"), "{e}");
}

#[test]
fn qlibra_parameters() {
    let tcp = BASE.replace("kind = \"tcp\"", "kind = \"tcp\"\ncc = \"qlibra\"");
    let s = from_toml_str(
        &format!("{tcp}qlibra = {{ threshold = 0.05, text_rule = true }}\n"),
        Path::new("."),
    )
    .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Tcp { cc: CcSpec::Qlibra(q), .. } => {
            assert_eq!(q.threshold, 0.05);
            assert_eq!(q.rule, rtclab_cc::qlibra::QlibraRule::Text);
        }
        _ => panic!("not qlibra"),
    }
    let e = err(&format!("{tcp}qlibra = {{ slot_ms = 0 }}\n"));
    assert_eq!(e.path, "flows[0].qlibra.slot_ms");
    assert!(e.message.contains("accepted 1..=600000"), "{e}");
    let e = err(&BASE.replace("kind = \"tcp\"", "kind = \"tcp\"\nqlibra = { md = 0.7 }"));
    assert_eq!(e.path, "flows[0].qlibra");
}

#[test]
fn window_controllers_on_media_flows() {
    let s =
        from_toml_str(&format!("{MEDIA}cc = \"copa\"\ncopa = {{ delta = 0.1 }}\n"), Path::new("."))
            .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Media(m) => {
            assert!(matches!(m.cc, MediaCcSpec::Window(CcSpec::Copa(_))));
            assert_eq!(
                m.feedback,
                rtclab_media::receiver::FeedbackMode::Twcc {
                    interval: rtclab_core::TimeDelta::from_millis(25)
                }
            );
        }
        _ => panic!("not media"),
    }
    let e = err(&format!("{MEDIA}cc = \"reno\"\nmedia = {{ feedback = \"remb\" }}\n"));
    assert_eq!(e.path, "flows[0].media.feedback");
    let e = err(&format!("{MEDIA}cc = \"bbr\"\nmedia = {{ threshold = 20.0 }}\n"));
    assert_eq!(e.path, "flows[0].media");
    let e = err(&format!("{MEDIA}copa = {{ delta = 0.1 }}\n"));
    assert_eq!(e.path, "flows[0].copa");
    assert!(e.message.contains("window controllers") && e.message.contains("\"gcc\""), "{e}");
}

#[test]
fn zoom_like_is_a_media_model() {
    let s = from_toml_str(
        &format!("{MEDIA}cc = \"zoom_like\"\nmedia = {{ max_bitrate = \"900kbps\" }}\n"),
        Path::new("."),
    )
    .unwrap();
    match &s.flows[0].kind {
        FlowKindSpec::Media(m) => match &m.cc {
            MediaCcSpec::ZoomLike(z) => assert_eq!(z.max_media_bps, 900_000.0),
            _ => panic!("not zoom_like"),
        },
        _ => panic!("not media"),
    }
    let e = err(&BASE.replace("kind = \"tcp\"", "kind = \"tcp\"\ncc = \"zoom_like\""));
    assert_eq!(e.path, "flows[0].cc");
}

#[test]
fn protection_and_receiver_stages_are_checked_where_they_are_written() {
    let e = err(&format!("{MEDIA}media = {{ protection = {{ kind = \"auto\", fec = 0.2 }} }}\n"));
    assert_eq!(e.path, "flows[0].media.protection.fec");
    assert!(e.message.contains("fixed"), "{e}");
    let e = err(&format!("{MEDIA}media = {{ protection = {{ kind = \"fixed\", fec = 1.5 }} }}\n"));
    assert_eq!(e.path, "flows[0].media.protection.fec");
    let e = err(&format!("{MEDIA}media = {{ protection = {{ kind = \"fec\" }} }}\n"));
    assert!(e.message.contains("auto") && e.message.contains("fixed"), "{e}");
    let e = err(&format!("{MEDIA}media = {{ decode_time = \"0ms\" }}\n"));
    assert_eq!(e.path, "flows[0].media.decode_time");
    let ok = format!(
        "{MEDIA}media = {{ playout_delay = \"80ms\", decode_time = \"5ms\", protection = {{ kind = \"fixed\", fec = 0.25, rtx = true }} }}\n"
    );
    let s = from_toml_str(&ok, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    use rtclab_media::decoder::DecodeTime;
    use rtclab_media::playout::Playout;
    use rtclab_media::protection::ProtectionSpec;
    assert_eq!(m.playout, Playout::Fixed(rtclab_core::TimeDelta::from_millis(80)));
    assert_eq!(m.decode, DecodeTime::Fixed(rtclab_core::TimeDelta::from_millis(5)));
    assert!(
        matches!(m.sender.protection, ProtectionSpec::Fixed { fec_ratio, rtx: Some(_), .. } if fec_ratio == 0.25)
    );
}

#[test]
fn receiver_pipeline_settings_are_checked() {
    for (media, path, says) in [
        ("jitter_buffer = \"webrtc\"", "flows[0].media.jitter_buffer", "adaptive"),
        ("encode_time = \"2s\"", "flows[0].media.encode_time", "0..=1 s"),
        ("resolution = \"1080p\"", "flows[0].media.resolution", "WIDTHxHEIGHT"),
        ("resolution = \"8x8\"", "flows[0].media.resolution", "16..=16384"),
        ("frame_rate_control = \"afr2\"", "flows[0].media.frame_rate_control", "qwait-s"),
        ("frame_size_jitter = 0.8", "flows[0].media.frame_size_jitter", "0..=0.5"),
        ("encoder_lag = \"20s\"", "flows[0].media.encoder_lag", "0..=10 s"),
        ("key_frame_size = 0.5", "flows[0].media.key_frame_size", "1..=20"),
        (
            "sender = \"ideal\", floor_jitter = 0.05",
            "flows[0].media.floor_jitter",
            "no frame-size floor",
        ),
        (
            "encoder_model = \"libvpx_vp8\", floor_jitter = 0.8",
            "flows[0].media.floor_jitter",
            "0..=0.5",
        ),
        ("encoder_target_share = 1.2", "flows[0].media.encoder_target_share", "0.1..=1"),
        ("encoder_model = \"x264\"", "flows[0].media.encoder_model", "libvpx_vp8"),
        ("sender = \"chromium\"", "flows[0].media.sender", "\"libwebrtc\", \"ideal\""),
        ("frame_wait = \"11s\"", "flows[0].media.frame_wait", "0..=10 s"),
        (
            "sender = \"ideal\", content_complexity = 2",
            "flows[0].media.content_complexity",
            "no frame-size floor",
        ),
        (
            "encoder_model = \"libvpx_vp8\", content_complexity = 50",
            "flows[0].media.content_complexity",
            "0.05..=20",
        ),
        (
            "encoder_model = \"libvpx_vp8\", frame_sizes = \"x.txt\"",
            "flows[0].media.frame_sizes",
            "one or the other",
        ),
        (
            "sender = \"ideal\", degradation = \"maintain_framerate\"",
            "flows[0].media.degradation",
            "needs encoder_model",
        ),
        (
            "encoder_model = \"libvpx_vp8\", degradation = \"balanced\"",
            "flows[0].media.degradation",
            "not modelled",
        ),
        (
            "encoder_model = \"libvpx_vp8\", degradation = \"maintain-framerate\"",
            "flows[0].media.degradation",
            "unknown degradation preference",
        ),
        (
            "encoder_model = \"ideal\", max_frame_drop_interval = \"1s\"",
            "flows[0].media.max_frame_drop_interval",
            "libvpx_vp8",
        ),
        (
            "encoder_model = \"libvpx_vp8\", max_frame_drop_interval = \"11s\"",
            "flows[0].media.max_frame_drop_interval",
            "0..=10 s",
        ),
    ] {
        let e = err(&format!("{MEDIA}media = {{ {media} }}\n"));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    let ok = format!(
        "{MEDIA}media = {{ jitter_buffer = \"adaptive\", playout_delay = \"20ms\", encode_time = \"4ms\", resolution = \"1920x1080\", frame_rate_control = \"afr\" }}\n"
    );
    let s = from_toml_str(&ok, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    use rtclab_core::TimeDelta;
    use rtclab_media::playout::Playout;
    assert_eq!(m.playout, Playout::Adaptive { min: TimeDelta::from_millis(20) });
    assert_eq!(m.sender.encoder.encode_time, TimeDelta::from_millis(4));
    assert_eq!((m.sender.encoder.width, m.sender.encoder.height), (1920, 1080));
    assert_eq!(m.frame_rate_control.as_deref(), Some("afr"));
    assert_eq!(m.frame_wait, None); // the receiver's default (200 ms with retransmission)
    let enc = format!(
        "{MEDIA}media = {{ frame_size_jitter = 0.4, encoder_lag = \"2s\", key_frame_size = 6, encoder_target_share = 0.85 }}\n"
    );
    let s = from_toml_str(&enc, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    let e = &m.sender.encoder;
    assert_eq!(
        (e.size_jitter, e.rate_time_constant, e.key_frame_factor, e.target_share),
        (0.4, TimeDelta::from_secs(2), 6.0, 0.85)
    );
    // The libwebrtc sender by default: libvpx's rate control, the adjuster, 640x480, a key
    // frame every 3000 frames.
    assert_eq!(
        (&e.model, e.bitrate_adjuster, e.width, e.height),
        (
            &rtclab_media::encoder::EncoderModel::LibvpxVp8 {
                min_bits_per_pixel: rtclab_media::encoder::VP8_MIN_BITS_PER_PIXEL,
                complexity: 1.0
            },
            true,
            640,
            480
        )
    );
    assert_eq!(e.key_frame_interval, Some(TimeDelta::from_secs(100)));
    // The ideal sender's defaults, as before 2026-12-01.
    let ideal = format!("{MEDIA}media = {{ sender = \"ideal\", fps = 60 }}\n");
    let s = from_toml_str(&ideal, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    let e = &m.sender.encoder;
    assert_eq!(
        (&e.model, e.bitrate_adjuster, e.width, e.height, e.key_frame_interval),
        (
            &rtclab_media::encoder::EncoderModel::Ideal,
            false,
            1280,
            720,
            Some(TimeDelta::from_secs(10))
        )
    );
    // libwebrtc's interval is in frames; a replayed frame-size trace is the encoder; a key
    // given by name wins over the sender's default.
    let sixty = format!("{MEDIA}media = {{ fps = 60, bitrate_adjuster = false }}\n");
    let s = from_toml_str(&sixty, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    let e = &m.sender.encoder;
    assert_eq!((e.key_frame_interval, e.bitrate_adjuster), (Some(TimeDelta::from_secs(50)), false));
    let zoom = format!("{MEDIA}cc = \"zoom_like\"\nmedia = {{ }}\n");
    let s = from_toml_str(&zoom, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    assert_eq!(m.sender.encoder.model, rtclab_media::encoder::EncoderModel::Ideal);
    let vp8 = format!(
        "{MEDIA}media = {{ encoder_model = \"libvpx_vp8\", content_complexity = 1.5, bitrate_adjuster = true }}\n"
    );
    let s = from_toml_str(&vp8, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    let e = &m.sender.encoder;
    assert_eq!(
        e.model,
        rtclab_media::encoder::EncoderModel::LibvpxVp8 {
            min_bits_per_pixel: rtclab_media::encoder::VP8_MIN_BITS_PER_PIXEL,
            complexity: 1.5
        }
    );
    assert!(e.bitrate_adjuster);
    assert_eq!(e.degradation, rtclab_media::encoder::Degradation::MaintainResolution);
    let adapt = format!(
        "{MEDIA}media = {{ encoder_model = \"libvpx_vp8\", degradation = \"maintain_framerate\" }}\n"
    );
    let s = from_toml_str(&adapt, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    assert_eq!(m.sender.encoder.degradation, rtclab_media::encoder::Degradation::MaintainFramerate);
    assert_eq!(m.sender.encoder.max_frame_drop_interval, Some(TimeDelta::from_secs(2)));
    let off = format!(
        "{MEDIA}media = {{ encoder_model = \"libvpx_vp8\", max_frame_drop_interval = \"0s\" }}\n"
    );
    let s = from_toml_str(&off, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    assert_eq!(m.sender.encoder.max_frame_drop_interval, None);
    let wait = format!("{MEDIA}media = {{ frame_wait = \"3s\" }}\n");
    let s = from_toml_str(&wait, Path::new(".")).unwrap();
    let FlowKindSpec::Media(m) = &s.flows[0].kind else { panic!("media") };
    assert_eq!(m.frame_wait, Some(TimeDelta::from_secs(3)));
}

#[test]
fn ecn_is_a_tcp_setting() {
    let s = from_toml_str(&format!("{BASE}ecn = true\n"), Path::new(".")).unwrap();
    assert!(matches!(s.flows[0].kind, FlowKindSpec::Tcp { ecn: true, .. }));
    let e = err(&BASE.replace("kind = \"tcp\"", "kind = \"media\"\necn = true"));
    assert_eq!(e.path, "flows[0].ecn");
    assert!(e.message.contains("tcp flows only"), "{e}");
}

#[test]
fn traces_must_be_regular_files() {
    for path in ["/dev/zero", "/tmp"] {
        let text = BASE.replace(
            "capacity = \"10Mbps\"",
            &format!("capacity = {{ trace = \"{path}\", format = \"mahimahi\" }}"),
        );
        let e = err(&text);
        assert_eq!(e.path, "link.capacity.trace");
        assert!(e.message.contains("not a regular file"), "{e}");
    }
}

#[test]
fn serde_messages_are_in_the_scenarios_words() {
    let base = "name = \"x\"\nduration = \"5s\"\n[link]\ncapacity = \"10Mbps\"\n[[flows]]\nkind = \"tcp\"\ncc = \"cubic\"\nrtt = \"40ms\"\n";
    let e = err(&format!("{base}count = -1\n"));
    assert_eq!(e.path, "flows[0].count");
    assert_eq!(e.message, "must be a whole number from 1 to 10000, got -1");
    let e = err(&format!("{base}ecn = \"yes\"\n"));
    assert_eq!(e.message, "must be true or false, got \"yes\"");
    let e = err(&base.replace("capacity = \"10Mbps\"\n", ""));
    assert_eq!((e.path.as_str(), e.message.as_str()), ("link.capacity", "is required but missing"));
    let e = err(&format!("{base}colour = 3\n"));
    assert!(e.message.starts_with("unknown key `colour`; accepted keys: `name`"), "{}", e.message);
    let e = err(&base.replace("[[flows]]", "[flows]"));
    assert_eq!(e.message, "must be a list, got a table");
}

#[test]
fn toml_syntax_errors_name_the_line_and_the_key() {
    let base = "name = \"x\"\nduration = \"5s\"\n[link]\ncapacity = \"10Mbps\"\n[[flows]]\nkind = \"tcp\"\ncc = \"cubic\"\nrtt = \"40ms\"\n";
    let e = err(&format!("{base}rtt = \"50ms\"\n"));
    assert_eq!(e.path, "line 9");
    assert!(e.message.contains("duplicate key `rtt`"), "{}", e.message);
    let e = err(&base.replace("cc = \"cubic\"", "cc = cubic"));
    assert_eq!(e.path, "line 7");
    assert!(e.message.contains("strings are quoted in TOML: cc = \"cubic\""), "{}", e.message);
}

#[test]
fn tcp_video_is_checked_and_takes_the_zhuge_defaults() {
    let s = from_toml_str(&format!("{BASE}video = {{ fps = 30 }}\n"), Path::new(".")).unwrap();
    let FlowKindSpec::Tcp { video: Some(v), .. } = &s.flows[0].kind else { panic!("no video") };
    assert_eq!(v.fps, 30.0);
    assert_eq!(v.send_buffer_bytes, 5 << 20, "the released simulator's SndBufSize");
    assert_eq!(v.interval, rtclab_core::TimeDelta::from_millis(40));
    for (extra, path, words) in [
        ("video = { fps = 0 }", "flows[0].video.fps", "(0, 240]"),
        ("video = { fps = 25, colour = 1 }", "colour", "colour"),
        (
            "video = { min_bitrate = \"5Mbps\", max_bitrate = \"1Mbps\" }",
            "flows[0].video.min_bitrate",
            "max_bitrate",
        ),
        ("video = { send_buffer = \"1KB\" }", "flows[0].video.send_buffer", "one packet"),
        ("video = { interval = \"0s\" }", "flows[0].video.interval", "1 ms to 10 s"),
        ("video = {}\nrate = \"1Mbps\"", "flows[0].video", "leave `rate` and `size` out"),
    ] {
        let e = err(&format!("{BASE}{extra}\n"));
        assert!(e.to_string().contains(path) && e.to_string().contains(words), "{extra}: {e}");
    }
    let media = BASE.replace("kind = \"tcp\"", "kind = \"media\"");
    let e = err(&format!("{media}video = {{}}\n"));
    assert_eq!(e.path, "flows[0].video", "{e}");
}

#[test]
fn messages_name_what_the_user_wrote_or_did_not_write() {
    let flow = "[[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\n";
    // The default limit on a slow link: the key the user never wrote is not blamed.
    let e = err(&format!("duration = \"5s\"\n[link]\ncapacity = \"100kbps\"\n{flow}"));
    assert_eq!(e.path, "link.queue");
    assert!(
        e.message.contains("the default queue limit (1 BDP") && e.message.contains("set a limit"),
        "{e}"
    );
    // ... while a limit the user wrote is named as theirs.
    let e = err(&format!(
        "duration = \"5s\"\n[link]\ncapacity = \"100kbps\"\nqueue = {{ limit = \"1bdp\" }}\n{flow}"
    ));
    assert_eq!(e.path, "link.queue.limit");
    // A misspelt queue key is unknown, whatever its value.
    let e = err(&format!(
        "duration = \"5s\"\n[link]\ncapacity = \"10Mbps\"\nqueue = {{ limt = \"100pkt\" }}\n{flow}"
    ));
    assert_eq!(e.path, "link.queue.limt");
    assert!(e.message.starts_with("unknown key `limt`; accepted: kind, limit, bdp_rtt"), "{e}");
    let e = err(&format!(
        "duration = \"5s\"\n[link]\ncapacity = \"10Mbps\"\nqueue = {{ kind = \"codel\", targte = \"5ms\" }}\n{flow}"
    ));
    assert!(e.message.contains("unknown key `targte`") && e.message.contains("target_ms"), "{e}");
    // A seed beyond TOML's integers names the key and the way to give it.
    let e = err(&format!(
        "duration = \"5s\"\nseed = 18446744073709551616\n[link]\ncapacity = \"10Mbps\"\n{flow}"
    ));
    assert!(e.message.contains("`seed`") && e.message.contains("--seed"), "{e}");
    // A huge count is refused before its flows are built.
    let e =
        err(&format!("duration = \"5s\"\n[link]\ncapacity = \"10Mbps\"\n{flow}count = 1000000\n"));
    assert_eq!(e.path, "flows[0].count");
    assert!(e.message.contains("above the limit of 10000"), "{e}");
}
