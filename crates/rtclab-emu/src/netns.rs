//! The emulated hosts: two network namespaces (sender side "s", receiver side "r"), each
//! with one TUN device whose other end is this process. Every packet between the hosts
//! crosses the emulator; nothing is routed anywhere else (the namespaces have no other
//! interface than loopback and the TUN device).
//!
//! ```text
//!  netns rtclab-<pid>-s                                  netns rtclab-<pid>-r
//!  10.77.0.1/24 ── tun rtc<pid>s ══ emulator ══ tun rtc<pid>r ── 10.77.0.2/24
//! ```
//!
//! Namespaces are created and removed with iproute2 (`ip netns`), so `ip netns exec` works for
//! user commands (`rtclab emu shell`). Names carry the owning process id: a run removes its own
//! on drop (normal exit, error, Ctrl-C), and any run first sweeps namespaces whose owner is
//! dead (a run killed with SIGKILL). TUN devices vanish with the descriptors.

use crate::sys;
use crate::EmuError;
use std::os::fd::OwnedFd;
use std::process::Command;

pub const SENDER_ADDR: &str = "10.77.0.1";
pub const RECEIVER_ADDR: &str = "10.77.0.2";
const PREFIX: &str = "rtclab-";

/// Root and /dev/net/tun, or a clear message (the CLI exits with status 2).
pub fn check_requirements() -> Result<(), EmuError> {
    if sys::euid() != 0 {
        return Err(EmuError::NotPermitted(
            "the emulator needs root (network namespaces and TUN devices); run it with sudo or as root".into(),
        ));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(EmuError::NotPermitted(
            "/dev/net/tun is missing: load the tun module (modprobe tun) or give the container the device".into(),
        ));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err(EmuError::NotPermitted("the `ip` command (iproute2) is not installed".into()));
    }
    Ok(())
}

/// Host tuning inside each namespace.
const HOST_SYSCTLS: [(&str, &str); 2] =
    [("net.ipv4.tcp_rmem", "4096 131072 67108864"), ("net.ipv4.tcp_wmem", "4096 16384 67108864")];

