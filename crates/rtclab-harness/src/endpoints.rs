//! Endpoints and controllers as the scenario describes them (both engines use these), and
//! `AnyEndpoint`: every built-in endpoint behind the one `Endpoint` interface without a
//! virtual call, plus a boxed slot for endpoints from elsewhere.

use crate::measure::CcSample;
use crate::BuildError;
use rtclab_cc::{AnyController, CongestionController, Cubic, Reno};
use rtclab_core::{
    Endpoint, EndpointEvent, FlowId, Packet, Payload, SeedTree, Time, TimeDelta, Transmit,
};
use rtclab_media::receiver::{FeedbackMode, MediaReceiver};
use rtclab_media::sender::MediaSender;
use rtclab_scenario::{CcSpec, FlowKindSpec, FlowSpec, MediaCcSpec, MediaSpec};
use rtclab_transport::flows::FlowArgs;
use rtclab_transport::{
    CbrConfig, CbrSender, DatagramSink, TcpReceiver, TcpReceiverConfig, TcpSender, TcpSenderConfig,
};

/// One side of a flow.
pub enum AnyEndpoint {
    TcpSender(Box<TcpSender>),
    TcpReceiver(Box<TcpReceiver>),
    CbrSender(Box<CbrSender>),
    Sink(Box<DatagramSink>),
    MediaSender(Box<MediaSender>),
    MediaReceiver(Box<MediaReceiver>),
    /// Any other endpoint (a registered flow kind, an experiment).
    Other(Box<dyn Endpoint + Send + Sync>),
}

macro_rules! each {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyEndpoint::TcpSender($e) => $body,
            AnyEndpoint::TcpReceiver($e) => $body,
            AnyEndpoint::CbrSender($e) => $body,
            AnyEndpoint::Sink($e) => $body,
            AnyEndpoint::MediaSender($e) => $body,
            AnyEndpoint::MediaReceiver($e) => $body,
            AnyEndpoint::Other($e) => $body,
        }
    };
}

impl Endpoint for AnyEndpoint {
    #[inline]
    fn start(&mut self, now: Time) {
        each!(self, e => Endpoint::start(e.as_mut(), now))
    }
    #[inline]
    fn stop(&mut self) {
        each!(self, e => Endpoint::stop(e.as_mut()))
    }
    #[inline]
    fn handle_packet(&mut self, now: Time, pkt: &Packet, payload: Option<Payload>) {
        each!(self, e => Endpoint::handle_packet(e.as_mut(), now, pkt, payload))
    }
    #[inline]
    fn handle_timeout(&mut self, now: Time) {
        each!(self, e => Endpoint::handle_timeout(e.as_mut(), now))
    }
    #[inline]
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        each!(self, e => Endpoint::poll_transmit(e.as_mut(), now))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        each!(self, e => Endpoint::poll_timeout(e.as_ref()))
    }
    #[inline]
    fn poll_event(&mut self) -> Option<EndpointEvent> {
        each!(self, e => Endpoint::poll_event(e.as_mut()))
    }
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        each!(self, e => Endpoint::metrics(e.as_ref()))
    }
}

impl AnyEndpoint {
    /// The congestion controller of a sender that has one.
    pub fn controller(&self) -> Option<&AnyController> {
        match self {
            AnyEndpoint::TcpSender(s) => Some(s.controller()),
            AnyEndpoint::MediaSender(s) => Some(s.controller()),
            _ => None,
        }
    }
}

