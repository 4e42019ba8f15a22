//! A wireless access point as a link (`wifi = { ... }`): A-MPDU aggregation, the MAC queue,
//! contention from other stations, and Zhuge seeing the aggregates. The model is in
//! docs/algorithms/wifi_ap.md.
mod common;
use common::*;

fn scenario(wifi: &str, flows: &str, secs: u32) -> String {
    format!(
        r#"duration = "{secs}s"
[[links]]
name = "wan"
capacity = "1Gbps"
delay = "9ms"
[[links]]
name = "ap"
capacity = "65Mbps"
delay = "1ms"
queue = {{ limit = "250pkt" }}
wifi = {wifi}
{flows}
[metrics]
warmup = "5s"
"#
    )
}

const BULK: &str = r#"[[flows]]
kind = "tcp"
cc = "cubic"
path = ["wan", "ap"]
"#;

fn wifi_of(o: &rtclab_sim::RunOutput) -> &serde_json::Value {
    &o.summary["links"].as_array().unwrap().iter().find(|l| l["name"] == "ap").unwrap()["wifi"]
}

fn tput(o: &rtclab_sim::RunOutput, flow: usize) -> f64 {
    o.summary["flows"][flow]["throughput_mbps"].as_f64().unwrap()
}

/// A bulk flow alone on a 65 Mbit/s PHY: aggregates of tens of packets, throughput below
/// the PHY rate by the per-PPDU and per-MPDU overheads only (about 94 %), no collisions.
#[test]
fn a_lone_bulk_flow_fills_aggregates_and_gets_most_of_the_phy_rate() {
    let (o, _) = run(parse(&scenario("{}", BULK, 20)), 1);
    let w = wifi_of(&o);
    let agg = w["mean_aggregate_packets"].as_f64().unwrap();
    let t = tput(&o, 0);
    println!("throughput {t:.1} Mbit/s, mean aggregate {agg:.1} packets, wifi {w}");
    assert!(agg > 10.0, "{agg}");
    assert!(t > 50.0 && t < 62.0, "{t}");
    assert_eq!(w["collisions"], 0);
    assert_eq!(w["other_txops"], 0);
}

/// Saturated stations joining the channel take airtime: with 4 of them the AP gets about a
/// fifth of the transmissions and the flow's throughput falls accordingly; the queue (and
/// so the flow's delay) grows while they contend.
#[test]
fn contending_stations_take_their_share_of_the_channel() {
    let wifi = r#"{ stations = 4, stations_start_s = 10 }"#;
    let (o, _) = run(parse(&scenario(wifi, BULK, 20)), 1);
    let w = wifi_of(&o);
    let t = col(&o.flows, "time_s");
    let r = col(&o.flows, "throughput_mbps");
    let mean = |a: f64, b: f64| {
        let v: Vec<f64> = (0..t.len()).filter(|&i| t[i] >= a && t[i] < b).map(|i| r[i]).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (before, during) = (mean(6.0, 10.0), mean(12.0, 20.0));
    let share = w["ap_txops"].as_f64().unwrap()
        / (w["ap_txops"].as_f64().unwrap() + w["other_txops"].as_f64().unwrap());
    println!("before {before:.1} Mbit/s, during {during:.1} Mbit/s, wifi {w}");
    assert!(before > 50.0, "{before}");
    assert!(during < 0.35 * before, "{during} vs {before}");
    assert!(w["collisions"].as_u64().unwrap() > 0);
    // Over the run the AP had the channel alone for 10 s and shared it 1:4 for 10 s.
    assert!(share > 0.3 && share < 0.7, "{share}");
}

/// Same scenario and seed, same result; another seed draws other backoffs.
#[test]
fn the_mac_is_deterministic_per_seed() {
    let text = scenario("{ stations = 3 }", BULK, 8);
    let (a, _) = run(parse(&text), 5);
    let (b, _) = run(parse(&text), 5);
    let (c, _) = run(parse(&text), 6);
    assert_eq!(wifi_of(&a), wifi_of(&b));
    assert_eq!(a.summary["flows"], b.summary["flows"]);
    assert_ne!(wifi_of(&a), wifi_of(&c));
}

/// Conservation with collisions and retry-limit drops: every packet is delivered, dropped
/// with a reason, or still held (the MAC queue and the PPDU on the air count as held).
#[test]
fn packets_are_conserved_through_retries_and_drops() {
    let wifi = r#"{ stations = 30, cw_min = 3, cw_max = 7, retry_limit = 2 }"#;
    let flows =
        format!("{BULK}[[flows]]\nkind = \"cbr\"\nrate = \"5Mbps\"\npath = [\"wan\", \"ap\"]\n");
    let (o, sim) = run(parse(&scenario(wifi, &flows, 10)), 2);
    let st = o.stats;
    let (held, held_acks) = sim.packets_in_network();
    assert_eq!(st.sent_packets, st.delivered_packets + st.dropped_packets + held);
    assert_eq!(st.sent_acks, st.delivered_acks + st.dropped_acks + held_acks);
    let ap = o.summary["links"].as_array().unwrap().iter().find(|l| l["name"] == "ap").unwrap();
    let retry = ap["drops"]["retry_limit"].as_u64().unwrap();
    println!("retry drops {retry}, wifi {}", ap["wifi"]);
    // The link's drops count the measurement window, the MAC's counter the whole run.
    assert!(retry > 0);
    assert!(retry <= ap["wifi"]["retry_drops"].as_u64().unwrap());
}

/// Bad input: a wifi link needs a PHY rate, and its parameters are checked by name and range.
#[test]
fn wifi_errors_name_the_problem() {
    let bad = |wifi: &str| {
        let text = scenario(wifi, BULK, 5);
        rtclab_scenario::from_toml_str(&text, &builtin_dir()).unwrap_err().to_string()
    };
    let e = bad("{ statons = 3 }");
    assert!(e.contains("links[1].wifi.statons") && e.contains("stations"), "{e}");
    let e = bad("{ cw_min = 2000 }");
    assert!(e.contains("cw_min") && e.contains("0..=1023"), "{e}");
    let e = bad("{ cw_min = 63, cw_max = 15 }");
    assert!(e.contains("links[1].wifi") && e.contains("cw_max"), "{e}");
    let text = scenario("{}", BULK, 5).replace(
        "capacity = \"65Mbps\"",
        "capacity = { trace = \"traces/TMobile-LTE-short-30s.down\", format = \"mahimahi\" }",
    );
    let e = rtclab_scenario::from_toml_str(&text, &builtin_dir()).unwrap_err().to_string();
    assert!(e.contains("PHY rate"), "{e}");
}

const UPLINK_BULK: &str = r#"[[flows]]
kind = "tcp"
cc = "cubic"
path = ["wan", "ap"]
direction = "reverse"
"#;

fn hop<'a>(o: &'a rtclab_sim::RunOutput, dir: &str) -> &'a serde_json::Value {
    o.summary["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "ap" && l["direction"] == dir)
        .unwrap()
}

