//! A `[[flows]]` entry split by what it is, once, before anything is resolved.
//!
//! The TOML form ([`FlowConfig`]) stays one flat table, so that a misspelt key is reported with
//! every key a flow accepts and a scenario that validated before still does. [`split`] turns it
//! into a typed entry: one variant per flow kind ([`KindEntry`]) and, inside tcp and media
//! flows, one variant per controller ([`WindowCc`], [`MediaCc`]), each holding only its own
//! keys. A key given where it does not apply is refused here, from two tables ([`KIND_KEYS`],
//! [`CC_KEYS`]), at the key's own path and naming where it does apply — the checks that used to
//! be written out by hand in every kind's resolver. The resolvers (`flow.rs`, `cc.rs`,
//! `media.rs`) then read the variant they are given and cannot see another kind's keys.
//!
//! The pattern is serde's internally tagged enum (`#[serde(tag = "kind")]`) done as a second
//! step: a tagged enum would lose the flat "accepted keys" message and cannot hold kinds and
//! controllers registered at run time (`rtclab_transport::flows`, `rtclab_cc::registry`).

use crate::config::*;
use crate::units::{RateValue, Size};
use crate::ConfigError;
use std::collections::BTreeMap;

/// A controller's or a registered kind's parameters by name, as written.
pub(super) type ParamMap = BTreeMap<String, ParamValue>;

/// The kind-specific part of a flow entry.
pub(super) enum KindEntry<'a> {
    Tcp(TcpEntry<'a>),
    Cbr {
        rate: Option<RateValue>,
    },
    Media(MediaEntry<'a>),
    /// A kind from `rtclab_transport::flows`, found once here.
    Registered {
        kind: &'static rtclab_transport::flows::FlowKindEntry,
        params: Option<&'a ParamMap>,
    },
}

/// A tcp flow's own keys.
pub(super) struct TcpEntry<'a> {
    pub cc: WindowCc<'a>,
    pub initial_window: Option<u32>,
    pub delayed_ack: Option<bool>,
    pub ecn: Option<bool>,
    pub recovery: Option<TcpRecoveryConfig>,
    pub rate: Option<RateValue>,
    pub size: Option<Size>,
    pub video: Option<&'a TcpVideoParams>,
}

/// A window-based controller with its own settings table.
pub(super) enum WindowCc<'a> {
    Reno,
    Bbr,
    Abc,
    Cubic(Option<&'a CubicParams>),
    Copa(Option<&'a ParamMap>),
    Qlibra(Option<&'a ParamMap>),
    /// A controller built through `rtclab_cc::registry` (a registered one or a built-in with a
    /// factory), its entry found once here.
    Registered {
        entry: rtclab_cc::registry::Entry,
        params: Option<&'a ParamMap>,
    },
}

/// A media flow's own keys.
pub(super) struct MediaEntry<'a> {
    pub cc: MediaCc<'a>,
    pub media: Option<&'a MediaParams>,
    pub packet_size: Option<Size>,
}

/// A media flow's controller: one of the rate controllers, or a window controller that drives
/// the encoder (`MediaCcSpec::Window`).
pub(super) enum MediaCc<'a> {
    Gcc,
    GccPaper,
    ZoomLike,
    Tree,
    Window { cc: WindowCc<'a>, initial_window: Option<u32> },
}

impl WindowCc<'_> {
    pub(super) fn name(&self) -> &'static str {
        match self {
            WindowCc::Reno => "reno",
            WindowCc::Bbr => "bbr",
            WindowCc::Abc => "abc",
            WindowCc::Cubic(_) => "cubic",
            WindowCc::Copa(_) => "copa",
            WindowCc::Qlibra(_) => "qlibra",
            WindowCc::Registered { entry, .. } => entry.name,
        }
    }
    /// What the controller serves and needs (its line in `rtclab_cc::capabilities`).
    pub(super) fn caps(&self) -> rtclab_cc::capabilities::Capabilities {
        match self {
            WindowCc::Registered { entry, .. } => entry.caps,
            c => rtclab_cc::registry::capabilities(c.name())
                .expect("every built-in window controller has a capabilities line"),
        }
    }
}

