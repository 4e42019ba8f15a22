//! Controllers from outside: a run-time registry of named controller factories, so a
//! controller written elsewhere (a Rust crate that links rtclab, a Python object through the
//! binding, a learned policy) runs in both engines without editing them.
//!
//! A scenario names a registered controller like a built-in one (`cc = "my_cc"`, with its own
//! settings in `[flows.params]`); the scenario layer checks the name and the parameters by
//! building one instance, and the engines build one per flow through
//! `AnyController::Custom`. A factory says which flows it serves: window-based (`kind =
//! "tcp"`, the controller answers `cwnd_bytes`/`pacing_rate`) and/or media (`kind = "media"`,
//! it answers `target_rate`; per-packet transport feedback arrives in
//! `on_transport_feedback`). Built-in names cannot be taken; registering a name again
//! replaces the factory (a notebook re-running its cell).
//!
//! The interface is the `CongestionController` trait itself, in the sans-IO style of
//! quinn-proto's `Controller` factory (`ControllerFactory::build`): the engine owns the clock
//! and hands `now` to every call.

use crate::capabilities::Capabilities;
pub use crate::factory::{BoxedController, ControllerArgs, Factory, MediaArgs, Role};
use std::collections::BTreeMap;
use std::sync::{OnceLock, RwLock};

/// One registered controller (or a built-in one built through the same path).
#[derive(Clone)]
pub struct Entry {
    /// The name scenarios use (interned: registered names live for the process).
    pub name: &'static str,
    /// What it serves and needs (`capabilities.rs`).
    pub caps: Capabilities,
    pub factory: Factory,
}

impl Entry {
    pub fn serves(&self, role: Role) -> bool {
        match role {
            Role::Window => self.caps.tcp,
            Role::Media => self.caps.media,
        }
    }

    pub fn build(&self, args: &ControllerArgs) -> Result<BoxedController, ControllerError> {
        if !self.serves(args.role) {
            return Err(ControllerError::RoleNotServed {
                name: self.name,
                role: match args.role {
                    Role::Window => "tcp",
                    Role::Media => "media",
                },
                serves: self.caps.roles(),
            });
        }
        (self.factory)(args).map_err(ControllerError::Refused)
    }
}

/// Why a registered controller could not be built for a flow (it crosses to the scenario
/// layer, which checks a flow's settings by building one, and to the engines).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ControllerError {
    /// The flow is of a kind the controller was not registered for.
    #[error("controller {name:?} does not serve {role} flows (it was registered for {serves})")]
    RoleNotServed { name: &'static str, role: &'static str, serves: &'static str },
    /// The factory refused the flow's settings, in its own words (a Python factory's
    /// exception message, a Rust factory's sentence).
    #[error("{0}")]
    Refused(String),
}

fn table() -> &'static RwLock<BTreeMap<&'static str, Entry>> {
    static T: OnceLock<RwLock<BTreeMap<&'static str, Entry>>> = OnceLock::new();
    T.get_or_init(Default::default)
}

/// Registers (or replaces) controller `name` with what it serves and needs.
pub fn register(name: &str, caps: Capabilities, factory: Factory) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(format!(
            "controller name {name:?}: use 1-64 lowercase letters, digits and underscores, starting with a letter"
        ));
    }
    if crate::capabilities::builtin(name).is_some() {
        return Err(format!("controller name {name:?} is a built-in controller; choose another"));
    }
    if caps.kernel.is_some() {
        return Err(format!(
            "controller {name:?}: only a built-in controller can name a Linux kernel module"
        ));
    }
    if !caps.tcp && !caps.media {
        return Err(format!("controller {name:?} must serve tcp flows, media flows or both"));
    }
    let mut t = table().write().unwrap_or_else(|e| e.into_inner());
    let name: &'static str = match t.get_key_value(name) {
        Some((k, _)) => k,
        None => Box::leak(name.to_string().into_boxed_str()),
    };
    t.insert(name, Entry { name, caps, factory });
    Ok(())
}

/// Removes a registered controller; false if there was none.
pub fn unregister(name: &str) -> bool {
    table().write().unwrap_or_else(|e| e.into_inner()).remove(name).is_some()
}

/// The entry of a registered controller, or of a built-in one built through this path.
pub fn find(name: &str) -> Option<Entry> {
    if let Some(b) = crate::capabilities::builtin(name) {
        return b.factory.map(|f| Entry { name: b.name, caps: b.caps, factory: f() });
    }
    table().read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
}

/// The capabilities of controller `name`: a built-in one's, else a registered one's.
pub fn capabilities(name: &str) -> Option<Capabilities> {
    match crate::capabilities::builtin(name) {
        Some(b) => Some(b.caps),
        None => find(name).map(|e| e.caps),
    }
}

/// The registered names, sorted.
pub fn names() -> Vec<&'static str> {
    table().read().unwrap_or_else(|e| e.into_inner()).keys().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        window_target, CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport,
    };
    use rtclab_core::Time;
    use std::sync::Arc;

    struct Fixed(u32, u32);
    impl CongestionController for Fixed {
        fn name(&self) -> &'static str {
            "fixed_test"
        }
        fn on_feedback(&mut self, _: Time, _: &FeedbackReport) {}
        fn on_congestion_event(&mut self, _: Time, _: &CongestionEvent) {}
        fn target(&self) -> CcTarget {
            window_target(self.0, self.1)
        }
        fn metrics(&self) -> CcMetrics {
            CcMetrics::default()
        }
    }

    #[test]
    fn names_are_checked_and_entries_build_for_their_roles_only() {
        let f: Factory = Arc::new(|a| Ok(Box::new(Fixed(a.initial_window, a.packet_size))));
        let tcp = Capabilities::TCP;
        assert!(register("cubic", tcp, f.clone()).unwrap_err().contains("built-in"));
        assert!(register("newreno", tcp, f.clone()).unwrap_err().contains("built-in"));
        assert!(register("My CC", tcp, f.clone()).unwrap_err().contains("lowercase"));
        let none = Capabilities { tcp: false, ..tcp };
        assert!(register("x", none, f.clone()).is_err());
        let kernel = Capabilities { kernel: Some("cubic"), ..tcp };
        assert!(register("x", kernel, f.clone()).unwrap_err().contains("kernel"));
        register("registry_unit_test", tcp, f).unwrap();
        let e = find("registry_unit_test").unwrap();
        let args = ControllerArgs {
            flow: 0,
            role: Role::Window,
            packet_size: 1000,
            initial_window: 7,
            params: &[],
            seed: 0,
            media: None,
        };
        assert_eq!(e.build(&args).unwrap().target().cwnd_bytes, Some(7000));
        let err = e.build(&ControllerArgs { role: Role::Media, ..args }).err().unwrap();
        assert!(matches!(err, ControllerError::RoleNotServed { role: "media", .. }), "{err}");
        assert!(err.to_string().contains("does not serve media"), "{err}");
        assert!(names().contains(&"registry_unit_test"));
        assert!(unregister("registry_unit_test"));
        assert!(find("registry_unit_test").is_none());
    }
}
