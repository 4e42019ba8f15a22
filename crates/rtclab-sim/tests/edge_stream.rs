//! The Hairpin chapter's edge-streaming flows in the simulator: the acceptance check of spec
//! `afr-hairpin-confucius.md` §3.10 and bad input.

mod common;
use common::*;

fn scenario(kind: &str, params: &str) -> String {
    format!(
        r#"duration = "30s"
[link]
capacity = "1Gbps"
loss = {{ model = "iid", rate = 0.2 }}
[[flows]]
kind = "{kind}"
rtt = "20ms"
params = {{ frame_packets = 25, deadline_ms = 100{params} }}
"#
    )
}

fn metrics(kind: &str, params: &str, seed: u64) -> serde_json::Value {
    let (out, _) = run(parse(&scenario(kind, params)), seed);
    out.summary["flows"][0]["metrics"].clone()
}

/// Bernoulli 20 % loss, RTT 20 ms, deadline 100 ms, 25-packet frames: Hairpin misses fewer
/// deadlines than retransmission alone, at a bandwidth cost well below sending FEC for the
/// whole loss up front (a fixed 100 % redundancy: what WebRTC's table reaches at this loss).
#[test]
fn hairpin_beats_retransmission_on_a_lossy_edge_path() {
    let mut sum = [0.0; 6];
    for seed in 1..=2 {
        let h = metrics("edge_hairpin", "", seed);
        let r = metrics("edge_rtx", "", seed);
        let f = metrics("edge_fixed", ", beta = 1.0", seed);
        for (i, (m, k)) in
            [(&h, "dmr"), (&h, "bwc"), (&r, "dmr"), (&r, "bwc"), (&f, "dmr"), (&f, "bwc")]
                .into_iter()
                .enumerate()
        {
            sum[i] += m[k].as_f64().unwrap() / 2.0;
        }
        assert!(h["frames_counted"].as_f64().unwrap() > 1700.0);
    }
    let [h_dmr, h_bwc, r_dmr, r_bwc, f_dmr, f_bwc] = sum;
    println!("hairpin DMR {h_dmr:.5} BWC {h_bwc:.3}; rtx DMR {r_dmr:.5} BWC {r_bwc:.3}; fixed 100 % DMR {f_dmr:.5} BWC {f_bwc:.3}");
    assert!(h_dmr < r_dmr, "hairpin {h_dmr} vs rtx {r_dmr}");
    assert!(r_dmr > 0.005, "rtx alone should miss deadlines at 20 % loss: {r_dmr}");
    // Retransmission resends the lost share: p / (1 − p) = 0.25 of the data.
    assert!((r_bwc - 0.25).abs() < 0.03, "{r_bwc}");
    assert!(h_bwc < 0.5 * f_bwc, "hairpin {h_bwc} vs fixed 100 % {f_bwc}");
}

#[test]
fn bad_edge_stream_parameters_are_named() {
    let e = |t: String| rtclab_scenario::from_toml_str(&t, &builtin_dir()).unwrap_err();
    let x = e(scenario("edge_hairpin", "").replace("deadline_ms = 100", "deadline_ms = 10"));
    assert!(x.message.contains("shorter than one frame interval"), "{x}");
    let x = e(scenario("edge_fixed", ", beta = 7"));
    assert_eq!(x.path, "flows[0].params.beta");
    let x = e(scenario("edge_rtx", ", beta = 0.5"));
    assert!(x.message.contains("beta"), "{x}");
}

