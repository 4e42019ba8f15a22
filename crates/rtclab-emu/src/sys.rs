//! The system-call layer, and the only place with `unsafe`: TUN devices (`/dev/net/tun`,
//! `TUNSETIFF`), network-namespace entry (`setns`), the nanosecond clock (`CLOCK_MONOTONIC`),
//! `timerfd` with absolute deadlines, `epoll`, and a few socket options. Each wrapper checks
//! its return value and turns errno into an `io::Error` naming the call.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if ret < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(ret)
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// The machine's CPU time so far, from the first line of /proc/stat: (steal, total) in clock
/// ticks. Steal is time the hypervisor gave this virtual machine's CPUs to someone else; no
/// scheduling class here can win it back. None where /proc/stat cannot be read or parsed.
pub fn cpu_steal_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_steal(stat.lines().next()?)
}

fn parse_cpu_steal(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest time is already in user/nice).
    let v: Vec<u64> = fields.take(8).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    (v.len() == 8).then(|| (v[7], v.iter().sum()))
}

/// Percent of the machine's CPU time stolen between two `cpu_steal_ticks` readings.
pub fn steal_percent(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((s0, t0), (s1, t1)) = (before?, after?);
    (t1 > t0).then(|| s1.saturating_sub(s0) as f64 * 100.0 / (t1 - t0) as f64)
}

/// The emulation's time: CLOCK_MONOTONIC since `t0` (ns), as a `Time` (0 before `t0`).
pub fn now_at(t0: i64) -> rtclab_core::Time {
    rtclab_core::Time::ZERO + rtclab_core::TimeDelta::from_nanos((monotonic_ns() - t0).max(0))
}

/// Effective user id (root check).
pub fn euid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether a process id is alive (signal 0).
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks existence and permissions.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The calling thread's timer slack, in ns (default 50 µs; 1 ns makes hrtimers precise).
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument.
    check(
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) },
        "prctl(PR_SET_TIMERSLACK)",
    )
    .map(|_| ())
}

/// Children of this thread get SIGKILL when it exits (set in the child before exec).
pub fn set_parent_death_signal() -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number.
    check(
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) },
        "prctl(PR_SET_PDEATHSIG)",
    )
    .map(|_| ())
}

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// `_IOW('T', 208, unsigned int)`: which offloads this end of the device takes.
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const IFF_VNET_HDR: libc::c_int = 0x4000;
const TUN_F_CSUM: libc::c_ulong = 0x01;
const TUN_F_TSO4: libc::c_ulong = 0x02;

/// Opens a new non-persistent TUN device (IFF_TUN | IFF_NO_PI, non-blocking): raw IP packets.
/// It disappears when the returned descriptor is closed. With `offload`, every packet read or
/// written starts with a `virtio_net_hdr` (`IFF_VNET_HDR`) and the device takes checksum
/// offload and TCP/IPv4 segmentation (`TUN_F_CSUM | TUN_F_TSO4`): the host's TCP hands it
/// super-packets of up to 64 KiB and leaves checksums partial (`offload.rs`).
pub fn tun_open(name: &str, offload: bool) -> io::Result<OwnedFd> {
    let path = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: a valid C string; the result is checked.
    let fd = check(
        unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) },
        "open(/dev/net/tun)",
    )?;
    // SAFETY: fd was just returned by open and is owned here.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let vnet = if offload { IFF_VNET_HDR } else { 0 };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI | vnet) as libc::c_short,
        _pad: [0; 22],
    };
    for (dst, src) in req.name.iter_mut().zip(name.bytes().take(libc::IFNAMSIZ - 1)) {
        *dst = src as libc::c_char;
    }
    // SAFETY: TUNSETIFF reads and writes one ifreq we own.
    check(unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req) }, "ioctl(TUNSETIFF)")?;
    if offload {
        // SAFETY: TUNSETOFFLOAD takes its flags by value.
        check(
            unsafe { libc::ioctl(fd, TUNSETOFFLOAD as _, TUN_F_CSUM | TUN_F_TSO4) },
            "ioctl(TUNSETOFFLOAD)",
        )?;
    }
    Ok(owned)
}

