//! What a controller needs and does, declared once in its entry and checked generically: the
//! scenario layer, the transport and the engines ask `registry::capabilities` about a
//! controller by name and
//! never match on which controller it is.
//!
//! [`BUILTIN`] is the table of built-in controllers, one line each: the name scenarios use,
//! its aliases, its capabilities and — for a controller built through the generic path, like
//! a registered one — its factory. The others (Reno, CUBIC, Copa, BBR, QLibra, ABC and the
//! media controllers) keep typed settings tables (`[flows.copa]`, ...) parsed by the scenario
//! layer and are dispatched without a virtual call (`AnyController`). A controller registered
//! at run time (`registry`, Rust or Python) declares the same [`Capabilities`].
//!
//! Adding a built-in controller: its own file in this crate and one line in [`BUILTIN`]
//! (`docs/controllers.md`).

use crate::factory::Factory;

/// What a controller needs and does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// It serves tcp flows (answers a window and/or a pacing rate).
    pub tcp: bool,
    /// It serves media flows (answers a target rate).
    pub media: bool,
    /// Its feedback travels in the ECN field of rtclab's TCP (ABC's accelerate/brake marks):
    /// the receiver acknowledges every packet and the flow cannot use classic ECN besides.
    pub ecn_feedback: bool,
    /// An L4S (scalable) controller: its data leaves ECT(1) and the receiver feeds back every
    /// CE mark (AccECN), which the controller answers itself (`FeedbackReport::ce_packets`).
    pub accurate_ecn: bool,
    /// It sets the window itself during loss recovery, so the transport must not apply PRR
    /// (Linux: controllers with their own `cong_control`, such as BBR, bypass
    /// `tcp_cwnd_reduction`; Copa runs over QUIC-style recovery).
    pub owns_recovery_window: bool,
    /// Why it cannot run in the emulator; None: it can.
    pub simulator_only: Option<&'static str>,
    /// The Linux module of the same algorithm: the emulator runs a bulk tcp flow with it as
    /// real kernel TCP.
    pub kernel: Option<&'static str>,
    /// A middlebox kind it needs on the flow's path, and what goes wrong without one (the
    /// scenario layer warns).
    pub needs_middlebox: Option<(&'static str, &'static str)>,
}

impl Capabilities {
    /// A controller for tcp flows that needs nothing special.
    pub const TCP: Capabilities = Capabilities {
        tcp: true,
        media: false,
        ecn_feedback: false,
        accurate_ecn: false,
        owns_recovery_window: false,
        simulator_only: None,
        kernel: None,
        needs_middlebox: None,
    };
    /// A controller for media flows that needs nothing special.
    pub const MEDIA: Capabilities = Capabilities { tcp: false, media: true, ..Capabilities::TCP };

    /// "tcp flows", "media flows", "tcp and media flows".
    pub fn roles(&self) -> &'static str {
        match (self.tcp, self.media) {
            (true, true) => "tcp and media flows",
            (true, false) => "tcp flows",
            (false, true) => "media flows",
            (false, false) => "no flows",
        }
    }
}

/// A built-in controller's line in [`BUILTIN`].
pub struct Builtin {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub caps: Capabilities,
    /// Built through the generic path (settings in `[flows.params]`), as a registered
    /// controller is; None for the controllers the scenario layer builds from typed settings.
    pub factory: Option<fn() -> Factory>,
}

const TCP: Capabilities = Capabilities::TCP;
const MEDIA: Capabilities = Capabilities::MEDIA;
/// A window-based controller: tcp flows, and media flows whose encoder follows its window.
const WINDOW: Capabilities = Capabilities { media: true, ..TCP };

