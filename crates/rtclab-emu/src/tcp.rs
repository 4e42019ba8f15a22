//! Real kernel TCP bulk flows between the two namespaces: a receiver thread that listens in
//! the receiver namespace and counts what the application reads, and a sender thread in the
//! sender namespace that connects with the flow's congestion control (`TCP_CONGESTION`) and
//! writes as fast as the socket takes data between the flow's start and stop times. Threads
//! enter a namespace with `setns`, so no helper processes are involved.

use crate::sys;
use crate::EmuError;
use rtclab_core::EndpointEvent;
use rtclab_harness::flow_meter::{FlowMeter, MeterWindow};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What the receiving application read (`Delivered` events into the flow's meter).
pub struct Received {
    pub meter: FlowMeter,
    pub connected: bool,
    /// The sender's kernel statistics at the end (TCP_INFO).
    pub sender_info: Option<sys::TcpInfo>,
}

pub struct TcpFlow {
    sender: JoinHandle<Result<Option<sys::TcpInfo>, EmuError>>,
    receiver: JoinHandle<Result<Received, EmuError>>,
}

pub struct TcpFlowSpec {
    pub port: u16,
    pub cc: String,
    /// CLOCK_MONOTONIC ns.
    pub t0: i64,
    pub start: i64,
    pub stop: i64,
    /// The flow meter's window and bins (emulated time).
    pub window: MeterWindow,
}

fn sleep_until(t: i64, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let left = t - sys::monotonic_ns();
        if left <= 0 {
            return;
        }
        std::thread::sleep(Duration::from_nanos(left.min(20_000_000) as u64));
    }
}

impl TcpFlow {
    pub fn spawn(
        spec: TcpFlowSpec,
        sender_ns: &str,
        receiver_ns: &str,
        stop: Arc<AtomicBool>,
    ) -> Result<Self, EmuError> {
        let rns = crate::netns::Topology::netns_path(receiver_ns);
        let stop_r = stop.clone();
        let (port, t0, window, end) = (spec.port, spec.t0, spec.window, spec.stop);
        let setup = move || -> Result<TcpListener, EmuError> {
            let l = TcpListener::bind((crate::netns::RECEIVER_ADDR, port))
                .map_err(|e| EmuError::Setup(format!("listen on port {port}: {e}")))?;
            l.set_nonblocking(true).map_err(|e| EmuError::Setup(e.to_string()))?;
            Ok(l)
        };
        let receiver = crate::netns::spawn_in_netns(
            format!("emu-tcp-recv-{port}"),
            rns,
            setup,
            move |listener: TcpListener| -> Result<Received, EmuError> {
                let mut rec =
                    Received { meter: FlowMeter::new(window), connected: false, sender_info: None };
                let mut conn = loop {
                    if stop_r.load(Ordering::Relaxed) || sys::monotonic_ns() > end + 1_000_000_000 {
                        return Ok(rec);
                    }
                    match listener.accept() {
                        Ok((c, _)) => break c,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2))
                        }
                        Err(e) => return Err(EmuError::Io(format!("accept: {e}"))),
                    }
                };
                rec.connected = true;
                let _ = conn.set_nonblocking(false);
                let _ = conn.set_read_timeout(Some(Duration::from_millis(50)));
                let mut on_read = |n: usize| {
                    let ev = EndpointEvent::Delivered { goodput_bytes: n as u64 };
                    rec.meter.on_event(sys::now_at(t0), &ev);
                };
                let timed_out = || sys::monotonic_ns() > end + 2_000_000_000;
                if !drain_spliced(&conn, &stop_r, &mut on_read, &timed_out)? {
                    drain_copied(&mut conn, &stop_r, &mut on_read, &timed_out)?;
                }
                Ok(rec)
            },
        )?;

        let sns = crate::netns::Topology::netns_path(sender_ns);
        let (start, cc) = (spec.start, spec.cc);
        let sender = std::thread::Builder::new()
            .name(format!("emu-tcp-send-{port}"))
            .spawn(move || -> Result<Option<sys::TcpInfo>, EmuError> {
                sleep_until(start, &stop);
                if stop.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                sys::enter_netns(&sns).map_err(|e| EmuError::Setup(e.to_string()))?;
                let addr: SocketAddr = format!("{}:{port}", crate::netns::RECEIVER_ADDR)
                    .parse()
                    .expect("valid address");
                // Set the congestion control before the handshake, as iperf3 -C does.
                let sock = socket_with_cc(&cc)?;
                let mut s = connect(sock, addr)?;
                let _ = s.set_write_timeout(Some(Duration::from_millis(50)));
                let sending = || !stop.load(Ordering::Relaxed) && sys::monotonic_ns() < end;
                if !send_spliced(&s, &sending)? {
                    send_copied(&mut s, &sending)?;
                }
                let info = sys::tcp_info(s.as_raw_fd()).ok();
                let _ = s.shutdown(Shutdown::Both);
                Ok(info)
            })
            .map_err(|e| EmuError::Setup(format!("thread: {e}")))?;
        Ok(TcpFlow { sender, receiver })
    }

    pub fn join(self) -> Result<Received, EmuError> {
        let s = self.sender.join().map_err(|_| EmuError::Io("sender thread panicked".into()))?;
        let r =
            self.receiver.join().map_err(|_| EmuError::Io("receiver thread panicked".into()))?;
        let info = s?;
        r.map(|mut r| {
            r.sender_info = info;
            r
        })
    }
}

