//! Runs a scenario file and prints the summary and the events/packets rate:
//! `cargo run --release -p rtclab-sim --example run_toml -- scenario.toml [seed]`.
#![allow(clippy::disallowed_methods)] // the example measures its own wall time

use rtclab_sim::Simulation;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = Path::new(&args[1]);
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let text = std::fs::read_to_string(path).expect("read scenario");
    let scenario = rtclab_scenario::from_toml_str(&text, path.parent().unwrap_or(Path::new(".")))
        .unwrap_or_else(|e| panic!("{e}"));
    let t0 = std::time::Instant::now();
    let mut sim = Simulation::new(scenario, seed);
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let out = sim.finish();
    if std::env::var("RTCLAB_PRINT_FLOWS").is_ok() {
        let c = &out.flows;
        println!("{}", c.names.join(" "));
        for r in 0..c.rows() {
            let row: Vec<String> = c.data.iter().map(|col| format!("{:.2}", col[r])).collect();
            println!("{}", row.join(" "));
        }
    } else {
        println!("{}", serde_json::to_string_pretty(&out.summary).unwrap());
    }
    let st = out.stats;
    eprintln!(
        "wall {wall:.3}s events {} ({:.0}/s) delivered {} ({:.0}/s) acks {}",
        st.events,
        st.events as f64 / wall,
        st.delivered_packets,
        st.delivered_packets as f64 / wall,
        st.delivered_acks
    );
}
