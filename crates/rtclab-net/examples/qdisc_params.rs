//! Prints the parameter table of every registered queue discipline, then the `wifi` link's,
//! for docs/scenario.md: `cargo run -q -p rtclab-net --example qdisc_params`.
use rtclab_core::params::Kind;
use rtclab_net::queues::QDISCS;

fn main() {
    for k in QDISCS {
        let params = (k.params)();
        println!("- `{}`: {}", k.name, k.help);
        if params.is_empty() {
            println!("  No parameters.\n");
            continue;
        }
        println!("\n  | name | default | accepted | meaning |\n  |---|---|---|---|");
        for p in params {
            let (d, range) = match p.kind {
                Kind::Bool => ((p.default != 0.0).to_string(), "true / false".to_string()),
                _ => (format!("{}", p.default), format!("{}..={}", p.min, p.max)),
            };
            println!("  | `{}` | {d} | {range} | {} |", p.name, p.help);
        }
        println!();
    }
    println!("- `wifi`: a wireless access point's transmitter\n");
    println!("  | name | default | accepted | meaning |\n  |---|---|---|---|");
    for p in rtclab_net::wifi::params() {
        println!("  | `{}` | {} | {}..={} | {} |", p.name, p.default, p.min, p.max, p.help);
    }
}