impl MediaCc<'_> {
    pub(super) fn name(&self) -> &'static str {
        match self {
            MediaCc::Gcc => "gcc",
            MediaCc::GccPaper => "gcc_paper",
            MediaCc::ZoomLike => "zoom_like",
            MediaCc::Tree => "tree",
            MediaCc::Window { cc, .. } => cc.name(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Tcp,
    Cbr,
    Media,
    Registered,
}

use Kind::{Cbr, Media, Registered, Tcp};

/// A key that only some kinds of flow take.
struct KindKey {
    key: &'static str,
    given: fn(&FlowConfig) -> bool,
    kinds: &'static [Kind],
    /// Said after "applies to ... flows only", where a hint helps.
    note: &'static str,
}

/// Which kinds of flow take which keys (the keys every flow takes are not listed).
const KIND_KEYS: &[KindKey] = &[
    KindKey {
        key: "cc",
        given: |f| f.cc.is_some(),
        kinds: &[Tcp, Media],
        note: "; cbr flows have no congestion control",
    },
    KindKey {
        key: "rate",
        given: |f| f.rate.is_some(),
        kinds: &[Tcp, Cbr],
        note: "; a media flow's rates are media.start_bitrate/min_bitrate/max_bitrate",
    },
    KindKey { key: "size", given: |f| f.size.is_some(), kinds: &[Tcp], note: "" },
    KindKey { key: "delayed_ack", given: |f| f.delayed_ack.is_some(), kinds: &[Tcp], note: "" },
    KindKey {
        key: "ecn",
        given: |f| f.ecn.is_some(),
        kinds: &[Tcp],
        note: " (media, cbr and registered senders are not ECN-capable)",
    },
    KindKey {
        key: "recovery",
        given: |f| f.recovery.is_some(),
        kinds: &[Tcp],
        note: " (rack/tlp/frto)",
    },
    KindKey {
        key: "video",
        given: |f| f.video.is_some(),
        kinds: &[Tcp],
        note: " (video over TCP); media flows take `media`",
    },
    KindKey {
        key: "initial_window",
        given: |f| f.initial_window.is_some(),
        kinds: &[Tcp, Media],
        note: "",
    },
    KindKey { key: "cubic", given: |f| f.cubic.is_some(), kinds: &[Tcp, Media], note: "" },
    KindKey { key: "copa", given: |f| f.copa.is_some(), kinds: &[Tcp, Media], note: "" },
    KindKey { key: "qlibra", given: |f| f.qlibra.is_some(), kinds: &[Tcp, Media], note: "" },
    KindKey { key: "media", given: |f| f.media.is_some(), kinds: &[Media], note: "" },
    KindKey { key: "pauses", given: |f| f.pauses.is_some(), kinds: &[Media, Cbr], note: "" },
    KindKey {
        key: "params",
        given: |f| f.params.is_some(),
        kinds: &[Registered, Tcp, Media],
        note: "",
    },
];

/// A key that belongs to one controller (of a tcp flow, or of a media flow's window
/// controller).
struct CcKey {
    key: &'static str,
    given: fn(&FlowConfig) -> bool,
    /// The controller that takes it.
    owner: fn(&WindowCc) -> bool,
    what: &'static str,
}

const CC_KEYS: &[CcKey] = &[
    CcKey {
        key: "cubic",
        given: |f| f.cubic.is_some(),
        owner: |c| matches!(c, WindowCc::Cubic(_)),
        what: "CUBIC parameters",
    },
    CcKey {
        key: "copa",
        given: |f| f.copa.is_some(),
        owner: |c| matches!(c, WindowCc::Copa(_)),
        what: "Copa parameters",
    },
    CcKey {
        key: "qlibra",
        given: |f| f.qlibra.is_some(),
        owner: |c| matches!(c, WindowCc::Qlibra(_)),
        what: "QLibra parameters",
    },
    CcKey {
        key: "params",
        given: |f| f.params.is_some(),
        owner: |c| matches!(c, WindowCc::Registered { .. }),
        what: "`params` (the settings of a registered controller or flow kind; built-in controllers have named tables)",
    },
];

type At<'a> = &'a dyn Fn(&str) -> String;

/// The entry's kind-specific part, every key checked against its kind and controller.
pub(super) fn split<'a>(f: &'a FlowConfig, at: At) -> Result<KindEntry<'a>, ConfigError> {
    let (kind, kind_name) = match &f.kind {
        FlowKind::Tcp => (Tcp, "tcp"),
        FlowKind::Cbr => (Cbr, "cbr"),
        FlowKind::Media => (Media, "media"),
        FlowKind::Registered(name) => (Registered, name.as_str()),
    };
    let registered = match &f.kind {
        FlowKind::Registered(name) => Some(registered_kind(name, at)?),
        _ => None,
    };
    for k in KIND_KEYS {
        if (k.given)(f) && !k.kinds.contains(&kind) {
            let message = match kind {
                Registered => format!(
                    "a {kind_name:?} flow takes its settings in `params`; `{}` does not apply",
                    k.key
                ),
                _ => format!(
                    "`{}` applies to {} flows only{}; this is a {kind_name} flow",
                    k.key,
                    kinds_list(k.kinds),
                    k.note
                ),
            };
            return Err(ConfigError::new(at(k.key), message));
        }
    }
    Ok(match kind {
        Tcp => {
            let name = f.cc.unwrap_or(CcName::Cubic);
            if !name.caps().tcp {
                return Err(ConfigError::new(
                    at("cc"),
                    format!(
                        "{:?} is a media controller; tcp flows accept {} (or use kind = \"media\")",
                        name.as_str(),
                        tcp_controller_names()
                    ),
                ));
            }
            let cc = window_cc(f, name, at)?;
            KindEntry::Tcp(TcpEntry {
                cc,
                initial_window: f.initial_window,
                delayed_ack: f.delayed_ack,
                ecn: f.ecn,
                recovery: f.recovery,
                rate: f.rate,
                size: f.size,
                video: f.video.as_ref(),
            })
        }
        Cbr => KindEntry::Cbr { rate: f.rate },
        Media => KindEntry::Media(MediaEntry {
            cc: media_cc(f, at)?,
            media: f.media.as_ref(),
            packet_size: f.packet_size,
        }),
        Registered => KindEntry::Registered {
            kind: registered.expect("found above for a registered kind"),
            params: f.params.as_ref(),
        },
    })
}

