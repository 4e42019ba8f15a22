//! The Pensieve ABR environment: a video of 4-second chunks downloaded over a throughput
//! trace, chunk by chunk, with a playback buffer that drains in real time.
//!
//! Lineage: Pensieve (Mao et al., SIGCOMM'17), `sim/env.py` and `test/fixed_env.py` of
//! hongzimao/pensieve, the copy Metis trains against (transys-project/metis
//! `interpret-pensieve/pensieve_viper_env.py`) and spec `zhuge-metis.md` B.7. One download:
//! walk the piecewise-constant trace from the current position, each segment carrying
//! `bw · duration · 0.95` payload bytes, until the chunk's bytes fit; add the 80 ms RTT;
//! multiply by a noise factor U[0.9, 1.1]; the rebuffering is the part of that delay the
//! buffer did not cover; the buffer gains 4 s; above 60 s the player sleeps in 500 ms steps
//! (the trace moves on, the delay does not count). The trace wraps to its second sample.
//!
//! The observation is Pensieve's 6 × 8 state (row-major, newest sample in column 7): last
//! bitrate / 4300, buffer / 10 s, throughput in MB/s (bytes per ms / 1000), download time /
//! 10 s, the next chunk's six sizes in MB, and min(chunks left, 48) / 48. Rows shift with
//! wrap-around as `np.roll` does, which leaves stale values in row 4's columns 6-7; the
//! released network reads row 4's last column, so the quirk is kept.
//!
//! An episode ("video"): `reset` downloads the first chunk at the default quality (index 1),
//! as Pensieve does before the agent's first decision; each `step(q)` downloads the next
//! chunk at quality `q` and returns its QoE; after the last chunk the episode ends. The
//! agent makes `chunks − 1` decisions, and the episode's QoE is their sum (Pensieve's test
//! scripts likewise leave the first, fixed chunk out).
//!
//! Metis's reward-aware pruning replays one step from a saved state: [`AbrEnv::snapshot`]
//! captures the position compactly and [`AbrEnv::one_step_reward`] downloads one chunk from
//! it without noise (as the released `ccp.py` does), leaving the environment untouched.

use crate::qoe::Qoe;
use rtclab_core::rng::RngStream;
use std::sync::Arc;

/// Rows × columns of the observation.
pub const S_INFO: usize = 6;
pub const S_LEN: usize = 8;
/// Bitrate levels.
pub const LEVELS: usize = 6;

/// Environment constants (spec B.7; Pensieve's `env.py`).
#[derive(Clone, Debug)]
pub struct AbrConfig {
    pub bitrates_kbps: [f64; LEVELS],
    pub chunk_ms: f64,
    pub chunks: usize,
    pub buffer_thresh_ms: f64,
    pub drain_sleep_ms: f64,
    pub payload_fraction: f64,
    pub rtt_ms: f64,
    pub noise_low: f64,
    pub noise_high: f64,
    pub default_quality: usize,
    pub qoe: Qoe,
}

impl Default for AbrConfig {
    fn default() -> Self {
        AbrConfig {
            bitrates_kbps: [300.0, 750.0, 1200.0, 1850.0, 2850.0, 4300.0],
            chunk_ms: 4000.0,
            chunks: 48,
            buffer_thresh_ms: 60_000.0,
            drain_sleep_ms: 500.0,
            payload_fraction: 0.95,
            rtt_ms: 80.0,
            noise_low: 0.9,
            noise_high: 1.1,
            default_quality: 1,
            qoe: Qoe::Linear,
        }
    }
}

/// A throughput trace in Pensieve's "cooked" format: times in seconds, Mbit/s per segment.
#[derive(Clone, Debug)]
pub struct Trace {
    pub name: String,
    pub time: Vec<f64>,
    pub mbps: Vec<f64>,
}