/// The built-in controllers.
pub static BUILTIN: &[Builtin] = &[
    Builtin {
        name: "reno",
        aliases: &["newreno"],
        caps: Capabilities { kernel: Some("reno"), ..WINDOW },
        factory: None,
    },
    Builtin {
        name: "cubic",
        aliases: &[],
        caps: Capabilities { kernel: Some("cubic"), ..WINDOW },
        factory: None,
    },
    Builtin {
        name: "copa",
        aliases: &[],
        caps: Capabilities { owns_recovery_window: true, ..WINDOW },
        factory: None,
    },
    Builtin {
        name: "bbr",
        aliases: &[],
        caps: Capabilities { owns_recovery_window: true, kernel: Some("bbr"), ..WINDOW },
        factory: None,
    },
    Builtin { name: "qlibra", aliases: &[], caps: WINDOW, factory: None },
    Builtin {
        name: "abc",
        aliases: &[],
        caps: Capabilities {
            ecn_feedback: true,
            owns_recovery_window: true,
            needs_middlebox: Some((
                "abc",
                "every packet stays an accelerate and its window only grows",
            )),
            ..TCP
        },
        factory: None,
    },
    Builtin {
        name: "vegas",
        aliases: &[],
        caps: WINDOW,
        factory: Some(crate::vegas::Vegas::factory),
    },
    Builtin {
        name: "prague",
        aliases: &[],
        caps: Capabilities { accurate_ecn: true, owns_recovery_window: true, ..TCP },
        factory: Some(crate::prague::Prague::factory),
    },
    Builtin { name: "nada", aliases: &[], caps: MEDIA, factory: Some(crate::nada::Nada::factory) },
    Builtin {
        name: "scream",
        aliases: &["scream_v2"],
        caps: MEDIA,
        factory: Some(crate::scream::Scream::factory),
    },
    Builtin { name: "zoom_like", aliases: &[], caps: MEDIA, factory: None },
    Builtin { name: "gcc", aliases: &[], caps: MEDIA, factory: None },
    Builtin { name: "gcc_paper", aliases: &[], caps: MEDIA, factory: None },
    Builtin { name: "tree", aliases: &[], caps: MEDIA, factory: None },
];

/// The built-in line of `name` (or of a name it is an alias of).
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|b| b.name == name || b.aliases.contains(&name))
}

/// Every built-in name and alias, in table order.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().flat_map(|b| std::iter::once(b.name).chain(b.aliases.iter().copied())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_serves_some_flows_and_names_are_unique() {
        let names = builtin_names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
        for b in BUILTIN {
            assert!(b.caps.tcp || b.caps.media, "{}", b.name);
            // A kernel twin only makes sense for tcp flows the emulator can run.
            assert!(b.caps.kernel.is_none() || (b.caps.tcp && b.caps.simulator_only.is_none()));
        }
        use crate::registry::capabilities as of;
        assert_eq!(of("newreno"), of("reno"));
        assert!(of("abc").unwrap().ecn_feedback);
        assert_eq!(of("no_such_controller"), None);
    }

    /// The transport asks a controller's declared capabilities, registered or built-in,
    /// through the same call.
    #[test]
    fn a_registered_controller_declares_what_a_builtin_one_does() {
        use crate::{window_target, AnyController, CcMetrics, CcTarget};
        use crate::{CongestionController, CongestionEvent, FeedbackReport};
        use rtclab_core::Time;
        struct Own;
        impl CongestionController for Own {
            fn name(&self) -> &'static str {
                "caps_unit_test"
            }
            fn on_feedback(&mut self, _: Time, _: &FeedbackReport) {}
            fn on_congestion_event(&mut self, _: Time, _: &CongestionEvent) {}
            fn target(&self) -> CcTarget {
                window_target(10, 1500)
            }
            fn metrics(&self) -> CcMetrics {
                CcMetrics::default()
            }
        }
        let caps = Capabilities { owns_recovery_window: true, ..Capabilities::TCP };
        let f: Factory = std::sync::Arc::new(|_| Ok(Box::new(Own)));
        crate::registry::register("caps_unit_test", caps, f).unwrap();
        assert!(AnyController::Custom(Box::new(Own)).owns_recovery_window());
        assert_eq!(crate::registry::capabilities("caps_unit_test"), Some(caps));
        crate::registry::unregister("caps_unit_test");
        assert!(!AnyController::Custom(Box::new(Own)).owns_recovery_window());
        let copa = crate::Copa::new(crate::CopaConfig::default());
        assert!(AnyController::Copa(Box::new(copa)).owns_recovery_window());
        let reno = crate::Reno::new(crate::RenoConfig::default());
        assert!(!AnyController::Reno(reno).owns_recovery_window());
    }
}