/// The registered flow kind `name`, or the list of kinds there are.
fn registered_kind(
    name: &str,
    at: At,
) -> Result<&'static rtclab_transport::flows::FlowKindEntry, ConfigError> {
    use rtclab_transport::flows;
    flows::find(name).ok_or_else(|| {
        let mut accepted = vec!["tcp", "cbr", "media"];
        accepted.extend(flows::names());
        let list: Vec<String> = accepted.iter().map(|k| format!("`{k}`")).collect();
        ConfigError::new(
            at("kind"),
            format!("unknown value `{name}`, expected one of {}", list.join(", ")),
        )
    })
}

/// A media flow's controller (GCC unless named), checked against what it serves.
fn media_cc<'a>(f: &'a FlowConfig, at: At) -> Result<MediaCc<'a>, ConfigError> {
    let name = f.cc.unwrap_or(CcName::Gcc);
    let rate_cc = match name {
        CcName::Gcc => Some(MediaCc::Gcc),
        CcName::GccPaper => Some(MediaCc::GccPaper),
        CcName::ZoomLike => Some(MediaCc::ZoomLike),
        CcName::Tree => Some(MediaCc::Tree),
        _ => None,
    };
    if let Some(cc) = rate_cc {
        // A window controller's keys: its settings tables, and its initial window.
        let mut window_keys = CC_KEYS
            .iter()
            .map(|k| (k.key, (k.given)(f)))
            .chain([("initial_window", f.initial_window.is_some())]);
        if let Some((key, _)) = window_keys.find(|(_, given)| *given) {
            return Err(ConfigError::new(
                at(key),
                format!(
                    "`{key}` applies to window controllers; cc = {:?} sets a rate (its settings are in `media`)",
                    cc.name()
                ),
            ));
        }
        return Ok(cc);
    }
    if !name.caps().media && !matches!(name, CcName::Registered(_)) {
        return Err(ConfigError::new(
            at("cc"),
            format!(
                "controller {:?} does not serve media flows: it serves {} only",
                name.as_str(),
                name.caps().roles()
            ),
        ));
    }
    Ok(MediaCc::Window { cc: window_cc(f, name, at)?, initial_window: f.initial_window })
}