/// `uplink = true`: the reverse direction is a station on the channel. An uplink bulk flow
/// alone gets what a downlink one gets (the same PHY, aggregation and overheads); a downlink
/// and an uplink flow together split the channel about evenly (DCF gives every contender the
/// same chance), where the default free uplink leaves the downlink flow its whole rate. The
/// reverse direction's meter sees the station's departures.
#[test]
fn uplink_stations_contend_with_the_ap_for_the_channel() {
    let up = r#"{ uplink = true }"#;
    let (alone, _) = run(parse(&scenario(up, UPLINK_BULK, 20)), 1);
    let t_up = tput(&alone, 0);
    let w = wifi_of(&alone);
    println!("uplink alone {t_up:.1} Mbit/s, wifi {w}, reverse hop {}", hop(&alone, "reverse"));
    assert!(t_up > 50.0 && t_up < 62.0, "{t_up}");
    assert!(w["uplink_txops"].as_u64().unwrap() > 1000 && w["uplink_stations"] == 1, "{w}");
    let rev = hop(&alone, "reverse");
    assert!(rev["utilization"].as_f64().unwrap() > 0.75, "{rev}");
    assert!(rev["delivered_mbps"].as_f64().unwrap() > 50.0);

    let both = format!("{BULK}{UPLINK_BULK}");
    let (o, sim) = run(parse(&scenario(up, &both, 20)), 1);
    let (down, upl) = (tput(&o, 0), tput(&o, 1));
    let w = wifi_of(&o);
    println!("shared channel: down {down:.1}, up {upl:.1} Mbit/s, wifi {w}");
    // Two stations' worth of ACK streams and data share one channel.
    assert!(down + upl > 45.0 && down + upl < 62.0, "{down} + {upl}");
    assert!(down > 0.3 * (down + upl) && upl > 0.3 * (down + upl), "{down} vs {upl}");
    assert!(w["collisions"].as_u64().unwrap() > 0);
    // Both flows' feedback crosses the channel too: three stations (two flows' clients, one
    // of them sending ACKs, the other data) plus the AP.
    assert_eq!(w["uplink_stations"], 2);
    let st = o.stats;
    let (held, held_acks) = sim.packets_in_network();
    assert_eq!(st.sent_packets, st.delivered_packets + st.dropped_packets + held);
    assert_eq!(st.sent_acks, st.delivered_acks + st.dropped_acks + held_acks);

    // Without `uplink` the reverse direction is a link of its own (here a 65 Mbit/s
    // serializer): the flows meet only where one's ACKs queue behind the other's data.
    let text = scenario("{}", &both, 20)
        .replace("wifi = {}", "wifi = {}\nreverse = { capacity = \"65Mbps\" }");
    let (free, _) = run(parse(&text), 1);
    let (down_free, up_free) = (tput(&free, 0), tput(&free, 1));
    println!("separate uplink: down {down_free:.1}, up {up_free:.1} Mbit/s");
    assert!(down_free > 50.0, "{down_free}");
    assert!(down_free + up_free > down + upl + 10.0, "{down_free} + {up_free} vs {down} + {upl}");
}

/// A `reverse` bottleneck cannot go with uplink stations on the same link, and the station
/// queue's parameter is checked like the others.
#[test]
fn uplink_stations_refuse_a_reverse_bottleneck() {
    let text = scenario("{ uplink = true }", BULK, 5).replace(
        "wifi = { uplink = true }",
        "wifi = { uplink = true }\nreverse = { capacity = \"10Mbps\" }",
    );
    let e = rtclab_scenario::from_toml_str(&text, &builtin_dir()).unwrap_err().to_string();
    assert!(e.contains("links[1].reverse") && e.contains("uplink"), "{e}");
    let text = scenario("{ uplink = true, station_queue = 0 }", BULK, 5);
    let e = rtclab_scenario::from_toml_str(&text, &builtin_dir()).unwrap_err().to_string();
    assert!(e.contains("station_queue"), "{e}");
}