impl Trace {
    /// Parses `<seconds> <Mbit/s>` lines; `name` names the file in errors.
    pub fn parse(name: &str, text: &str) -> Result<Trace, String> {
        let (mut time, mut mbps) = (Vec::new(), Vec::new());
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut it = line.split_whitespace();
            let parse = |v: Option<&str>, what: &str| -> Result<f64, String> {
                let v = v.ok_or_else(|| format!("{name}:{}: missing {what}", i + 1))?;
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("{name}:{}: {what} {v:?} is not a number", i + 1))
            };
            let t = parse(it.next(), "time (seconds)")?;
            let b = parse(it.next(), "throughput (Mbit/s)")?;
            if b < 0.0 {
                return Err(format!("{name}:{}: negative throughput {b}", i + 1));
            }
            if let Some(&prev) = time.last() {
                if t < prev {
                    return Err(format!(
                        "{name}:{}: time {t} s goes back (previous line says {prev} s)",
                        i + 1
                    ));
                }
            }
            time.push(t);
            mbps.push(b);
        }
        let t = Trace { name: name.to_string(), time, mbps };
        t.check()?;
        Ok(t)
    }

    /// A trace must have two samples and carry data somewhere past its first sample (the
    /// download loop would otherwise never end).
    pub fn check(&self) -> Result<(), String> {
        if self.time.len() != self.mbps.len() {
            return Err(format!(
                "{}: {} times but {} rates",
                self.name,
                self.time.len(),
                self.mbps.len()
            ));
        }
        if self.time.len() < 2 {
            return Err(format!("{}: a trace needs at least two samples", self.name));
        }
        let carries =
            (1..self.time.len()).any(|i| self.mbps[i] > 0.0 && self.time[i] > self.time[i - 1]);
        if !carries {
            return Err(format!(
                "{}: the trace never carries any data (all zero rates or zero-length segments)",
                self.name
            ));
        }
        Ok(())
    }
}

/// Chunk sizes in bytes, `sizes[chunk][level]`.
#[derive(Clone, Debug)]
pub struct Video {
    pub sizes: Vec<[f64; LEVELS]>,
}

impl Video {
    /// Builds a video from one text per level (one chunk size in bytes per line, as
    /// Pensieve's `video_size_<level>` files); `chunks` sizes are needed per level (+1 for
    /// the next-chunk sizes the observation shows after the last chunk).
    pub fn parse(files: &[(String, String)], chunks: usize) -> Result<Video, String> {
        if files.len() != LEVELS {
            return Err(format!(
                "a video needs {LEVELS} size files (one per bitrate), got {}",
                files.len()
            ));
        }
        if chunks == 0 {
            return Err("a video needs at least 1 chunk, got chunks = 0".into());
        }
        // Each level's sizes, counted before anything is allocated: `chunks` may be any number
        // a caller typed.
        let levels: Vec<(&String, Vec<&str>)> =
            files.iter().map(|(name, text)| (name, text.split_whitespace().collect())).collect();
        if let Some((name, vals)) = levels.iter().find(|(_, vals)| vals.len() < chunks) {
            return Err(format!("{name}: {} chunk sizes, the video needs {chunks}", vals.len()));
        }
        let mut sizes = vec![[0.0; LEVELS]; chunks + 1];
        for (level, (name, vals)) in levels.iter().enumerate() {
            for (c, row) in sizes.iter_mut().enumerate() {
                let v = vals.get(c).copied().unwrap_or(vals[chunks - 1]);
                let b: f64 =
                    v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(
                        || format!("{name}: chunk {c}: {v:?} is not a positive size in bytes"),
                    )?;
                row[level] = b;
            }
        }
        Ok(Video { sizes })
    }
}

/// What one chunk download did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChunkOutcome {
    pub quality: usize,
    pub delay_ms: f64,
    pub sleep_ms: f64,
    /// Buffer after the download (and any sleep), seconds.
    pub buffer_s: f64,
    pub rebuffer_s: f64,
    pub chunk_bytes: f64,
    pub reward: f64,
    pub chunks_left: usize,
    pub end: bool,
}

/// The compact saved position Metis replays one step from: trace, segment pointer, time
/// within the trace, buffer, chunk index and last quality.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Snapshot {
    pub trace: usize,
    pub ptr: usize,
    pub last_time: f64,
    pub buffer_ms: f64,
    pub chunk: usize,
    pub last_quality: usize,
}