/// A window controller with its own settings table; another controller's table is refused.
fn window_cc<'a>(f: &'a FlowConfig, name: CcName, at: At) -> Result<WindowCc<'a>, ConfigError> {
    let cc = match name {
        CcName::Reno => WindowCc::Reno,
        CcName::Bbr => WindowCc::Bbr,
        CcName::Abc => WindowCc::Abc,
        CcName::Cubic => WindowCc::Cubic(f.cubic.as_ref()),
        CcName::Copa => WindowCc::Copa(f.copa.as_ref()),
        CcName::Qlibra => WindowCc::Qlibra(f.qlibra.as_ref()),
        CcName::Registered(n) => {
            let Some(entry) = rtclab_cc::registry::find(n) else {
                return Err(ConfigError::new(
                    at("cc"),
                    format!("controller {n:?} is no longer registered"),
                ));
            };
            WindowCc::Registered { entry, params: f.params.as_ref() }
        }
        CcName::Gcc | CcName::GccPaper | CcName::ZoomLike | CcName::Tree => {
            unreachable!("rate controllers are split off by media_cc and refused by tcp flows")
        }
    };
    for k in CC_KEYS {
        if (k.given)(f) && !(k.owner)(&cc) {
            return Err(ConfigError::new(
                at(k.key),
                format!("{} given but cc is {:?}", k.what, cc.name()),
            ));
        }
    }
    Ok(cc)
}

/// "tcp", "tcp and media", "tcp, cbr and media" (registered kinds as "registered").
fn kinds_list(kinds: &[Kind]) -> String {
    let names: Vec<&str> = kinds
        .iter()
        .map(|k| match k {
            Tcp => "tcp",
            Cbr => "cbr",
            Media => "media",
            Registered => "registered-kind",
        })
        .collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_key_names_a_flow_field() {
        // A key in the table that the TOML form does not have would never be checked: the
        // unknown-key message lists every key a [[flows]] entry accepts.
        let text = "duration = \"5s\"\n[link]\ncapacity = \"10Mbps\"\n[[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\nzzz = 1\n";
        let e = crate::from_toml_str(text, std::path::Path::new(".")).unwrap_err();
        assert!(e.message.contains("accepted keys"), "{e}");
        let fields = e.message;
        for k in KIND_KEYS.iter().map(|k| k.key).chain(CC_KEYS.iter().map(|k| k.key)) {
            assert!(fields.contains(&format!("`{k}`")), "{k} is not a [[flows]] key: {fields}");
        }
    }

    #[test]
    fn lists_read_as_prose() {
        assert_eq!(kinds_list(&[Tcp]), "tcp");
        assert_eq!(kinds_list(&[Tcp, Media]), "tcp and media");
        assert_eq!(kinds_list(&[Registered, Tcp, Media]), "registered-kind, tcp and media");
    }
}
