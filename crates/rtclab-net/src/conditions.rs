//! Path conditions replayed from a trace: one-way delay and packet loss that change every
//! sampling interval, as the Hairpin chapter replays its sessions (spec
//! `afr-hairpin-confucius.md` §3.8; released `scratch/fec-emulate.cc`, trace format of
//! hkust-spark/ns3-sparkrtc `examples/sample.tr`).
//!
//! Format `hairpin`: one line per interval (16 ms by default), `<bw>Mbps <rtt>ms <loss>`, e.g.
//! `14.35Mbps 27.8ms 0.22`; `#` comments and blank lines are skipped. The trace loops.
//! Each direction of the link gets a [`ConditionsLine`]: packets are delayed by rtt(t)/2 (never
//! reordered: a packet leaves no earlier than the one before it, as the released topology
//! limits how fast the delay may fall), and the forward direction loses each packet with
//! probability loss(t) (Bernoulli, as ns-3's `RateErrorModel` per line). The bandwidth column is
//! kept (`PathTrace::bandwidth_mbps`); the released set-up without congestion control does not
//! limit the rate.

use crate::delay::ReleaseFifo;
use crate::element::{Dropped, ElementOutput, NetElement};
use crate::qdisc::DropReason;
use crate::trace_file::TraceError;
use rtclab_core::{Direction, Packet, RngStream, Time, TimeDelta};
use std::sync::Arc;

/// One sample of the path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathSample {
    pub bandwidth_mbps: f64,
    pub rtt: TimeDelta,
    pub loss: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PathTrace {
    pub interval: TimeDelta,
    pub samples: Vec<PathSample>,
}

fn err(file: &str, line: Option<usize>, message: String) -> TraceError {
    TraceError { file: file.to_string(), line, message }
}

fn number(file: &str, n: usize, field: &str, text: &str, unit: &str) -> Result<f64, TraceError> {
    let Some(v) = text.strip_suffix(unit) else {
        return Err(err(file, Some(n), format!("{field} {text:?} should end in {unit:?}")));
    };
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(err(file, Some(n), format!("{field} {text:?} is not a non-negative number"))),
    }
}

impl PathTrace {
    /// Parses a trace in the `hairpin` format (`file` names it in messages).
    pub fn parse_hairpin(
        file: &str,
        text: &str,
        interval: TimeDelta,
    ) -> Result<PathTrace, TraceError> {
        if interval <= TimeDelta::ZERO {
            return Err(err(file, None, "the sampling interval must be positive".into()));
        }
        let mut samples = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let (n, line) = (i + 1, line.trim());
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let [bw, rtt, loss] = f[..] else {
                return Err(err(
                    file,
                    Some(n),
                    format!("expected \"<bw>Mbps <rtt>ms <loss>\", found {line:?}"),
                ));
            };
            let bandwidth_mbps = number(file, n, "bandwidth", bw, "Mbps")?;
            let rtt_ms = number(file, n, "rtt", rtt, "ms")?;
            let loss: f64 =
                loss.parse().ok().filter(|x: &f64| (0.0..=1.0).contains(x)).ok_or_else(|| {
                    err(file, Some(n), format!("loss {loss:?} is not a probability in [0, 1]"))
                })?;
            samples.push(PathSample {
                bandwidth_mbps,
                rtt: TimeDelta::from_secs_f64(rtt_ms / 1e3),
                loss,
            });
        }
        if samples.is_empty() {
            return Err(err(file, None, "the trace has no samples".into()));
        }
        Ok(PathTrace { interval, samples })
    }

    /// The sample in force at `t` (the trace loops).
    pub fn at(&self, t: Time) -> &PathSample {
        let i = (t.as_nanos() / self.interval.as_nanos() as u64) as usize % self.samples.len();
        &self.samples[i]
    }

    /// Length of one pass through the trace.
    pub fn period(&self) -> TimeDelta {
        TimeDelta::from_nanos(self.interval.as_nanos() * self.samples.len() as i64)
    }

    pub fn mean_loss(&self) -> f64 {
        self.samples.iter().map(|s| s.loss).sum::<f64>() / self.samples.len() as f64
    }
}

