//! RTT estimation and retransmission timeout (RFC 6298) as Linux computes it: the 200 ms
//! minimum (`TCP_RTO_MIN`) bounds the variance term, not the sum (`tcp_rtt_estimator` keeps
//! `rttvar` at least `rto_min`, `__tcp_set_rto` = srtt + rttvar), so RTO ≥ SRTT + 200 ms.

use rtclab_core::TimeDelta;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<TimeDelta>,
    rttvar: TimeDelta,
    min_rtt: Option<TimeDelta>,
    latest: Option<TimeDelta>,
    min_rto: TimeDelta,
    max_rto: TimeDelta,
    initial_rto: TimeDelta,
    granularity: TimeDelta,
}

impl RttEstimator {
    pub fn new(initial_rto: TimeDelta, min_rto: TimeDelta, max_rto: TimeDelta) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: TimeDelta::ZERO,
            min_rtt: None,
            latest: None,
            min_rto,
            max_rto,
            initial_rto,
            granularity: TimeDelta::from_millis(1),
        }
    }

    pub fn on_sample(&mut self, r: TimeDelta) {
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = TimeDelta::from_nanos(r.as_nanos() / 2);
            }
            Some(s) => {
                // RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|; SRTT = 7/8 SRTT + 1/8 R
                let err = (s - r).abs();
                self.rttvar =
                    TimeDelta::from_nanos((3 * self.rttvar.as_nanos() + err.as_nanos()) / 4);
                self.srtt = Some(TimeDelta::from_nanos((7 * s.as_nanos() + r.as_nanos()) / 8));
            }
        }
    }

    /// RTO = SRTT + max(G, 4 RTTVAR, min_rto), at most max_rto; before any sample, the
    /// initial RTO (1 s). (RFC 6298 clamps the sum; Linux the variance term, which is what a
    /// queue-building flow notices: with a standing queue RTTVAR is tiny and the RFC's RTO
    /// sits a few ms above SRTT, so a retransmission queued behind it times out.)
    pub fn rto(&self) -> TimeDelta {
        match self.srtt {
            None => self.initial_rto,
            Some(s) => {
                let var = TimeDelta::from_nanos(4 * self.rttvar.as_nanos())
                    .max(self.granularity)
                    .max(self.min_rto);
                (s + var).min(self.max_rto)
            }
        }
    }

    pub fn srtt(&self) -> Option<TimeDelta> {
        self.srtt
    }
    pub fn rttvar(&self) -> TimeDelta {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<TimeDelta> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<TimeDelta> {
        self.latest
    }
    pub fn max_rto(&self) -> TimeDelta {
        self.max_rto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut e = RttEstimator::new(
            TimeDelta::from_secs(1),
            TimeDelta::from_millis(200),
            TimeDelta::from_secs(60),
        );
        assert_eq!(e.rto(), TimeDelta::from_secs(1));
        e.on_sample(TimeDelta::from_millis(100));
        // SRTT = 100, RTTVAR = 50 -> RTO = 300 ms
        assert_eq!(e.rto(), TimeDelta::from_millis(300));
        e.on_sample(TimeDelta::from_millis(200));
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 112.5; RTO = 112.5 + 250 = 362.5 ms
        assert_eq!(e.rto(), TimeDelta::from_micros(362_500));
        let mut e = RttEstimator::new(
            TimeDelta::from_secs(1),
            TimeDelta::from_millis(200),
            TimeDelta::from_secs(60),
        );
        e.on_sample(TimeDelta::from_millis(10));
        // Linux: the 200 ms floor bounds the variance term: 10 + max(20, 200).
        assert_eq!(e.rto(), TimeDelta::from_millis(210));
        // A standing queue: RTTVAR decays to nothing, the RTO stays 200 ms above SRTT.
        for _ in 0..200 {
            e.on_sample(TimeDelta::from_millis(400));
        }
        let gap = e.rto() - e.srtt().unwrap();
        assert!(gap >= TimeDelta::from_millis(200) && gap < TimeDelta::from_millis(201), "{gap:?}");
    }
}
