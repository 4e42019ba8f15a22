//! Same scenario + same seed => bit-identical summary and time series.
mod common;
use common::*;

const NOISY: &str = r#"
duration = "20s"
[link]
capacity = { trace = "traces/office-wifi_0.pitree-trace", format = "bandwidth" }
queue = { limit = "60pkt" }
loss = { model = "gilbert_elliott", p_good_to_bad = 0.002, p_bad_to_good = 0.3 }
[reverse_link]
capacity = "5Mbps"
loss = { model = "iid", rate = 0.01 }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "30ms"
jitter = "3ms"
count = 2
[[flows]]
kind = "tcp"
cc = "reno"
rtt = "70ms"
delayed_ack = true
start = "2s"
[[flows]]
kind = "cbr"
rate = "1Mbps"
rtt = "20ms"
jitter = "5ms"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
jitter = "2ms"
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "60ms"
"#;

fn fingerprint(o: &rtclab_sim::RunOutput) -> (String, Vec<Vec<u64>>) {
    let cols = [&o.flows, &o.link, &o.fairness]
        .iter()
        .flat_map(|c| c.data.iter().map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>()))
        .collect();
    (serde_json::to_string(&o.summary).unwrap(), cols)
}

#[test]
fn same_seed_is_bit_identical() {
    let (a, _) = run(parse(NOISY), 7);
    let (b, _) = run(parse(NOISY), 7);
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_eq!(a.stats, b.stats);
    assert!(a.flows.rows() > 100);
}

#[test]
fn different_seed_changes_random_outcomes() {
    let (a, _) = run(parse(NOISY), 7);
    let (b, _) = run(parse(NOISY), 8);
    assert_ne!(a.summary["link"]["drops"], b.summary["link"]["drops"]);
}

#[test]
fn builtin_default_is_deterministic() {
    let (a, _) = run(builtin("default"), 1);
    let (b, _) = run(builtin("default"), 1);
    assert_eq!(fingerprint(&a), fingerprint(&b));
}