impl Snapshot {
    pub const WIDTH: usize = 6;
    pub fn to_array(self) -> [f64; 6] {
        [
            self.trace as f64,
            self.ptr as f64,
            self.last_time,
            self.buffer_ms,
            self.chunk as f64,
            self.last_quality as f64,
        ]
    }
    pub fn from_array(a: &[f64]) -> Snapshot {
        Snapshot {
            trace: a[0] as usize,
            ptr: a[1] as usize,
            last_time: a[2],
            buffer_ms: a[3],
            chunk: a[4] as usize,
            last_quality: a[5] as usize,
        }
    }
}

/// The environment. Traces and video are shared (`Arc`), so cloning an environment (a full
/// snapshot, RNG included) is cheap.
#[derive(Clone, Debug)]
pub struct AbrEnv {
    pub config: AbrConfig,
    traces: Arc<Vec<Trace>>,
    video: Arc<Video>,
    rng: RngStream,
    pos: Snapshot,
    state: [[f64; S_LEN]; S_INFO],
    done: bool,
}

impl AbrEnv {
    pub fn new(
        config: AbrConfig,
        traces: Vec<Trace>,
        video: Video,
        seed: u64,
    ) -> Result<AbrEnv, String> {
        if traces.is_empty() {
            return Err("no traces given".into());
        }
        for t in &traces {
            t.check()?;
        }
        if video.sizes.len() < config.chunks + 1 {
            return Err(format!(
                "the video has {} chunks, the environment needs {}",
                video.sizes.len().saturating_sub(1),
                config.chunks
            ));
        }
        if config.chunks < 2 {
            return Err("a video needs at least 2 chunks".into());
        }
        let mut env = AbrEnv {
            config,
            traces: Arc::new(traces),
            video: Arc::new(video),
            rng: RngStream::from_seed(seed),
            pos: Snapshot {
                trace: 0,
                ptr: 1,
                last_time: 0.0,
                buffer_ms: 0.0,
                chunk: 0,
                last_quality: 0,
            },
            state: [[0.0; S_LEN]; S_INFO],
            done: true,
        };
        env.pos.last_quality = env.config.default_quality;
        Ok(env)
    }

    pub fn traces(&self) -> &[Trace] {
        &self.traces
    }

    pub fn trace_count(&self) -> usize {
        self.traces.len()
    }

    pub fn reseed(&mut self, seed: u64) {
        self.rng = RngStream::from_seed(seed);
    }

    /// Starts a video. `trace = Some(i)` plays trace i from its start (Pensieve's test
    /// environment); `None` draws a trace and a start segment at random (the training
    /// environment). Downloads the first chunk at the default quality.
    pub fn reset(&mut self, trace: Option<usize>) -> Result<ChunkOutcome, String> {
        let (ti, ptr) = match trace {
            Some(i) if i >= self.traces.len() => {
                return Err(format!(
                    "trace index {i} out of range (there are {})",
                    self.traces.len()
                ))
            }
            Some(i) => (i, 1),
            None => {
                let ti = self.rng.below(self.traces.len() as u64) as usize;
                let n = self.traces[ti].time.len() as u64;
                (ti, 1 + self.rng.below(n - 1) as usize)
            }
        };
        let t = &self.traces[ti];
        self.pos = Snapshot {
            trace: ti,
            ptr,
            last_time: t.time[ptr - 1],
            buffer_ms: 0.0,
            chunk: 0,
            last_quality: self.config.default_quality,
        };
        self.state = [[0.0; S_LEN]; S_INFO];
        self.done = false;
        Ok(self.download(self.config.default_quality))
    }

    /// Downloads the next chunk at quality `q`.
    pub fn step(&mut self, q: usize) -> Result<ChunkOutcome, String> {
        if self.done {
            return Err("the video has ended; call reset()".into());
        }
        if q >= LEVELS {
            return Err(format!("quality {q} out of range (0..{LEVELS})"));
        }
        Ok(self.download(q))
    }

