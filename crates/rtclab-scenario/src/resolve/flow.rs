//! One `[[flows]]` entry: its path and round trip, its start and stop, the kind's own spec
//! (tcp, cbr, media, a registered kind), pauses and direction; `count` copies of it.

use super::cc::*;
use super::entry::*;
use super::media::*;
use super::spec::*;
use super::topology::*;
use super::values::*;
use crate::config::*;
use crate::ConfigError;
use rtclab_cc::registry::Role;
use rtclab_core::{Rate, Time, TimeDelta};
use std::path::Path;

/// The most flows a scenario may have (all entries' `count`s together).
pub const MAX_FLOWS: usize = 10_000;
const MIN_PACKET: u64 = 64;
const MAX_PACKET: u64 = 65_535;

type At<'a> = &'a dyn Fn(&str) -> String;

/// Every flow of the scenario in file order (an entry with `count = n` gives n flows).
pub(super) fn flow_specs(
    cfg: &ScenarioConfig,
    topo: &Topology,
    end: Time,
    base_dir: &Path,
) -> Result<Vec<FlowSpec>, ConfigError> {
    let mut flows = Vec::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        let at = |field: &str| format!("flows[{i}].{field}");
        if f.count == 0 {
            return Err(ConfigError::new(at("count"), "must be at least 1"));
        }
        // Before a single flow is built: `count = 1000000` must not allocate its flows first.
        if flows.len() + f.count as usize > MAX_FLOWS {
            return Err(ConfigError::new(
                at("count"),
                format!(
                    "{} flows in all ({} before this entry), above the limit of {MAX_FLOWS}",
                    flows.len() + f.count as usize,
                    flows.len()
                ),
            ));
        }
        let (path, reverse_path) = flow_paths(f, topo, &at)?;
        let (access_rtt, base_rtt) = round_trip(f, topo, &path, &reverse_path, &at)?;
        let (start, stop) = active_span(f, end, &at)?;
        let packet_size = packet_size(f, &at)?;
        let kind = match split(f, &at)? {
            KindEntry::Registered { kind, params } => {
                registered_flow(kind, params, packet_size, &at)?
            }
            KindEntry::Media(m) => media_spec(&m, &at, base_dir)?,
            KindEntry::Tcp(t) => tcp_kind(&t, packet_size, &at)?,
            KindEntry::Cbr { rate } => cbr_kind(rate, packet_size, &at)?,
        };
        let reversed = match f.direction.as_deref() {
            None | Some("forward") => false,
            Some("reverse") => true,
            Some(other) => {
                return Err(ConfigError::new(
                    at("direction"),
                    format!("unknown direction {other:?} (accepted: \"forward\", \"reverse\")"),
                ))
            }
        };
        let pauses = pauses(f, start, stop, &at)?;
        for k in 0..f.count {
            let id = flows.len() as u32;
            let name = match (&f.name, f.count) {
                (Some(n), 1) => n.clone(),
                (Some(n), _) => format!("{n}-{k}"),
                (None, _) => format!("{}{}", kind.cc_name(), id),
            };
            flows.push(FlowSpec {
                id,
                name,
                kind: kind.clone(),
                rtt: access_rtt,
                base_rtt,
                path: path.clone(),
                reverse_path: reverse_path.clone(),
                start,
                stop,
                pauses: pauses.clone(),
                reversed,
                jitter: f.jitter.map_or(TimeDelta::ZERO, |d| d.0),
            });
        }
    }
    Ok(flows)
}

/// The flow's own access round trip (`rtt`) and its base RTT over its whole path.
fn round_trip(
    f: &FlowConfig,
    topo: &Topology,
    path: &[usize],
    reverse_path: &[usize],
    at: At,
) -> Result<(TimeDelta, TimeDelta), ConfigError> {
    let access_rtt = match (f.rtt, topo.shorthand) {
        (None, true) => return Err(ConfigError::new(at("rtt"), "required (e.g. rtt = \"40ms\")")),
        (None, false) => TimeDelta::ZERO,
        (Some(r), _) => r.0,
    };
    if access_rtt < TimeDelta::ZERO || (topo.shorthand && access_rtt == TimeDelta::ZERO) {
        return Err(ConfigError::new(at("rtt"), "must be positive (e.g. \"40ms\")"));
    }
    let delays =
        |p: &[usize]| p.iter().map(|&l| topo.links[l].1).fold(TimeDelta::ZERO, |a, b| a + b);
    let base_rtt = access_rtt + delays(path) + delays(reverse_path);
    if base_rtt <= TimeDelta::ZERO {
        return Err(ConfigError::new(
            at("rtt"),
            "the path has no propagation delay: give the links a `delay` or the flow an `rtt`",
        ));
    }
    Ok((access_rtt, base_rtt))
}