fn sysctl(ns: &str, key: &str, value: &str) -> Result<(), EmuError> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", &format!("echo '{value}' > {path}")])
        .output()
        .map_err(|e| EmuError::Setup(format!("sysctl {key}: {e}")))?;
    if !out.status.success() {
        return Err(EmuError::Setup(format!(
            "sysctl {key} in {ns}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

fn ip(args: &[&str]) -> Result<(), EmuError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| EmuError::Setup(format!("ip {}: {e}", args.join(" "))))?;
    if !out.status.success() {
        return Err(EmuError::Setup(format!(
            "ip {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// Namespaces left by runs whose process is gone; returns how many were removed.
pub fn sweep_stale() -> usize {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else { return 0 };
    let mut removed = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(PREFIX) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        if sys::pid_alive(pid) {
            continue;
        }
        kill_processes_in(name);
        if ip(&["netns", "del", name]).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Namespaces this process created (`rtclab-<pid>-…`), for tests of the cleanup.
pub fn own_namespaces() -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else { return Vec::new() };
    let mine = format!("{PREFIX}{}-", std::process::id());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&mine))
        .map(str::to_string)
        .collect()
}

/// The two hosts and the emulator's ends of their TUN devices. Dropping it removes both
/// namespaces (and with them any socket still open inside).
pub struct Topology {
    pub sender_ns: String,
    pub receiver_ns: String,
    pub tun_sender: OwnedFd,
    pub tun_receiver: OwnedFd,
    /// Whether both devices were opened with offloads (`offload.rs`): asked for unless
    /// `RTCLAB_EMU_OFFLOAD=0`, and dropped for both when a kernel refuses them for either.
    pub offload: bool,
    created: Vec<String>,
}

impl Topology {
    /// The sender host's TCP asks for ECN on its connections (`net.ipv4.tcp_ecn = 1`; the
    /// receiver host keeps Linux's default 2, accepting ECN when asked).
    pub fn enable_tcp_ecn(&self) -> Result<(), EmuError> {
        sysctl(&self.sender_ns, "net.ipv4.tcp_ecn", "1")
    }

    /// `tag` distinguishes several topologies of one process; `offload` asks for the TUN
    /// offloads.
    pub fn create(tag: u32, offload: bool) -> Result<Self, EmuError> {
        check_requirements()?;
        sweep_stale();
        let pid = std::process::id();
        let mut t = Topology {
            sender_ns: format!("{PREFIX}{pid}-{tag}-s"),
            receiver_ns: format!("{PREFIX}{pid}-{tag}-r"),
            // Placeholders replaced below (an fd for /dev/null until the TUN exists).
            tun_sender: std::fs::File::open("/dev/null")
                .map_err(|e| EmuError::Setup(e.to_string()))?
                .into(),
            tun_receiver: std::fs::File::open("/dev/null")
                .map_err(|e| EmuError::Setup(e.to_string()))?
                .into(),
            offload,
            created: Vec::new(),
        };
        for (ns, side, addr) in
            [(t.sender_ns.clone(), 's', SENDER_ADDR), (t.receiver_ns.clone(), 'r', RECEIVER_ADDR)]
        {
            ip(&["netns", "add", &ns])?;
            t.created.push(ns.clone());
            let dev = format!("rtc{pid}{tag}{side}");
            let fd = match sys::tun_open(&dev, t.offload) {
                Ok(fd) => fd,
                Err(_) if t.offload && side == 's' => {
                    // A kernel without TUN offloads: both devices go without.
                    t.offload = false;
                    sys::tun_open(&dev, false)
                        .map_err(|e| EmuError::Setup(format!("TUN {dev}: {e}")))?
                }
                Err(e) => return Err(EmuError::Setup(format!("TUN {dev}: {e}"))),
            };
            ip(&["link", "set", &dev, "netns", &ns])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            ip(&["-n", &ns, "link", "set", &dev, "mtu", "1500", "txqueuelen", "10000", "up"])?;
            ip(&["-n", &ns, "addr", "add", &format!("{addr}/24"), "dev", &dev])?;
            // Socket buffers that do not cap a long fat path (64 MB, as for a 10 Gbit/s,
            // 50 ms host); these sysctls are per namespace.
            for (key, value) in HOST_SYSCTLS {
                sysctl(&ns, key, value)?;
            }
            match side {
                's' => t.tun_sender = fd,
                _ => t.tun_receiver = fd,
            }
        }
        Ok(t)
    }

    pub fn netns_path(ns: &str) -> String {
        format!("/var/run/netns/{ns}")
    }
}

/// Kills every process living in namespace `ns` (programs `rtclab emu shell` started and
/// whatever they forked), except this one.
fn kill_processes_in(ns: &str) {
    let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() else { return };
    let me = std::process::id() as i32;
    for pid in String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
    {
        if pid != me {
            sys::kill(pid);
        }
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for ns in self.created.drain(..) {
            kill_processes_in(&ns);
            let _ = ip(&["netns", "del", &ns]);
        }
    }
}

/// Spawns a thread that enters the namespace at `ns_path`, runs `setup` there (binding its
/// socket) and then `body` with what `setup` made. Returns once `setup` has finished, with its
/// error if it failed, so a listener exists before anyone connects.
pub fn spawn_in_netns<S, T>(
    name: String,
    ns_path: String,
    setup: impl FnOnce() -> Result<S, EmuError> + Send + 'static,
    body: impl FnOnce(S) -> Result<T, EmuError> + Send + 'static,
) -> Result<std::thread::JoinHandle<Result<T, EmuError>>, EmuError>
where
    T: Send + 'static,
{
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), EmuError>>();
    let handle = std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let made = sys::enter_netns(&ns_path)
                .map_err(|e| EmuError::Setup(e.to_string()))
                .and_then(|()| setup());
            match made {
                Ok(s) => {
                    let _ = ready_tx.send(Ok(()));
                    body(s)
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e.clone()));
                    Err(e)
                }
            }
        })
        .map_err(|e| EmuError::Setup(format!("thread: {e}")))?;
    ready_rx
        .recv()
        .map_err(|_| EmuError::Setup("endpoint thread ended before set-up".into()))??;
    Ok(handle)
}