    pub fn done(&self) -> bool {
        self.done
    }

    /// The 6 × 8 observation, row-major.
    pub fn observation(&self) -> &[[f64; S_LEN]; S_INFO] {
        &self.state
    }

    pub fn snapshot(&self) -> Snapshot {
        self.pos
    }

    /// Metis's 25 features of the current observation: last bitrate, buffer, 8 throughputs,
    /// 8 download times, 6 next sizes, chunks left.
    pub fn features(&self) -> [f64; 25] {
        features_of(&self.state)
    }

    /// The reward of downloading the next chunk at quality `q` from `snap`, without noise;
    /// the environment itself is not changed.
    pub fn one_step_reward(&self, snap: &Snapshot, q: usize) -> Result<f64, String> {
        let mut state = [[0.0; S_LEN]; S_INFO];
        Ok(self.one_step(snap, &mut state, q)?.reward)
    }

    /// Downloads one chunk at quality `q` from `snap` and the observation `state` (updated in
    /// place) without noise, leaving the environment untouched: the transition a critic's
    /// Q(s, a) = r + γ·V(s') needs.
    pub fn one_step(
        &self,
        snap: &Snapshot,
        state: &mut [[f64; S_LEN]; S_INFO],
        q: usize,
    ) -> Result<ChunkOutcome, String> {
        if snap.trace >= self.traces.len() {
            return Err(format!("snapshot trace {} out of range", snap.trace));
        }
        let t = &self.traces[snap.trace];
        if snap.ptr == 0
            || snap.ptr >= t.time.len()
            || snap.chunk >= self.config.chunks
            || q >= LEVELS
            || snap.last_quality >= LEVELS
            || !(snap.buffer_ms.is_finite() && snap.buffer_ms >= 0.0)
        {
            return Err("snapshot or quality out of range".into());
        }
        let mut pos = *snap;
        Ok(self.advance(&mut pos, state, q, 1.0))
    }

    /// Walks the trace from `pos` until `bytes` are delivered; returns milliseconds.
    fn transfer_ms(&self, pos: &mut Snapshot, bytes: f64) -> f64 {
        let t = &self.traces[pos.trace];
        let frac = self.config.payload_fraction;
        let mut sent = 0.0;
        let mut delay_s = 0.0;
        loop {
            let rate = t.mbps[pos.ptr] * 1e6 / 8.0; // bytes per second
            let dur = t.time[pos.ptr] - pos.last_time;
            let payload = rate * dur * frac;
            if sent + payload > bytes {
                let part = (bytes - sent) / rate / frac;
                delay_s += part;
                pos.last_time += part;
                break;
            }
            sent += payload;
            delay_s += dur;
            next_segment(t, pos);
        }
        delay_s * 1000.0
    }

    fn download(&mut self, q: usize) -> ChunkOutcome {
        let u = self.rng.next_f64();
        let noise = self.config.noise_low + (self.config.noise_high - self.config.noise_low) * u;
        let mut pos = self.pos;
        let mut state = self.state;
        let o = self.advance(&mut pos, &mut state, q, noise);
        self.pos = pos;
        self.state = state;
        self.done = o.end;
        o
    }

