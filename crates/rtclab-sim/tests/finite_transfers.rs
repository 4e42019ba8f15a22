//! Finite tcp transfers (`size`): web objects that end, with their completion time.
mod common;
use common::*;

fn scenario(size: &str, extra: &str) -> String {
    format!(
        r#"duration = "10s"
[link]
capacity = "20Mbps"
queue = {{ limit = "1bdp" }}
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
start = "1s"
size = "{size}"
{extra}
"#
    )
}

#[test]
fn a_sized_transfer_stops_and_reports_its_completion_time() {
    // 15 KB = 10 packets of 1500 B: within the initial window, one round trip plus the
    // serialization of ten packets (6 ms at 20 Mbit/s) and the last ACK's way back.
    let (o, _) = run(parse(&scenario("15KB", "")), 1);
    let f = &o.summary["flows"][0];
    let fct = f["completion_time_s"].as_f64().unwrap();
    println!("15 KB: {fct:.4} s, {} packets", f["packets_sent"]);
    assert!((0.040..0.060).contains(&fct), "{fct}");
    assert_eq!(f["packets_sent"].as_u64().unwrap(), 10);
    // 1 MB: slow start from 10 packets takes several round trips.
    let (o, _) = run(parse(&scenario("1MB", "")), 1);
    let f = &o.summary["flows"][0];
    let fct = f["completion_time_s"].as_f64().unwrap();
    let sent = f["packets_sent"].as_u64().unwrap();
    let retx = f["retransmits"].as_u64().unwrap();
    println!("1 MB: {fct:.3} s, {sent} packets, {retx} retransmitted");
    assert!(fct > 0.4 && fct < 2.0, "{fct}");
    assert_eq!(sent, 667 + retx);
    // A bulk flow never completes.
    let text = scenario("1MB", "").replace("size = \"1MB\"\n", "");
    let (o, _) = run(parse(&text), 1);
    assert!(o.summary["flows"][0]["completion_time_s"].is_null());
}

#[test]
fn size_is_for_tcp_flows_only() {
    let text = r#"duration = "5s"
[link]
capacity = "5Mbps"
[[flows]]
kind = "media"
rtt = "40ms"
size = "10KB"
"#;
    let e = rtclab_scenario::from_toml_str(text, &builtin_dir()).unwrap_err();
    assert!(e.message.contains("size"), "{e}");
    let e = rtclab_scenario::from_toml_str(&scenario("0B", ""), &builtin_dir()).unwrap_err();
    assert_eq!(e.path, "flows[0].size");
}