/// A flow's (sender, receiver) as the scenario describes it. Fails only where a registered
/// controller's factory fails (the scenario layer built one with the same settings).
pub fn flow_endpoints(
    f: &FlowSpec,
    seeds: &SeedTree,
) -> Result<(AnyEndpoint, AnyEndpoint), BuildError> {
    let id = FlowId(f.id);
    Ok(match &f.kind {
        FlowKindSpec::Tcp { cc, packet_size, ack_every, app_rate, ecn, size, recovery, video } => {
            // A controller whose feedback rides in the ECN field (ABC) gets its marks echoed;
            // an L4S one sends ECT(1) and gets every CE counted back (AccECN).
            let caps = rtclab_cc::registry::capabilities(cc.name());
            let abc = caps.is_some_and(|c| c.ecn_feedback);
            let accecn = caps.is_some_and(|c| c.accurate_ecn);
            let cc = window_controller(cc, seeds, f.id)?;
            let scfg = TcpSenderConfig {
                packet_size: *packet_size,
                app_rate: *app_rate,
                video: *video,
                size_packets: size.map(|b| b.div_ceil(*packet_size as u64)),
                ecn: *ecn,
                abc,
                accecn,
                rack: recovery.rack,
                tlp: recovery.tlp,
                frto: recovery.frto,
                ..Default::default()
            };
            let rcfg = TcpReceiverConfig { ack_every: *ack_every, accecn, ..Default::default() };
            (
                AnyEndpoint::TcpSender(Box::new(TcpSender::new(id, scfg, cc))),
                AnyEndpoint::TcpReceiver(Box::new(TcpReceiver::new(id, rcfg))),
            )
        }
        FlowKindSpec::Cbr { rate, packet_size } => (
            AnyEndpoint::CbrSender(Box::new(CbrSender::new(
                id,
                CbrConfig { rate: *rate, packet_size: *packet_size },
            ))),
            AnyEndpoint::Sink(Box::default()),
        ),
        FlowKindSpec::Media(m) => {
            let (s, r) = media_endpoints(f.id, m, seeds)?;
            (AnyEndpoint::MediaSender(Box::new(s)), AnyEndpoint::MediaReceiver(Box::new(r)))
        }
        FlowKindSpec::Registered { kind, params, packet_size } => {
            let rng = seeds.stream(&format!("flow{}.kind", f.id));
            let args = FlowArgs { flow: id, packet_size: *packet_size, params, rng };
            let (s, r) = (kind.build)(args)
                .map_err(|message| BuildError::FlowKind { flow: f.name.clone(), message })?;
            (AnyEndpoint::Other(s), AnyEndpoint::Other(r))
        }
    })
}

/// A media flow's sender and receiver.
pub fn media_endpoints(
    flow: u32,
    m: &MediaSpec,
    seeds: &SeedTree,
) -> Result<(MediaSender, MediaReceiver), BuildError> {
    let cc = match &m.cc {
        MediaCcSpec::Gcc(c) => AnyController::Gcc(Box::new(rtclab_cc::gcc::Gcc::new(**c))),
        MediaCcSpec::GccPaper(c) => {
            AnyController::GccPaper(Box::new(rtclab_cc::gcc::GccPaper::new(*c)))
        }
        MediaCcSpec::Window(c) => window_controller(c, seeds, flow)?,
        MediaCcSpec::ZoomLike(c) => {
            AnyController::ZoomLike(Box::new(rtclab_cc::ZoomLike::new(c.clone())))
        }
        MediaCcSpec::Tree(c) => AnyController::Custom(Box::new(
            rtclab_cc::learned::tree::TreeController::new(c.clone()),
        )),
    };
    let rng = seeds.stream(&format!("flow{flow}.encoder"));
    let mut playout = rtclab_media::playout::PlayoutPipeline::new(
        m.playout.build(),
        m.decode.model(seeds.stream(&format!("flow{flow}.decoder"))),
    );
    if let Some(name) = &m.frame_rate_control {
        // w0 = 2 ms and ρ = 0.95, the released code's defaults (checked by the scenario).
        let (policy, capacity) =
            rtclab_media::afr::controller::FrameRatePolicy::by_name(name, 2.0, 0.95, false)
                .map_err(|message| BuildError::FrameRateControl { flow, message })?;
        playout = playout.with_frame_rate_control(policy, capacity, m.sender.encoder.fps);
    }
    let mut receiver = MediaReceiver::new(FlowId(flow), m.feedback.clone(), None);
    if matches!(m.feedback, FeedbackMode::RembAndRr { rr_randomized: true, .. }) {
        receiver = receiver.with_rr_draws(seeds.stream(&format!("flow{flow}.rtcp")));
    }
    Ok((
        MediaSender::new(FlowId(flow), m.sender.clone(), cc, rng),
        receiver
            .with_pipeline(playout)
            .with_key_frame_requests(
                m.key_frame_requests.then_some(rtclab_media::receiver::KEY_FRAME_REQUEST_INTERVAL),
            )
            .with_frame_wait(m.frame_wait.unwrap_or(if m.sender.protection.retransmits() {
                rtclab_media::frames::GIVE_UP
            } else {
                TimeDelta::ZERO
            })),
    ))
}