/// Reads one packet; `Ok(None)` when none is waiting.
pub fn read_packet(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(e) };
    }
    Ok(Some(n as usize))
}

/// Writes one packet; a full device queue (EAGAIN/ENOBUFS) counts as a drop (`Ok(false)`).
pub fn write_packet(fd: RawFd, pkt: &[u8]) -> io::Result<bool> {
    // SAFETY: pkt is valid for pkt.len() bytes.
    written(unsafe { libc::write(fd, pkt.as_ptr().cast(), pkt.len()) })
}

/// A device write's result: a full device queue (EAGAIN/ENOBUFS) is a drop, `Ok(false)`.
fn written(n: isize) -> io::Result<bool> {
    if n >= 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::ENOBUFS) => Ok(false),
        _ => Err(e),
    }
}

/// Writes one packet gathered from `parts` (one `writev`: a vnet header, a packet's header,
/// the payloads of the MTU packets a super-packet is coalesced from); a full device queue
/// counts as a drop (`Ok(false)`), as in `write_packet`.
pub fn write_gathered(fd: RawFd, parts: &[std::io::IoSlice<'_>]) -> io::Result<bool> {
    // SAFETY: IoSlice is ABI-compatible with struct iovec on Unix; parts outlive the call.
    written(unsafe { libc::writev(fd, parts.as_ptr().cast(), parts.len() as libc::c_int) })
}

/// Moves the calling thread into the network namespace at `path` (/var/run/netns/NAME).
pub fn enter_netns(path: &str) -> io::Result<()> {
    let f = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("open {path}: {e}")))?;
    // SAFETY: a namespace file descriptor we hold open.
    check(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, "setns(CLONE_NEWNET)")
        .map(|_| ())
}

/// A CLOCK_MONOTONIC timerfd armed with absolute deadlines.
pub struct TimerFd(OwnedFd);

impl TimerFd {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain flags; result checked.
        let fd = check(
            unsafe {
                libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
            },
            "timerfd_create",
        )?;
        // SAFETY: fresh descriptor owned here.
        Ok(TimerFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
    /// Fires at `at_ns` on CLOCK_MONOTONIC (None disarms).
    pub fn set(&self, at_ns: Option<i64>) -> io::Result<()> {
        let at = at_ns.map_or(0, |t| t.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: at / 1_000_000_000, tv_nsec: at % 1_000_000_000 },
        };
        // SAFETY: spec is a valid itimerspec; old value not requested.
        check(
            unsafe {
                libc::timerfd_settime(
                    self.0.as_raw_fd(),
                    libc::TFD_TIMER_ABSTIME,
                    &spec,
                    std::ptr::null_mut(),
                )
            },
            "timerfd_settime",
        )
        .map(|_| ())
    }
    /// Clears the expiry count.
    pub fn drain(&self) {
        let mut n = 0u64;
        // SAFETY: reads 8 bytes into n; EAGAIN is fine.
        unsafe { libc::read(self.0.as_raw_fd(), (&mut n as *mut u64).cast(), 8) };
    }
    pub fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// An epoll instance watching descriptors for input; tokens are the `u64` given at `add`.
pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: flags only; result checked.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")?;
        // SAFETY: fresh descriptor owned here.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
        // SAFETY: ev is valid for the call.
        check(
            unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) },
            "epoll_ctl(ADD)",
        )
        .map(|_| ())
    }
    /// Waits up to `timeout_ms` (−1 = forever, 0 = poll); returns the ready tokens.
    pub fn wait(&self, out: &mut Vec<u64>, timeout_ms: i32) -> io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 16];
        // SAFETY: evs holds 16 events.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), 16, timeout_ms) };
        out.clear();
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        out.extend(evs[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

/// Sets the congestion control of a TCP socket (TCP_CONGESTION: "cubic", "reno", "bbr").
pub fn set_tcp_congestion(fd: RawFd, name: &str) -> io::Result<()> {
    // SAFETY: the option value is the name's bytes.
    check(
        unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                name.as_ptr().cast(),
                name.len() as libc::socklen_t,
            )
        },
        &format!("setsockopt(TCP_CONGESTION={name})"),
    )
    .map(|_| ())
}

