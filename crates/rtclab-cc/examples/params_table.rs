//! Prints the controller parameter tables for docs/scenario.md:
//! `cargo run -q -p rtclab-cc --example params_table`.
use rtclab_cc::gcc::params::{GCC_PAPER_PARAMS, GCC_PARAMS};
use rtclab_cc::gcc::{GccConfig, GccPaperConfig};
use rtclab_cc::params::{Kind, Param};

fn table<C>(title: &str, params: &[Param<C>], defaults: &C) {
    println!("{title}\n\n| name | default | accepted | meaning |\n|---|---|---|---|");
    for p in params {
        let v = p.get(defaults);
        let (d, range) = match p.kind {
            Kind::Bool => ((v != 0.0).to_string(), "true / false".to_string()),
            _ => (format!("{v}"), format!("{}..={}", p.min, p.max)),
        };
        println!("| `{}` | {d} | {range} | {} |", p.name, p.help);
    }
    println!();
}

fn main() {
    table("#### `gcc` parameters (`media.gcc`)", GCC_PARAMS, &GccConfig::default());
    table(
        "#### `gcc_paper` parameters (`media.gcc`)",
        GCC_PAPER_PARAMS,
        &GccPaperConfig::default(),
    );
    table(
        "#### `copa` parameters (`copa`, tcp flows; defaults of the paper variant)",
        rtclab_cc::copa::COPA_PARAMS,
        &rtclab_cc::CopaConfig::paper(),
    );
    table(
        "#### `qlibra` parameters (`qlibra`, tcp flows)",
        rtclab_cc::qlibra::QLIBRA_PARAMS,
        &rtclab_cc::QlibraConfig::default(),
    );
    table(
        "#### `zoom_like` parameters (`media.zoom_like`)",
        rtclab_cc::zoom_like::ZOOM_LIKE_PARAMS,
        &rtclab_cc::ZoomLikeConfig::default(),
    );
}