/// What the bulk sender sends and the receiver takes at a time.
const CHUNK: usize = 1 << 20;

/// Sends until `sending` says stop, from an in-memory file with `sendfile`: the kernel takes
/// the file's pages by reference, so this host spends no CPU copying the application's bytes
/// (`iperf3 --zerocopy`). False, having sent nothing, where the kernel refuses `sendfile`
/// on this socket.
fn send_spliced(s: &TcpStream, sending: &dyn Fn() -> bool) -> Result<bool, EmuError> {
    let Ok(file) = sys::memfd_filled("rtclab-bulk", CHUNK, 0x5a) else { return Ok(false) };
    let mut first = true;
    while sending() {
        match sys::sendfile(s.as_raw_fd(), file.as_raw_fd(), 0, CHUNK) {
            Ok(_) => first = false,
            Err(e) if first && matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
                return Ok(false)
            }
            Err(e) => return Err(EmuError::Io(format!("sendfile: {e}"))),
        }
    }
    Ok(true)
}

/// Sends until `sending` says stop, writing from a buffer.
fn send_copied(s: &mut TcpStream, sending: &dyn Fn() -> bool) -> Result<(), EmuError> {
    let chunk = vec![0x5au8; CHUNK];
    while sending() {
        match s.write(&chunk) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(EmuError::Io(format!("write: {e}"))),
        }
    }
    Ok(())
}

/// Takes what arrives until the end of the stream, `stop`, or `timed_out` after a quiet
/// read, moving it through a pipe to /dev/null with `splice`: the application's count of
/// bytes (`on_read`) without copying them out of the kernel. False, having taken nothing,
/// where the kernel refuses to splice this socket.
fn drain_spliced(
    conn: &TcpStream,
    stop: &AtomicBool,
    on_read: &mut dyn FnMut(usize),
    timed_out: &dyn Fn() -> bool,
) -> Result<bool, EmuError> {
    let (Ok((pr, pw)), Ok(null)) =
        (sys::pipe(CHUNK), std::fs::OpenOptions::new().write(true).open("/dev/null"))
    else {
        return Ok(false);
    };
    let mut first = true;
    while !stop.load(Ordering::Relaxed) {
        match sys::splice(conn.as_raw_fd(), pw.as_raw_fd(), CHUNK) {
            Ok(Some(0)) => break,
            Ok(Some(n)) => {
                first = false;
                let mut left = n;
                while left > 0 {
                    match sys::splice(pr.as_raw_fd(), null.as_raw_fd(), left) {
                        Ok(Some(m)) if m > 0 => left -= m,
                        Ok(_) => {
                            return Err(EmuError::Io("splice to /dev/null moved nothing".into()))
                        }
                        Err(e) => return Err(EmuError::Io(format!("splice to /dev/null: {e}"))),
                    }
                }
                on_read(n);
            }
            Ok(None) => {
                if timed_out() {
                    break;
                }
            }
            Err(e) if first && matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
                return Ok(false)
            }
            Err(e) => return Err(EmuError::Io(format!("splice: {e}"))),
        }
    }
    Ok(true)
}

/// Takes what arrives as `drain_spliced` does, reading it into a buffer.
fn drain_copied(
    conn: &mut TcpStream,
    stop: &AtomicBool,
    on_read: &mut dyn FnMut(usize),
    timed_out: &dyn Fn() -> bool,
) -> Result<(), EmuError> {
    let mut buf = vec![0u8; 256 * 1024];
    while !stop.load(Ordering::Relaxed) {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => on_read(n),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if timed_out() {
                    break;
                }
            }
            Err(e) => return Err(EmuError::Io(format!("read: {e}"))),
        }
    }
    Ok(())
}

/// A blocking IPv4 TCP socket with `TCP_CONGESTION` set.
fn socket_with_cc(cc: &str) -> Result<std::os::fd::OwnedFd, EmuError> {
    let fd = sys::tcp_socket().map_err(|e| EmuError::Setup(e.to_string()))?;
    sys::set_tcp_congestion(fd.as_raw_fd(), cc).map_err(|e| {
        EmuError::Setup(format!("{e} (the kernel offers: {})", available_congestion_controls()))
    })?;
    Ok(fd)
}

fn connect(fd: std::os::fd::OwnedFd, addr: SocketAddr) -> Result<TcpStream, EmuError> {
    sys::connect_v4(&fd, addr).map_err(|e| EmuError::Io(format!("connect to {addr}: {e}")))?;
    Ok(TcpStream::from(fd))
}

/// The kernel's `tcp_available_congestion_control`.
pub fn available_congestion_controls() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}
