#![allow(dead_code)]
use rtclab_scenario::Scenario;
use rtclab_sim::{RunOutput, Simulation};
use std::path::{Path, PathBuf};

pub fn builtin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rtclab/scenarios")
}

pub fn builtin(name: &str) -> Scenario {
    let dir = builtin_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
    rtclab_scenario::from_toml_str(&text, &dir).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn parse(text: &str) -> Scenario {
    rtclab_scenario::from_toml_str(text, &builtin_dir()).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(s: Scenario, seed: u64) -> (RunOutput, Simulation) {
    let mut sim = Simulation::new(s, seed);
    sim.run();
    (sim.finish(), sim)
}

pub fn col<'a>(c: &'a rtclab_sim::Columns, name: &str) -> &'a [f64] {
    c.column(name).unwrap_or_else(|| panic!("no column {name}"))
}