/// A window-based controller for a tcp flow, or a media flow driven by one.
pub fn window_controller(
    cc: &CcSpec,
    seeds: &SeedTree,
    flow: u32,
) -> Result<AnyController, BuildError> {
    Ok(match cc {
        CcSpec::Reno(c) => AnyController::Reno(Reno::new(*c)),
        CcSpec::Cubic(c) => AnyController::Cubic(Box::new(Cubic::new(*c))),
        CcSpec::Copa(c) => AnyController::Copa(Box::new(rtclab_cc::Copa::new(*c))),
        CcSpec::Qlibra(c) => AnyController::Qlibra(Box::new(rtclab_cc::Qlibra::new(*c))),
        CcSpec::Abc(c) => AnyController::Abc(Box::new(rtclab_cc::Abc::new(*c))),
        CcSpec::Bbr(c) => {
            let mut rng = seeds.stream(&format!("flow{}.cc", flow));
            let seed = rng.next_u64();
            AnyController::Bbr(Box::new(rtclab_cc::Bbr::new(rtclab_cc::BbrConfig { seed, ..*c })))
        }
        CcSpec::Registered(r) => {
            let mut rng = seeds.stream(&format!("flow{}.cc", flow));
            let args = rtclab_cc::registry::ControllerArgs {
                flow,
                role: r.role,
                packet_size: r.packet_size,
                initial_window: r.initial_window,
                params: &r.params,
                seed: rng.next_u64(),
                media: r.media,
            };
            // The entry the scenario layer found and checked: no second lookup.
            let c = r.entry.build(&args).map_err(|error| BuildError::Controller {
                flow,
                name: r.entry.name,
                error,
            })?;
            AnyController::Custom(c)
        }
    })
}

/// A flow's controller state for the time series, the same in both engines: the window and
/// smoothed RTT of a TCP sender, the target of a media sender, the receiver-side estimator's
/// named values, then the controller's own state code and named values (`metrics()`).
/// `rcv` is None where the receiver lives elsewhere (the emulator samples it on its own
/// thread with [`sample_media_receiver`] and puts its values first).
pub fn sample_flow(snd: &AnyEndpoint, rcv: Option<&AnyEndpoint>, packet_size: u32) -> CcSample {
    let mut c = CcSample { named: Vec::with_capacity(16), ..CcSample::default() };
    let cc = match snd {
        AnyEndpoint::TcpSender(sender) => {
            c.cwnd_packets =
                sender.controller().target().cwnd_bytes.unwrap_or(0) as f64 / packet_size as f64;
            c.srtt_ms = sender.rtt().srtt().map_or(f64::NAN, |d| d.as_millis_f64());
            if let Some(v) = sender.video() {
                c.target_mbps = v.bitrate().as_mbps_f64();
            }
            Some(sender.controller())
        }
        AnyEndpoint::MediaSender(sender) => {
            if let Some(AnyEndpoint::MediaReceiver(r)) = rcv {
                sample_media_receiver(r, &mut c);
            }
            sample_media_sender(sender, &mut c);
            if let Some(cwnd) = sender.controller().target().cwnd_bytes {
                // A window controller on media: its window, RTT and the encoder's target.
                c.cwnd_packets = cwnd as f64 / packet_size as f64;
                c.srtt_ms = sender.window_srtt().map_or(f64::NAN, |d| d.as_millis_f64());
                c.target_mbps = sender.encoder_target().map_or(f64::NAN, |r| r.as_mbps_f64());
            } else if let Some(cwnd) = sender.controller().metrics().cwnd_bytes {
                // A media controller with a window of its own behind its rate (SCReAM v2).
                c.cwnd_packets = cwnd as f64 / packet_size as f64;
            }
            return c;
        }
        AnyEndpoint::Other(e) => {
            c.target_mbps = e.target_rate().map_or(f64::NAN, |r| r.as_mbps_f64());
            None
        }
        snd => snd.controller(),
    };
    if let Some(cc) = cc {
        sample_controller(cc, &mut c);
    }
    c
}

fn sample_controller(cc: &dyn CongestionController, c: &mut CcSample) {
    let m = cc.metrics();
    c.state = m.state as f64;
    c.named.extend(m.extra.iter().flatten());
}

/// A media sender's target and its controller's state and named values.
pub fn sample_media_sender(s: &MediaSender, c: &mut CcSample) {
    let cc = s.controller();
    c.target_mbps = cc.target().target_rate.map_or(f64::NAN, |r| r.as_mbps_f64());
    sample_controller(cc, c);
    if let Some((w, h)) = s.adapted_resolution() {
        c.named.push(("frame_width", f64::from(w)));
        c.named.push(("frame_height", f64::from(h)));
    }
    if let Some(r) = s.encoder_stream_target() {
        c.named.push(("encoder_target_mbps", r.as_mbps_f64()));
    }
}

/// The receiver-side estimator's named values (REMB), appended to `c.named`.
/// What a flow's receiver adds to its series (a receive-side estimator's named values); empty
/// for receivers without one.
pub fn sample_receiver(rcv: &AnyEndpoint) -> CcSample {
    let mut c = CcSample::default();
    if let AnyEndpoint::MediaReceiver(r) = rcv {
        sample_media_receiver(r, &mut c);
    }
    c
}

pub fn sample_media_receiver(r: &MediaReceiver, c: &mut CcSample) {
    if let Some(e) = r.remb_estimator() {
        c.named.extend(e.metrics());
    }
}
