//! Golden scenarios: the key numbers of each built-in scenario's summary, snapshot-tested.
//! A deliberate behaviour change is re-blessed with `RTCLAB_BLESS=1 cargo test --release
//! -p rtclab-sim --test golden`, and the diff of `tests/golden/*.json` is reviewed.
mod common;
use common::*;
use serde_json::{json, Value};
use std::path::Path;

const SCENARIOS: [&str; 11] = [
    "default",
    "cubic-alone",
    "two-cubic",
    "newreno-vs-cubic",
    "rtt-unfairness",
    "lte-trace",
    "wifi-trace-lossy",
    "gcc-staircase",
    "gcc-paper-staircase",
    "gcc-vs-cubic",
    "gcc-paper-vs-cubic",
];

/// 4 significant digits: robust to printing, strict enough to catch behaviour changes.
fn r(v: &Value) -> Value {
    match v.as_f64() {
        Some(x) if x != 0.0 => {
            let d = 3 - x.abs().log10().floor() as i32;
            let m = 10f64.powi(d);
            json!((x * m).round() / m)
        }
        _ => v.clone(),
    }
}

fn key_numbers(s: &Value) -> Value {
    let flows: Vec<Value> = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            json!({
                "name": f["name"],
                "throughput_mbps": r(&f["throughput_mbps"]),
                "goodput_mbps": r(&f["goodput_mbps"]),
                "share": r(&f["share"]),
                "loss_ratio": r(&f["loss_ratio"]),
                "queuing_delay_ms_p50": r(&f["queuing_delay_ms"]["p50"]),
                "queuing_delay_ms_p99": r(&f["queuing_delay_ms"]["p99"]),
                "retransmits": f["retransmits"],
                "timeouts": f["timeouts"],
                "frame_delay_ms_p50": r(&f["media"]["frame_delay_ms"]["p50"]),
                "stalls": f["media"]["stalls"],
            })
        })
        .collect();
    json!({
        "utilization": r(&s["link"]["utilization"]),
        "loss_ratio": r(&s["link"]["loss_ratio"]),
        "jain": r(&s["fairness"]["jain"]),
        "drops": s["link"]["drops"],
        "flows": flows,
    })
}

#[test]
fn builtin_scenarios_match_their_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var("RTCLAB_BLESS").is_ok();
    let mut failures = Vec::new();
    for name in SCENARIOS {
        let (out, _) = run(builtin(name), 1);
        let got = key_numbers(&out.summary);
        let path = dir.join(format!("{name}.json"));
        if bless {
            std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
            continue;
        }
        let want: Value = serde_json::from_str(
            &std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("missing {path:?}; run with RTCLAB_BLESS=1")),
        )
        .unwrap();
        if got != want {
            failures.push(format!(
                "{name}:\n  want {}\n  got  {}",
                serde_json::to_string(&want).unwrap(),
                serde_json::to_string(&got).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "golden snapshots differ:\n{}", failures.join("\n"));
}