    /// One download from `pos`/`state` with the given noise factor (both updated).
    fn advance(
        &self,
        pos: &mut Snapshot,
        state: &mut [[f64; S_LEN]; S_INFO],
        q: usize,
        noise: f64,
    ) -> ChunkOutcome {
        let cfg = &self.config;
        let bytes = self.video.sizes[pos.chunk][q];
        let prev = pos.last_quality;
        let mut delay = self.transfer_ms(pos, bytes) + cfg.rtt_ms;
        delay *= noise;
        let rebuf_ms = (delay - pos.buffer_ms).max(0.0);
        pos.buffer_ms = (pos.buffer_ms - delay).max(0.0) + cfg.chunk_ms;
        let mut sleep_ms = 0.0;
        if pos.buffer_ms > cfg.buffer_thresh_ms {
            let drain = pos.buffer_ms - cfg.buffer_thresh_ms;
            sleep_ms = (drain / cfg.drain_sleep_ms).ceil() * cfg.drain_sleep_ms;
            pos.buffer_ms -= sleep_ms;
            // The trace moves on while the player sleeps.
            let t = &self.traces[pos.trace];
            let mut left = sleep_ms;
            loop {
                let dur = t.time[pos.ptr] - pos.last_time;
                if dur > left / 1000.0 {
                    pos.last_time += left / 1000.0;
                    break;
                }
                left -= dur * 1000.0;
                next_segment(t, pos);
            }
        }
        let reward = cfg.qoe.reward(&cfg.bitrates_kbps, q, prev, rebuf_ms / 1000.0);
        pos.chunk += 1;
        pos.last_quality = q;
        let left = cfg.chunks - pos.chunk;
        let end = pos.chunk >= cfg.chunks;
        // Observation (Pensieve's state update).
        let top = cfg.bitrates_kbps[LEVELS - 1];
        for row in state.iter_mut() {
            row.rotate_left(1);
        }
        // Like Pensieve's np.roll the rows wrap around: row 4's columns 6-7 keep stale
        // sizes, and the released network reads column 7 of row 4 (its `split_5`).
        let next = self.video.sizes[pos.chunk];
        let s = state;
        s[0][S_LEN - 1] = cfg.bitrates_kbps[q] / top;
        s[1][S_LEN - 1] = pos.buffer_ms / 1000.0 / 10.0;
        s[2][S_LEN - 1] = bytes / delay / 1000.0;
        s[3][S_LEN - 1] = delay / 1000.0 / 10.0;
        for (l, &b) in next.iter().enumerate() {
            s[4][l] = b / 1e6;
        }
        s[5][S_LEN - 1] = (left.min(48)) as f64 / 48.0;
        ChunkOutcome {
            quality: q,
            delay_ms: delay,
            sleep_ms,
            buffer_s: pos.buffer_ms / 1000.0,
            rebuffer_s: rebuf_ms / 1000.0,
            chunk_bytes: bytes,
            reward,
            chunks_left: left,
            end,
        }
    }
}

/// Moves `pos` to the end of its segment and on to the next one; the trace wraps to its
/// second sample (time 0), as Pensieve's does.
fn next_segment(t: &Trace, pos: &mut Snapshot) {
    pos.last_time = t.time[pos.ptr];
    pos.ptr += 1;
    if pos.ptr >= t.mbps.len() {
        pos.ptr = 1;
        pos.last_time = 0.0;
    }
}