/// When the flow starts and stops, inside the scenario.
fn active_span(f: &FlowConfig, end: Time, at: At) -> Result<(Time, Time), ConfigError> {
    let start = Time::ZERO + f.start.map_or(TimeDelta::ZERO, |d| d.0);
    let stop = f.stop.map_or(end, |d| Time::ZERO + d.0);
    if start >= end {
        return Err(ConfigError::new(
            at("start"),
            format!("starts at {} but the scenario ends at {}", start, end),
        ));
    }
    if stop <= start {
        return Err(ConfigError::new(
            at("stop"),
            format!("{stop} is not after the start ({start})"),
        ));
    }
    if stop > end {
        return Err(ConfigError::new(
            at("stop"),
            format!("{stop} is after the end of the scenario ({end}); omit it to run to the end"),
        ));
    }
    Ok((start, stop))
}

/// The flow's packet size on the wire (1500 B unless given).
fn packet_size(f: &FlowConfig, at: At) -> Result<u32, ConfigError> {
    Ok(match f.packet_size {
        None => 1500,
        Some(s) if (MIN_PACKET..=MAX_PACKET).contains(&s.0) => s.0 as u32,
        Some(s) => {
            return Err(ConfigError::new(
                at("packet_size"),
                format!("{} B is out of range: accepted {MIN_PACKET}..={MAX_PACKET} B", s.0),
            ))
        }
    })
}

/// A tcp flow: its window controller (checked against what the controller declares), ACK
/// policy, application rate, ECN, loss recovery, size and video.
fn tcp_kind(f: &TcpEntry, packet_size: u32, at: At) -> Result<FlowKindSpec, ConfigError> {
    if f.rate.is_some_and(|r| r.0 == Rate::ZERO) {
        return Err(ConfigError::new(
            at("rate"),
            "must be positive (leave `rate` out for an unbounded bulk transfer)",
        ));
    }
    let iw = f.initial_window.unwrap_or(10);
    if iw == 0 || iw > 1000 {
        return Err(ConfigError::new(
            at("initial_window"),
            format!("{iw} is out of range: accepted 1..=1000 packets"),
        ));
    }
    let caps = f.cc.caps();
    let name = f.cc.name();
    let cc = window_cc_spec(&f.cc, packet_size, iw, Role::Window, None, at)?;
    if caps.ecn_feedback && f.delayed_ack == Some(true) {
        return Err(ConfigError::new(
            at("delayed_ack"),
            format!("{name:?} carries its feedback in the ECN field: its receiver acknowledges every packet (each ACK echoes one packet's mark); leave `delayed_ack` out or set it to false"),
        ));
    }
    if caps.ecn_feedback && f.ecn == Some(true) {
        return Err(ConfigError::new(
            at("ecn"),
            format!("{name:?} uses the ECN field for its own marks (ABC: ECT(1) accelerate, ECT(0) brake); leave `ecn` out"),
        ));
    }
    if caps.accurate_ecn && f.ecn == Some(true) {
        return Err(ConfigError::new(
            at("ecn"),
            format!("{name:?} is an L4S controller: its packets always leave ECT(1) and every CE mark is fed back by accurate ECN; `ecn` turns on classic (RFC 3168) ECN, so leave it out"),
        ));
    }
    let video = match &f.video {
        None => None,
        Some(v) => Some(tcp_video(f, v, packet_size, at)?),
    };
    Ok(FlowKindSpec::Tcp {
        video,
        cc,
        packet_size,
        ack_every: if !caps.ecn_feedback && f.delayed_ack.unwrap_or(true) { 2 } else { 1 },
        app_rate: f.rate.map(|r| r.0),
        ecn: f.ecn.unwrap_or(false),
        recovery: {
            let r = f.recovery.unwrap_or_default();
            TcpRecoverySpec {
                rack: r.rack.unwrap_or(true),
                tlp: r.tlp.unwrap_or(true),
                frto: r.frto.unwrap_or(true),
            }
        },
        size: match f.size {
            None => None,
            Some(s) if s.0 == 0 => {
                return Err(ConfigError::new(at("size"), "must be at least one byte"))
            }
            Some(s) => Some(s.0),
        },
    })
}

