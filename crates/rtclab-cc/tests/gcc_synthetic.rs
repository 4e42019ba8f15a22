//! Both GCC generations against a synthetic bottleneck (no simulator): a 30 fps source that
//! follows the controller's target, paced at its pacing rate; a FIFO link of capacity C(t);
//! 25 ms one-way delay each way; transport feedback every 100 ms (gcc) or per-packet REMB
//! logic at the receiver and a receiver report every second (gcc_paper).
use rtclab_cc::gcc::{Gcc, GccConfig, GccPaper, GccPaperConfig, GccPaperReceiver};
use rtclab_cc::{CongestionController, PacketResult};
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

const ONE_WAY: TimeDelta = TimeDelta::from_millis(25);
const PACKET: u32 = 1200;

struct Run {
    /// (time s, target bit/s, queuing delay ms of packets arriving then)
    samples: Vec<(f64, f64, f64)>,
}

fn simulate(paper: bool, capacity: impl Fn(f64) -> f64, seconds: f64) -> Run {
    let mut gcc = Gcc::new(GccConfig::default());
    let mut gp = GccPaper::new(GccPaperConfig::default());
    let mut rx = GccPaperReceiver::new(GccPaperConfig::default());
    let ctl = |gcc: &Gcc, gp: &GccPaper| if paper { gp.target() } else { gcc.target() };
    let mut link_free = Time::ZERO;
    let mut in_flight: VecDeque<(u64, Time, Time, u32)> = VecDeque::new(); // seq, send, arrival, size
    let mut unreported: Vec<PacketResult> = Vec::new();
    let mut to_sender: VecDeque<(Time, Vec<PacketResult>)> = VecDeque::new();
    let mut rembs: VecDeque<(Time, f64)> = VecDeque::new();
    let mut seq = 0u64;
    let mut pace_next = Time::ZERO;
    let mut queue: VecDeque<u32> = VecDeque::new();
    let mut samples = Vec::new();
    let step = TimeDelta::from_micros(100);
    let mut now = Time::ZERO;
    let end = Time::from_secs_f64(seconds);
    let mut next_frame = Time::ZERO;
    let mut next_feedback = Time::from_millis(100);
    let mut next_rr = Time::from_secs(1);
    let mut qdelay_acc = (0.0, 0u32);
    while now < end {
        let t = ctl(&gcc, &gp);
        if now >= next_frame {
            let bytes = (t.target_rate.unwrap().as_bps() as f64 / 8.0 / 30.0) as u32;
            let n = bytes.div_ceil(PACKET).max(1);
            for _ in 0..n {
                queue.push_back(PACKET);
            }
            next_frame += TimeDelta::from_nanos(33_333_333);
        }
        while now >= pace_next && !queue.is_empty() {
            let size = queue.pop_front().unwrap();
            let c = capacity(now.as_secs_f64());
            let start = link_free.max(now);
            link_free = start + Rate::from_bps(c as u64).tx_time(size as u64);
            let arrival = link_free + ONE_WAY;
            in_flight.push_back((seq, now, arrival, size));
            qdelay_acc.0 += (start - now).as_millis_f64();
            qdelay_acc.1 += 1;
            seq += 1;
            let pacing = t.pacing_rate.unwrap().as_bps().max(1);
            pace_next = pace_next.max(now - step) + Rate::from_bps(pacing).tx_time(size as u64);
        }
        while in_flight.front().is_some_and(|p| p.2 <= now) {
            let (s, sent, arrival, size) = in_flight.pop_front().unwrap();
            unreported.push(PacketResult {
                seq: s,
                send_time: sent,
                arrival: Some(arrival),
                size,
                probe_cluster: None,
                ce: false,
            });
            if let Some(remb) =
                rx.on_packet(arrival, sent.as_nanos() as i64, size, Some(ONE_WAY + ONE_WAY))
            {
                rembs.push_back((arrival + ONE_WAY, remb));
            }
        }
        if now >= next_feedback {
            to_sender.push_back((now + ONE_WAY, std::mem::take(&mut unreported)));
            next_feedback += TimeDelta::from_millis(100);
        }
        while to_sender.front().is_some_and(|f| f.0 <= now) {
            let (_, fb) = to_sender.pop_front().unwrap();
            gcc.on_transport_feedback(now, &fb);
        }
        while rembs.front().is_some_and(|r| r.0 <= now) {
            let (_, r) = rembs.pop_front().unwrap();
            gp.on_receiver_estimate(now, Rate::from_bps(r as u64));
        }
        if now >= next_rr {
            gp.on_loss_report(now, 0.0, Some(ONE_WAY + ONE_WAY));
            next_rr += TimeDelta::from_secs(1);
        }
        if now.as_nanos().is_multiple_of(100_000_000) {
            let q = if qdelay_acc.1 > 0 { qdelay_acc.0 / qdelay_acc.1 as f64 } else { 0.0 };
            samples.push((now.as_secs_f64(), t.target_rate.unwrap().as_bps() as f64, q));
            qdelay_acc = (0.0, 0);
        }
        now += step;
    }
    Run { samples }
}

fn mean(run: &Run, from: f64, to: f64, f: impl Fn(&(f64, f64, f64)) -> f64) -> f64 {
    let xs: Vec<f64> = run.samples.iter().filter(|s| s.0 >= from && s.0 < to).map(f).collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn report(name: &str, run: &Run, c: f64) {
    println!(
        "{name}: target/C over 20-40 s {:.3}, mean sender queuing delay {:.1} ms",
        mean(run, 20.0, 40.0, |s| s.1) / c,
        mean(run, 20.0, 40.0, |s| s.2)
    );
}

#[test]
fn gcc_tracks_a_constant_link() {
    let run = simulate(false, |_| 1_000_000.0, 40.0);
    report("gcc", &run, 1e6);
    let u = mean(&run, 20.0, 40.0, |s| s.1) / 1e6;
    assert!((0.7..=1.05).contains(&u), "target/C = {u}");
    assert!(mean(&run, 20.0, 40.0, |s| s.2) < 50.0);
}

#[test]
fn gcc_paper_tracks_a_constant_link() {
    let run = simulate(true, |_| 1_000_000.0, 40.0);
    report("gcc_paper", &run, 1e6);
    let u = mean(&run, 20.0, 40.0, |s| s.1) / 1e6;
    assert!((0.7..=1.05).contains(&u), "target/C = {u}");
    assert!(mean(&run, 20.0, 40.0, |s| s.2) < 50.0);
}

#[test]
fn both_back_off_when_capacity_halves() {
    for paper in [false, true] {
        let run = simulate(paper, |t| if t < 30.0 { 1_000_000.0 } else { 500_000.0 }, 45.0);
        let drop = run.samples.iter().find(|s| s.0 >= 30.0 && s.1 <= 500_000.0).map(|s| s.0 - 30.0);
        println!(
            "{}: target below 500 kbit/s {:?} s after the drop",
            if paper { "gcc_paper" } else { "gcc" },
            drop
        );
        let d = drop.expect("never backed off");
        assert!(d < 3.0, "took {d} s");
        let u = mean(&run, 37.0, 45.0, |s| s.1) / 5e5;
        assert!((0.6..=1.1).contains(&u), "after the drop target/C = {u}");
    }
}