/// `conditions`: per-16 ms RTT and loss replayed from a trace (the Hairpin chapter's session
/// format) — loss only forward, delay rtt/2 each way, every interval in force.
#[test]
fn replayed_conditions_set_delay_and_loss_per_interval() {
    let dir = std::env::temp_dir().join(format!("rtclab-conditions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 1 s at RTT 20 ms without loss, then 1 s at RTT 60 ms with 30 % loss (62.5 lines each).
    let mut text = String::from("# test session\n");
    for i in 0..125 {
        let (rtt, loss) = if i < 63 { (20.0, 0.0) } else { (60.0, 0.3) };
        text += &format!("10.00Mbps {rtt:.1}ms {loss}\n");
    }
    std::fs::write(dir.join("s.tr"), &text).unwrap();
    let toml = r#"duration = "20s"
[link]
capacity = "1Gbps"
queue = { limit = "1000pkt" }
conditions = { trace = "s.tr", format = "hairpin" }
[[flows]]
kind = "cbr"
rate = "2Mbps"
rtt = "0.1ms"
"#;
    let s = rtclab_scenario::from_toml_str(toml, &dir).unwrap();
    let (out, _) = run(s, 3);
    let f = &out.summary["flows"][0];
    // Half the time at 30 % loss: 15 % of the packets lost, all as random loss.
    let loss = f["loss_ratio"].as_f64().unwrap();
    assert!((loss - 0.15).abs() < 0.02, "{loss}");
    assert_eq!(f["drops"]["queue_overflow"], 0);
    // One-way delay: 10 ms half the time, 30 ms the other half (+ 0.05 ms access).
    let owd = &f["one_way_delay_ms"];
    let (p25, p75) = (owd["p25"].as_f64().unwrap(), owd["p75"].as_f64().unwrap());
    assert!((p25 - 10.05).abs() < 0.3 && (p75 - 30.05).abs() < 0.5, "{owd}");
    // Bad input: a malformed line (file and line named), conditions on a reverse link.
    std::fs::write(dir.join("bad.tr"), "10Mbps 20ms 0\n10Mbps 20 0.1\n").unwrap();
    let e = rtclab_scenario::from_toml_str(&toml.replace("s.tr", "bad.tr"), &dir).unwrap_err();
    assert_eq!(e.path, "link.conditions.trace");
    assert!(e.message.contains("bad.tr:2:"), "{e}");
    let rev = toml.replace("[[flows]]", "[reverse_link]\ncapacity = \"1Gbps\"\nconditions = { trace = \"s.tr\", format = \"hairpin\" }\n[[flows]]");
    let e = rtclab_scenario::from_toml_str(&rev, &dir).unwrap_err();
    assert_eq!(e.path, "reverse_link.conditions");
    std::fs::remove_dir_all(&dir).ok();
}

/// The chapter's GCC integration (`gcc = true`): GCC finds the link from a 300 kbit/s start
/// (its probes go out as padding), the encoder gets half the target, the frames follow the
/// target, the queue stays short and the deadline is met on a clean path; with the link cut to
/// a third mid-run, the target follows it down.
#[test]
fn gcc_sets_the_edge_encoder_rate_from_the_link() {
    let toml = |capacity: &str| {
        format!(
            r#"duration = "40s"
[link]
capacity = {capacity}
queue = {{ limit = "1000pkt" }}
[[flows]]
kind = "edge_hairpin"
rtt = "20ms"
params = {{ gcc = true, deadline_ms = 100 }}
"#
        )
    };
    let (out, _) = run(parse(&toml("\"15Mbps\"")), 1);
    let m = &out.summary["flows"][0]["metrics"];
    let f = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k}: {m}"));
    println!("{m}");
    let target = f("cc_target_mbps");
    assert!((6.0..=16.5).contains(&target), "target {target} Mbit/s on a 15 Mbit/s link");
    // The encoder gets half the target (averaged over the ramp-up, so somewhat less).
    let enc = f("encoder_mbps_mean");
    assert!(enc > 2.0 && enc < 0.5 * 16.5, "encoder {enc}");
    assert!(f("padding_packets") > 0.0 && f("padding_packets") == f("padding_packets_received"));
    assert!(f("dmr") < 0.005, "{}", f("dmr"));
    let q = out.summary["link"]["queuing_delay_ms"]["p99"].as_f64().unwrap();
    assert!(q < 60.0, "queue p99 {q} ms");
    // Capacity falls from 15 to 5 Mbit/s at 20 s: the target ends below the new capacity.
    let (out, _) = run(
        parse(&toml(
            r#"{ schedule = [{ at = "0s", rate = "15Mbps" }, { at = "20s", rate = "5Mbps" }] }"#,
        )),
        1,
    );
    let m = &out.summary["flows"][0]["metrics"];
    let t2 = m["cc_target_mbps"].as_f64().unwrap();
    assert!(t2 < 5.5 && t2 > 1.0, "target after the cut {t2}: {m}");
}

#[test]
fn gcc_start_above_its_maximum_is_refused() {
    let t = scenario("edge_hairpin", ", gcc = true, gcc_start_mbps = 40");
    let x = rtclab_scenario::from_toml_str(&t, &builtin_dir()).unwrap_err();
    assert!(x.message.contains("gcc_start_mbps 40 is above gcc_max_mbps 30"), "{x}");
}
