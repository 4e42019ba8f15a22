//! The `flows` table written bin by bin as the run goes (`rtclab_harness::flow_table`) is the
//! table built from the meters after the run (what the emulator does), bit for bit.
mod common;
use common::*;

/// Flows that start and stop inside the run (rows only while they run), a media flow with its
/// frames, displays and the controller's own series, a loss model and a trace.
const MIXED: &str = r#"
duration = "12s"
[link]
capacity = { trace = "traces/office-wifi_0.pitree-trace", format = "bandwidth" }
queue = { limit = "60pkt" }
loss = { model = "gilbert_elliott", p_good_to_bad = 0.002, p_bad_to_good = 0.3 }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "30ms"
count = 3
[[flows]]
kind = "tcp"
cc = "reno"
rtt = "70ms"
start = "2.1s"
stop = "7.45s"
[[flows]]
kind = "cbr"
rate = "1Mbps"
rtt = "20ms"
start = "0.5s"
[[flows]]
kind = "media"
cc = "gcc"
rtt = "40ms"
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "60ms"
stop = "9s"
"#;

/// Many TCP flows: every media and controller column holds one value throughout.
const MANY_TCP: &str = r#"
duration = "6s"
[link]
capacity = "100Mbps"
queue = { limit = "1bdp" }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "20ms"
count = 200
"#;

fn bits(c: &rtclab_sim::Columns) -> Vec<(&'static str, Vec<u64>)> {
    c.names
        .iter()
        .zip(&c.data)
        .map(|(n, v)| (*n, v.iter().map(|x| x.to_bits()).collect()))
        .collect()
}

fn same_table(s: rtclab_scenario::Scenario, what: &str) {
    let (out, sim) = run(s, 3);
    let after = sim.flow_columns_after_the_run();
    assert!(out.flows.rows() > 0, "{what}: no rows");
    assert_eq!(out.flows.names, after.names, "{what}: column names");
    for ((name, got), (_, want)) in bits(&out.flows).into_iter().zip(bits(&after)) {
        assert_eq!(got.len(), want.len(), "{what}: column {name}'s length");
        if let Some(r) = (0..got.len()).find(|&r| got[r] != want[r]) {
            panic!(
                "{what}: column {name} row {r}: {} built as the run went, {} after it",
                f64::from_bits(got[r]),
                f64::from_bits(want[r])
            );
        }
    }
}

#[test]
fn table_built_as_bins_close_is_the_table_built_after_the_run() {
    same_table(parse(MIXED), "mixed flows");
    same_table(parse(MANY_TCP), "200 TCP flows");
    for name in ["gcc-vs-cubic", "wifi-trace-lossy", "default"] {
        same_table(builtin(name), name);
    }
}

/// Columns no flow has a source for are one shared vector per value, not one each.
#[test]
fn constant_columns_share_one_vector_per_value() {
    let (out, _) = run(parse(MANY_TCP), 1);
    let c = &out.flows;
    let at = |n: &str| c.names.iter().position(|x| *x == n).unwrap();
    let (fps, shown, delay, target) =
        (at("frame_rate"), at("rendered_fps"), at("frame_delay_ms_mean"), at("target_mbps"));
    assert!(std::sync::Arc::ptr_eq(&c.data[fps], &c.data[shown]), "the zero columns");
    assert!(std::sync::Arc::ptr_eq(&c.data[delay], &c.data[target]), "the NaN columns");
    assert!(c.data[fps].iter().all(|&x| x == 0.0) && c.data[delay].iter().all(|x| x.is_nan()));
    assert_eq!(c.data[fps].len(), c.rows());
}
