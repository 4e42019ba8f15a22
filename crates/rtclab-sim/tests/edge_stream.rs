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