/// An anonymous in-memory file (`memfd_create`) holding `len` bytes of `fill`: what a bulk
/// sender hands the kernel with `sendfile`, so its data reaches the socket's buffers as
/// page references instead of copies (as `iperf3 --zerocopy` sends).
pub fn memfd_filled(name: &str, len: usize, fill: u8) -> io::Result<File> {
    let cname = CString::new(name).map_err(|_| io::Error::other("NUL in memfd name"))?;
    // SAFETY: a valid C string; the result is checked.
    let fd =
        check(unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) }, "memfd_create")?;
    // SAFETY: a fresh descriptor owned here.
    let mut f = unsafe { File::from_raw_fd(fd) };
    std::io::Write::write_all(&mut f, &vec![fill; len])?;
    Ok(f)
}

/// `sendfile(out, in, &offset, count)`: bytes sent, `Ok(0)` when the socket's buffer stayed
/// full until its send timeout (EAGAIN).
pub fn sendfile(out: RawFd, input: RawFd, offset: i64, count: usize) -> io::Result<usize> {
    let mut off = offset as libc::off_t;
    // SAFETY: plain descriptors and an offset we own.
    let n = unsafe { libc::sendfile(out, input, &mut off, count) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::WouldBlock { Ok(0) } else { Err(e) };
    }
    Ok(n as usize)
}

/// A pipe (`pipe2`, close-on-exec) with room for `size` bytes (`F_SETPIPE_SZ`, best effort):
/// (read end, write end).
pub fn pipe(size: usize) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, "pipe2")?;
    // SAFETY: fresh descriptors owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: F_SETPIPE_SZ takes an int; a refusal keeps the default size.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, size as libc::c_int) };
    Ok((r, w))
}

/// `splice(from, to, count, SPLICE_F_MOVE)`: bytes moved without copying them; `Ok(None)`
/// when nothing came before the source's receive timeout (EAGAIN), `Ok(Some(0))` at its end.
pub fn splice(from: RawFd, to: RawFd, count: usize) -> io::Result<Option<usize>> {
    // SAFETY: plain descriptors, no offsets.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            count,
            libc::SPLICE_F_MOVE,
        )
    };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(e) };
    }
    Ok(Some(n as usize))
}

/// A blocking IPv4 TCP socket (close-on-exec).
pub fn tcp_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain arguments; result checked.
    let fd = check(
        unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) },
        "socket(AF_INET, SOCK_STREAM)",
    )?;
    // SAFETY: fresh descriptor owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// connect(2) to an IPv4 address (blocking).
pub fn connect_v4(fd: &OwnedFd, addr: std::net::SocketAddr) -> io::Result<()> {
    let std::net::SocketAddr::V4(a) = addr else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "IPv4 only"));
    };
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
        sin_zero: [0; 8],
    };
    // SAFETY: sa is a valid sockaddr_in for the call.
    check(
        unsafe {
            libc::connect(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        },
        "connect",
    )
    .map(|_| ())
}

/// setsockopt(2) of one int at `IPPROTO_IP`.
fn set_ip_int(fd: RawFd, name: libc::c_int, value: libc::c_int, what: &str) -> io::Result<()> {
    // SAFETY: the option value is one int that outlives the call.
    check(
        unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_IP,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        },
        what,
    )
    .map(|_| ())
}

/// Asks for each received datagram's TOS byte (IP_RECVTOS): `recv_with_tos` returns it, so an
/// endpoint reads the ECN field its packet arrived with (CE set by an emulated queue).
pub fn set_recv_tos(fd: RawFd) -> io::Result<()> {
    set_ip_int(fd, libc::IP_RECVTOS, 1, "setsockopt(IP_RECVTOS)")
}

/// The TOS byte of the datagrams a UDP socket sends from now on (IP_TOS; its two low bits are
/// the ECN field, which Linux lets a UDP socket set).
pub fn set_tos(fd: RawFd, tos: u8) -> io::Result<()> {
    set_ip_int(fd, libc::IP_TOS, tos as libc::c_int, "setsockopt(IP_TOS)")
}

