//! Random loss: independent (Bernoulli) or Gilbert-Elliott two-state bursts.
//!
//! Gilbert-Elliott (Gilbert 1960, Elliott 1963): before each packet the chain moves
//! good->bad with probability `p_good_to_bad` and bad->good with `p_bad_to_good`; the packet
//! is then lost with `loss_in_good` or `loss_in_bad`. Mean loss =
//! (r*loss_good + p*loss_bad)/(p + r) with p = p_good_to_bad, r = p_bad_to_good.

use crate::element::{Dropped, ElementOutput, NetElement};
use crate::qdisc::DropReason;
use rtclab_core::{Direction, Packet, RngStream, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    Iid { rate: f64 },
    GilbertElliott { p_good_to_bad: f64, p_bad_to_good: f64, loss_in_good: f64, loss_in_bad: f64 },
}

impl LossModel {
    /// The long-run loss probability.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::Iid { rate } => rate,
            LossModel::GilbertElliott {
                p_good_to_bad: p,
                p_bad_to_good: r,
                loss_in_good,
                loss_in_bad,
            } => {
                if p + r == 0.0 {
                    loss_in_good
                } else {
                    (r * loss_in_good + p * loss_in_bad) / (p + r)
                }
            }
        }
    }
}

pub struct LossElement {
    model: LossModel,
    rng: RngStream,
    bad: bool,
}

impl LossElement {
    pub fn new(model: LossModel, rng: RngStream) -> Self {
        LossElement { model, rng, bad: false }
    }

    /// Decides the fate of one packet: `Some(reason)` if it is lost.
    pub fn decide(&mut self) -> Option<DropReason> {
        match self.model {
            LossModel::Iid { rate } => self.rng.bernoulli(rate).then_some(DropReason::RandomLoss),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                let flip = if self.bad { p_bad_to_good } else { p_good_to_bad };
                if self.rng.bernoulli(flip) {
                    self.bad = !self.bad;
                }
                let p = if self.bad { loss_in_bad } else { loss_in_good };
                self.rng.bernoulli(p).then_some(DropReason::BurstLoss)
            }
        }
    }
}

impl NetElement for LossElement {
    #[inline]
    fn handle_packet(&mut self, _now: Time, _dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        match self.decide() {
            Some(reason) => out.drops.push(Dropped { pkt, reason }),
            None => out.packets.push(pkt),
        }
    }
    fn handle_timeout(&mut self, _now: Time, _out: &mut ElementOutput) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate_of(model: LossModel, n: usize) -> (f64, f64) {
        let mut e = LossElement::new(model, RngStream::from_seed(11));
        let mut lost = 0usize;
        let mut bursts = 0usize;
        let mut prev = false;
        for _ in 0..n {
            let l = e.decide().is_some();
            lost += l as usize;
            bursts += (l && !prev) as usize;
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn iid_rate_matches() {
        let (r, _) = rate_of(LossModel::Iid { rate: 0.02 }, 200_000);
        assert!((r - 0.02).abs() < 0.002, "{r}");
    }

    #[test]
    fn gilbert_elliott_mean_and_burst_length() {
        let m = LossModel::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.25,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        };
        let (r, burst) = rate_of(m, 400_000);
        assert!((r - m.mean_loss()).abs() < 0.004, "{r} vs {}", m.mean_loss());
        // Mean sojourn in the bad state is 1/r = 4 packets.
        assert!((burst - 4.0).abs() < 0.4, "{burst}");
    }
}