/// A constant-bit-rate flow.
fn cbr_kind(
    rate: Option<crate::units::RateValue>,
    packet_size: u32,
    at: At,
) -> Result<FlowKindSpec, ConfigError> {
    let Some(rate) = rate else {
        return Err(ConfigError::new(
            at("rate"),
            "a cbr flow needs a rate (e.g. rate = \"5Mbps\")",
        ));
    };
    if rate.0 == Rate::ZERO {
        return Err(ConfigError::new(at("rate"), "must be positive"));
    }
    Ok(FlowKindSpec::Cbr { rate: rate.0, packet_size })
}

/// The flow's pauses (media and cbr flows), each after the previous resume.
fn pauses(
    f: &FlowConfig,
    start: Time,
    stop: Time,
    at: At,
) -> Result<Vec<(Time, Time)>, ConfigError> {
    let mut pauses = Vec::new();
    for (i, p) in f.pauses.iter().flatten().enumerate() {
        let at_i = |k: &str| at(&format!("pauses[{i}].{k}"));
        let (a, u) = (Time::ZERO + p.at.0, Time::ZERO + p.until.0);
        let after = pauses.last().map_or(start, |&(_, u): &(Time, Time)| u);
        if a <= after {
            return Err(ConfigError::new(
                at_i("at"),
                format!("{a} is not after the flow's start or the previous resume ({after})"),
            ));
        }
        if u <= a || u >= stop {
            return Err(ConfigError::new(
                at_i("until"),
                format!("{u} must be after the pause ({a}) and before the flow stops ({stop})"),
            ));
        }
        pauses.push((a, u));
    }
    Ok(pauses)
}

/// A tcp flow's `video` table, checked (defaults: the Zhuge simulator's video over TCP).
pub(super) fn tcp_video(
    f: &TcpEntry,
    v: &TcpVideoParams,
    packet_size: u32,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_transport::TcpVideoConfig, ConfigError> {
    let d = rtclab_transport::TcpVideoConfig::default();
    if f.rate.is_some() || f.size.is_some() {
        return Err(ConfigError::new(
            at("video"),
            "`video` is the flow's application; leave `rate` and `size` out (they describe other applications)",
        ));
    }
    let fps = v.fps.unwrap_or(d.fps);
    if !(fps.is_finite() && fps > 0.0 && fps <= 240.0) {
        return Err(ConfigError::new(
            at("video.fps"),
            format!("{fps} is out of range: accepted (0, 240] frames per second"),
        ));
    }
    let min = v.min_bitrate.map_or(d.min_bitrate, |r| r.0);
    let max = v.max_bitrate.map_or(d.max_bitrate, |r| r.0);
    if min == Rate::ZERO || min > max {
        return Err(ConfigError::new(
            at("video.min_bitrate"),
            format!("must be positive and at most max_bitrate ({} bit/s)", max.as_bps()),
        ));
    }
    let send_buffer_bytes = v.send_buffer.map_or(d.send_buffer_bytes, |s| s.0);
    if send_buffer_bytes < packet_size as u64 {
        return Err(ConfigError::new(
            at("video.send_buffer"),
            format!("{send_buffer_bytes} B is smaller than one packet ({packet_size} B)"),
        ));
    }
    let interval = v.interval.map_or(d.interval, |i| i.0);
    if interval < TimeDelta::from_millis(1) || interval > TimeDelta::from_secs(10) {
        return Err(ConfigError::new(at("video.interval"), "out of range: accepted 1 ms to 10 s"));
    }
    Ok(rtclab_transport::TcpVideoConfig {
        fps,
        min_bitrate: min,
        max_bitrate: max,
        send_buffer_bytes,
        interval,
    })
}

/// A registered flow kind with its parameters checked (built once with a throw-away stream).
pub(super) fn registered_flow(
    kind: &'static rtclab_transport::flows::FlowKindEntry,
    params: Option<&ParamMap>,
    packet_size: u32,
    at: At,
) -> Result<FlowKindSpec, ConfigError> {
    use rtclab_transport::flows;
    let empty = ParamMap::new();
    let params = param_values(params.unwrap_or(&empty), &at("params"))?;
    let build = |params: &[(String, rtclab_core::params::Value)]| {
        let rng = rtclab_core::SeedTree::new(0).stream("validate");
        let args = flows::FlowArgs { flow: rtclab_core::FlowId(0), packet_size, params, rng };
        (kind.build)(args).map(|_| ())
    };
    build(&[]).map_err(|e| ConfigError::new(at("kind"), e))?;
    for p in &params {
        build(std::slice::from_ref(p))
            .map_err(|e| ConfigError::new(at(&format!("params.{}", p.0)), e))?;
    }
    // Constraints between parameters (each alone was accepted above).
    build(&params).map_err(|e| ConfigError::new(at("params"), e))?;
    Ok(FlowKindSpec::Registered { kind, params, packet_size })
}