/// Metis's 25-feature serialisation of a 6 × 8 state.
pub fn features_of(s: &[[f64; S_LEN]; S_INFO]) -> [f64; 25] {
    let mut f = [0.0; 25];
    f[0] = s[0][S_LEN - 1];
    f[1] = s[1][S_LEN - 1];
    f[2..10].copy_from_slice(&s[2]);
    f[10..18].copy_from_slice(&s[3]);
    f[18..24].copy_from_slice(&s[4][..LEVELS]);
    f[24] = s[5][S_LEN - 1];
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn video() -> Video {
        // Chunk c at level l: (l+1) * 100 kB.
        Video {
            sizes: (0..49).map(|_| std::array::from_fn(|l| (l as f64 + 1.0) * 100_000.0)).collect(),
        }
    }

    fn flat(mbps: f64) -> Trace {
        Trace {
            name: "flat".into(),
            time: (0..1000).map(|i| i as f64).collect(),
            mbps: vec![mbps; 1000],
        }
    }

    fn noiseless() -> AbrConfig {
        AbrConfig { noise_low: 1.0, noise_high: 1.0, ..AbrConfig::default() }
    }

    #[test]
    fn a_video_of_zero_or_too_many_chunks_is_refused_before_allocating() {
        let files: Vec<(String, String)> =
            (0..LEVELS).map(|l| (format!("video_size_{l}"), "1000\n".repeat(49))).collect();
        assert!(Video::parse(&files, 48).is_ok());
        assert!(Video::parse(&files, 0).unwrap_err().contains("at least 1 chunk"));
        // 10^12 chunks would ask for 48 TB: the file's 49 sizes refuse it first.
        let e = Video::parse(&files, 1_000_000_000_000).unwrap_err();
        assert!(e.contains("49 chunk sizes, the video needs 1000000000000"), "{e}");
    }

    #[test]
    fn a_download_on_a_flat_link_matches_hand_computation() {
        let mut env = AbrEnv::new(noiseless(), vec![flat(8.0)], video(), 1).unwrap();
        // First chunk, level 1: 200 kB at 1 MB/s × 0.95 → 210.526 ms + 80 ms RTT.
        let o = env.reset(Some(0)).unwrap();
        let d = 200_000.0 / 1e6 / 0.95 * 1000.0 + 80.0;
        assert!((o.delay_ms - d).abs() < 1e-9, "{}", o.delay_ms);
        assert!((o.rebuffer_s - d / 1000.0).abs() < 1e-12);
        assert!((o.buffer_s - 4.0).abs() < 1e-12);
        // Linear QoE of that first chunk: 0.75 − 4.3·rebuffer (no switch from the default).
        assert!((o.reward - (0.75 - 4.3 * d / 1000.0)).abs() < 1e-12);
        let obs = env.observation();
        assert!((obs[2][7] - 200_000.0 / d / 1000.0).abs() < 1e-12);
        assert!((obs[4][5] - 0.6).abs() < 1e-12);
        assert!((obs[5][7] - 47.0 / 48.0).abs() < 1e-12);
        // The one-step replay from the snapshot equals the real step without noise.
        let snap = env.snapshot();
        let r = env.one_step_reward(&snap, 4).unwrap();
        let o2 = env.step(4).unwrap();
        assert!((r - o2.reward).abs() < 1e-12);
    }

    #[test]
    fn an_episode_has_chunks_minus_one_decisions_and_the_buffer_caps_at_60s() {
        let mut env = AbrEnv::new(noiseless(), vec![flat(50.0)], video(), 1).unwrap();
        env.reset(Some(0)).unwrap();
        let mut steps = 0;
        let mut max_buf: f64 = 0.0;
        while !env.done() {
            let o = env.step(0).unwrap();
            max_buf = max_buf.max(o.buffer_s);
            steps += 1;
        }
        assert_eq!(steps, 47);
        assert!(max_buf <= 60.0 + 1e-9 && max_buf > 59.0, "{max_buf}");
        assert!(env.step(0).unwrap_err().contains("reset"));
    }

    #[test]
    fn same_seed_same_episode_and_clones_are_snapshots() {
        let traces = vec![flat(1.0), flat(3.0)];
        let mut a = AbrEnv::new(AbrConfig::default(), traces.clone(), video(), 9).unwrap();
        let mut b = AbrEnv::new(AbrConfig::default(), traces, video(), 9).unwrap();
        a.reset(None).unwrap();
        b.reset(None).unwrap();
        let c = a.clone();
        let ra: Vec<f64> = (0..10).map(|i| a.step(i % 6).unwrap().reward).collect();
        let rb: Vec<f64> = (0..10).map(|i| b.step(i % 6).unwrap().reward).collect();
        assert_eq!(ra, rb);
        let mut c = c;
        let rc: Vec<f64> = (0..10).map(|i| c.step(i % 6).unwrap().reward).collect();
        assert_eq!(ra, rc);
    }

    #[test]
    fn bad_traces_are_named() {
        assert!(Trace::parse("t.txt", "0 1\n1 x\n").unwrap_err().contains("t.txt:2"));
        assert!(Trace::parse("t.txt", "0 1\n").unwrap_err().contains("two samples"));
        assert!(Trace::parse("t.txt", "0 0\n1 0\n").unwrap_err().contains("never carries"));
        assert!(Trace::parse("t.txt", "1 1\n0 1\n").unwrap_err().contains("goes back"));
        assert!(Trace::parse("t.txt", "0 -1\n1 1\n").unwrap_err().contains("negative"));
    }
}