/// One datagram from a non-blocking IPv4 UDP socket with IP_RECVTOS on: its length, sender
/// and TOS byte (0 when the kernel gave none).
pub fn recv_with_tos(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, std::net::SocketAddr, u8)> {
    // SAFETY: zeroed sockaddr_in and msghdr are valid; every pointer below outlives the call.
    let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = [0u64; 8]; // 64 bytes, aligned for cmsghdr
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&mut from as *mut libc::sockaddr_in).cast();
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at valid buffers for the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut tos = 0u8;
    // SAFETY: the CMSG_* walk stays inside msg's control buffer, which the kernel filled.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                tos = *libc::CMSG_DATA(c);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let ip = std::net::Ipv4Addr::from(u32::from_be(from.sin_addr.s_addr));
    let addr = std::net::SocketAddr::from((ip, u16::from_be(from.sin_port)));
    Ok((n as usize, addr, tos))
}

/// SCHED_FIFO priority of the forwarding threads.
pub const FORWARDER_PRIORITY: i32 = 50;
/// SCHED_FIFO priority of the UDP endpoints' threads: below the forwarder, above every
/// fair-scheduled process, so other work on this machine (a build, a test runner) adds no
/// scheduling delay to their timers and feedback that two real hosts would not see. Measured:
/// the edge-streaming flow's BWC at 20 % loss rose from 0.39-0.41 to 0.44-0.47 with two busy
/// loops on a 2-core host while the endpoints were fair-scheduled, and stays at 0.39-0.40 with
/// this priority (the simulator: 0.41). Kernel TCP flows' application threads stay
/// fair-scheduled: the kernel does their packet work, the thread only refills or drains a
/// socket buffer (with them at this priority `rtclab bench emu` gave 1.83 Gbit/s, 1.86 without).
pub const HOST_PRIORITY: i32 = 40;

/// Makes the calling thread SCHED_FIFO at `priority` (1-99), so a timer expiry preempts the
/// emulated hosts' TCP threads instead of waiting for the fair scheduler.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let p = libc::sched_param { sched_priority: priority };
    // SAFETY: p is a valid sched_param; 0 = the calling thread.
    check(
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) },
        "sched_setscheduler(SCHED_FIFO)",
    )
    .map(|_| ())
}

/// The kernel's view of a TCP connection (from `TCP_INFO`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub total_retrans: u32,
    pub snd_cwnd: u32,
    pub rtt_us: u32,
    pub snd_mss: u32,
}

pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    // SAFETY: tcp_info is plain old data; zeroed is a valid value.
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: ti and len are valid for the call; the kernel writes at most len bytes.
    check(
        unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&mut ti as *mut libc::tcp_info).cast(),
                &mut len,
            )
        },
        "getsockopt(TCP_INFO)",
    )?;
    Ok(TcpInfo {
        total_retrans: ti.tcpi_total_retrans,
        snd_cwnd: ti.tcpi_snd_cwnd,
        rtt_us: ti.tcpi_rtt,
        snd_mss: ti.tcpi_snd_mss,
    })
}

/// SIGKILL to a process (errors ignored: it may be gone already).
pub fn kill(pid: i32) {
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

#[cfg(test)]
mod tests {
    #[test]
    fn steal_is_the_eighth_cpu_field_and_a_share_of_all_eight() {
        let line = "cpu  3184322 13641 295916 4251088 14936 0 5252 16689 0 0";
        assert_eq!(super::parse_cpu_steal(line), Some((16689, 7781844)));
        assert_eq!(super::parse_cpu_steal("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(super::parse_cpu_steal("cpu 1 2 3"), None);
        let pct = super::steal_percent(Some((10, 1000)), Some((30, 1200))).unwrap();
        assert!((pct - 10.0).abs() < 1e-12);
        assert_eq!(super::steal_percent(Some((10, 1000)), Some((10, 1000))), None);
        assert_eq!(super::steal_percent(None, Some((10, 1000))), None);
    }
}
