//! Per-chunk QoE of adaptive-bitrate streaming, as Pensieve (Mao et al., SIGCOMM'17, §5.1)
//! and PiTree (Meng et al., MM'19, `get_reward.py`) define it.
//!
//! - linear: `r/1000 − 4.3·rebuffer − |r − r_prev|/1000` (r in kbit/s, rebuffer in seconds);
//! - log: `ln(r/r_max) − 2.66·rebuffer − |ln(r/r_max) − ln(r_prev/r_max)|`;
//! - HD: rewards `[1, 2, 3, 12, 15, 20]` per bitrate index, rebuffer penalty 8, smoothness
//!   `|hd(r) − hd(r_prev)|`.

/// Which QoE a reward is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qoe {
    Linear,
    Log,
    Hd,
}

/// PiTree's HD reward per bitrate index.
pub const HD_REWARD: [f64; 6] = [1.0, 2.0, 3.0, 12.0, 15.0, 20.0];

impl Qoe {
    pub fn parse(name: &str) -> Result<Qoe, String> {
        match name {
            "lin" | "linear" => Ok(Qoe::Linear),
            "log" => Ok(Qoe::Log),
            "hd" => Ok(Qoe::Hd),
            other => Err(format!("unknown QoE {other:?} (expected \"lin\", \"log\" or \"hd\")")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Qoe::Linear => "lin",
            Qoe::Log => "log",
            Qoe::Hd => "hd",
        }
    }

    /// The rebuffering penalty per second.
    pub fn rebuffer_penalty(self) -> f64 {
        match self {
            Qoe::Linear => 4.3,
            Qoe::Log => 2.66,
            Qoe::Hd => 8.0,
        }
    }

    /// The reward of one chunk at bitrate index `q` after `prev`, with `rebuf_s` seconds of
    /// rebuffering; `bitrates` in kbit/s.
    pub fn reward(self, bitrates: &[f64], q: usize, prev: usize, rebuf_s: f64) -> f64 {
        let pen = self.rebuffer_penalty() * rebuf_s;
        match self {
            Qoe::Linear => {
                bitrates[q] / 1000.0 - pen - (bitrates[q] - bitrates[prev]).abs() / 1000.0
            }
            Qoe::Log => {
                let top = bitrates[bitrates.len() - 1];
                let (a, b) = ((bitrates[q] / top).ln(), (bitrates[prev] / top).ln());
                a - pen - (a - b).abs()
            }
            Qoe::Hd => {
                let hd = |i: usize| HD_REWARD[i.min(HD_REWARD.len() - 1)];
                hd(q) - pen - (hd(q) - hd(prev)).abs()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const B: [f64; 6] = [300.0, 750.0, 1200.0, 1850.0, 2850.0, 4300.0];

    #[test]
    fn hand_computed_rewards() {
        // 4300 after 1850 with 0.5 s rebuffering: 4.3 - 2.15 - 2.45.
        assert!((Qoe::Linear.reward(&B, 5, 3, 0.5) - (4.3 - 2.15 - 2.45)).abs() < 1e-12);
        // log at the top bitrate with no switch and no stall is 0.
        assert_eq!(Qoe::Log.reward(&B, 5, 5, 0.0), 0.0);
        // HD: 12 after 20, 1 s stall: 12 - 8 - 8.
        assert_eq!(Qoe::Hd.reward(&B, 3, 5, 1.0), -4.0);
        assert!(Qoe::parse("nope").unwrap_err().contains("nope"));
    }
}
