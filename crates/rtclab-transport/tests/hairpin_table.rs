//! Our Hairpin solver against the published tables (hkust-spark/hairpin `model/`, golden data
//! shipped in `python/rtclab/data/hairpin/`) and the golden vectors of spec `afr-hairpin-confucius.md` §3.11.

use rtclab_transport::hairpin::Table;
use std::path::PathBuf;

fn solved(lambda: f64) -> Table {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    Table::solve(lambda, threads).unwrap()
}

/// §3.11: F = 25, cells "k/n" at L = 1, 2, 3, 4 for n = 1, 5, 25.
#[test]
fn golden_vectors_of_the_spec() {
    let rows: [(f64, f64, [[u8; 3]; 4]); 7] = [
        (1e-4, 0.01, [[2, 3, 5], [0, 0, 0], [0, 0, 0], [0, 0, 0]]),
        (1e-4, 0.05, [[4, 5, 9], [0, 0, 1], [0, 0, 0], [0, 0, 0]]),
        (1e-4, 0.10, [[5, 10, 14], [0, 1, 4], [0, 0, 0], [0, 0, 0]]),
        (1e-4, 0.20, [[5, 10, 22], [1, 3, 9], [0, 0, 0], [0, 0, 0]]),
        (1e-4, 0.30, [[5, 15, 50], [4, 5, 15], [0, 2, 0], [0, 0, 0]]),
        (1e-7, 0.10, [[5, 10, 19], [2, 2, 5], [0, 0, 0], [0, 0, 0]]),
        (1e-7, 0.30, [[5, 25, 50], [5, 10, 16], [3, 4, 0], [0, 1, 0]]),
    ];
    let (t4, t7) = (solved(1e-4), solved(1e-7));
    for (lambda, loss, expect) in rows {
        let t = if lambda == 1e-4 { &t4 } else { &t7 };
        for (l, row) in expect.iter().enumerate() {
            for (n, k) in [1, 5, 25].into_iter().zip(row) {
                assert_eq!(
                    t.get(loss, 25, l + 1, n).unwrap(),
                    *k,
                    "λ {lambda} α {loss} L {} n {n}",
                    l + 1
                );
            }
        }
    }
    // With opportunities to spare no FEC at all (L ≥ 5 at these loss rates).
    for n in 1..=55 {
        assert_eq!(t4.get(0.2, 25, 5, n).unwrap(), 0);
    }
}

/// A published table as shipped in the repository (`python/rtclab/data/hairpin`): never skipped.
fn published(name: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/rtclab/data/hairpin");
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
}

/// Every cell of both published tables, compared with ours.
#[test]
fn whole_tables_match_the_published_ones() {
    for (lambda, name) in [
        (1e-4, "beta-array-rtx1-cap0-coeff1e-04.bin"),
        (1e-7, "beta-array-rtx1-cap0-coeff1e-07.bin"),
    ] {
        let theirs = Table::from_bytes(lambda, published(name)).unwrap();
        let diff = solved(lambda).compare(&theirs);
        eprintln!(
            "λ {lambda}: {} of {} cells differ; first: {:?}",
            diff.mismatches, diff.cells, diff.first
        );
        assert_eq!(diff.mismatches, 0, "{:?}", diff.first);
    }
}
