//! Runs a scenario file in the emulator and prints its summary (no Python needed):
//! `rtclab-emu SCENARIO.toml [SEED]`. Exit status 2 for bad input or no privileges.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: rtclab-emu SCENARIO.toml [SEED]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let base = std::path::Path::new(path).parent().unwrap_or(std::path::Path::new("."));
    let s = rtclab_scenario::from_toml_str(&text, base).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let seed = args.get(2).and_then(|x| x.parse().ok()).unwrap_or(1);
    let emu = rtclab_emu::Emulation::start(s, seed, None).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    match emu.finish() {
        Ok(v) => println!("{}", serde_json::to_string_pretty(&v.summary).expect("json")),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