/// One direction of a link under replayed conditions: delay rtt(t)/2, and (forward) loss(t).
pub struct ConditionsLine {
    trace: Arc<PathTrace>,
    lossy: bool,
    rng: RngStream,
    fifo: ReleaseFifo,
}

impl ConditionsLine {
    pub fn new(trace: Arc<PathTrace>, lossy: bool, rng: RngStream) -> Self {
        ConditionsLine { trace, lossy, rng, fifo: ReleaseFifo::default() }
    }
}

impl NetElement for ConditionsLine {
    fn held_by_kind(&self) -> (u64, u64) {
        self.fifo.held_by_kind()
    }
    fn handle_packet(&mut self, now: Time, _dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        let s = *self.trace.at(now);
        if self.lossy && s.loss > 0.0 && self.rng.bernoulli(s.loss) {
            out.drops.push(Dropped { pkt, reason: DropReason::RandomLoss });
            return;
        }
        self.fifo.push(now + TimeDelta::from_nanos(s.rtt.as_nanos() / 2), pkt);
    }
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        self.fifo.release(now, out);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.fifo.next_release()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    const MS16: TimeDelta = TimeDelta::from_millis(16);

    #[test]
    fn parses_the_released_format_and_names_bad_lines() {
        let t = PathTrace::parse_hairpin(
            "s.tr",
            "# a session\n14.35Mbps 27.8ms 0.22\n\n3Mbps 10ms 0\n",
            MS16,
        )
        .unwrap();
        assert_eq!(t.samples.len(), 2);
        assert_eq!(t.samples[0].rtt, TimeDelta::from_micros(27_800));
        assert_eq!(t.at(Time::from_millis(17)).loss, 0.0);
        assert_eq!(t.at(Time::from_millis(33)).loss, 0.22); // loops
        assert_eq!(t.period(), TimeDelta::from_millis(32));
        let e = PathTrace::parse_hairpin("s.tr", "1Mbps 10ms\n", MS16).unwrap_err();
        assert_eq!(e.line, Some(1));
        let e =
            PathTrace::parse_hairpin("s.tr", "1Mbps 10ms 0.1\n1Mbps 10s 0.1\n", MS16).unwrap_err();
        assert!(e.to_string().starts_with("s.tr:2: rtt \"10s\""), "{e}");
        let e = PathTrace::parse_hairpin("s.tr", "1Mbps 10ms 1.5\n", MS16).unwrap_err();
        assert!(e.message.contains("probability"), "{e}");
        assert!(PathTrace::parse_hairpin("s.tr", "# nothing\n", MS16).is_err());
    }

    #[test]
    fn delay_follows_the_trace_without_reordering_and_loss_only_forward() {
        let trace = Arc::new(
            PathTrace::parse_hairpin("t", "1Mbps 40ms 0\n1Mbps 10ms 0\n1Mbps 20ms 1\n", MS16)
                .unwrap(),
        );
        let mut fwd = ConditionsLine::new(trace.clone(), true, RngStream::from_seed(1));
        let mut out = ElementOutput::default();
        let p = |s| Packet::data(FlowId(0), s, 100, Time::ZERO);
        fwd.handle_packet(Time::from_millis(15), Direction::Forward, p(0), &mut out);
        fwd.handle_packet(Time::from_millis(16), Direction::Forward, p(1), &mut out);
        // Packet 0 leaves at 35 ms (rtt 40/2); packet 1 would leave at 21 ms but waits.
        assert_eq!(fwd.poll_timeout(), Some(Time::from_millis(35)));
        fwd.handle_timeout(Time::from_millis(35), &mut out);
        assert_eq!(out.packets.len(), 2);
        // In the third interval the forward direction loses everything, the reverse nothing.
        fwd.handle_packet(Time::from_millis(33), Direction::Forward, p(2), &mut out);
        assert_eq!(out.drops.len(), 1);
        let mut rev = ConditionsLine::new(trace, false, RngStream::from_seed(1));
        rev.handle_packet(Time::from_millis(33), Direction::Reverse, p(3), &mut out);
        assert_eq!(rev.poll_timeout(), Some(Time::from_millis(43)));
    }
}
