//! Endpoints and controllers as the scenario describes them (both engines use these).

use rtclab_cc::{AnyController, Cubic, Reno};
use rtclab_core::{FlowId, SeedTree};
use rtclab_media::receiver::MediaReceiver;
use rtclab_media::sender::MediaSender;
use rtclab_scenario::{CcSpec, MediaCcSpec, MediaSpec};

/// A media flow's sender and receiver.
pub fn media_endpoints(flow: u32, m: &MediaSpec, seeds: &SeedTree) -> (MediaSender, MediaReceiver) {
    let cc = match &m.cc {
        MediaCcSpec::Gcc(c) => AnyController::Gcc(Box::new(rtclab_cc::gcc::Gcc::new(*c))),
        MediaCcSpec::GccPaper(c) => {
            AnyController::GccPaper(Box::new(rtclab_cc::gcc::GccPaper::new(*c)))
        }
        MediaCcSpec::Window(c) => window_controller(c, seeds, flow),
        MediaCcSpec::ZoomLike(c) => {
            AnyController::ZoomLike(Box::new(rtclab_cc::ZoomLike::new(c.clone())))
        }
    };
    let rng = seeds.stream(&format!("flow{flow}.encoder"));
    (
        MediaSender::new(FlowId(flow), m.sender.clone(), cc, rng),
        MediaReceiver::new(m.feedback.clone(), None),
    )
}

/// A window-based controller for a tcp flow, or a media flow driven by one.
pub fn window_controller(cc: &CcSpec, seeds: &SeedTree, flow: u32) -> AnyController {
    match cc {
        CcSpec::Reno(c) => AnyController::Reno(Reno::new(*c)),
        CcSpec::Cubic(c) => AnyController::Cubic(Box::new(Cubic::new(*c))),
        CcSpec::Copa(c) => AnyController::Copa(Box::new(rtclab_cc::Copa::new(*c))),
        CcSpec::Qlibra(c) => AnyController::Qlibra(Box::new(rtclab_cc::Qlibra::new(*c))),
        CcSpec::Bbr(c) => {
            let mut rng = seeds.stream(&format!("flow{}.cc", flow));
            let seed = rng.next_u64();
            AnyController::Bbr(Box::new(rtclab_cc::Bbr::new(rtclab_cc::BbrConfig { seed, ..*c })))
        }
    }
}
