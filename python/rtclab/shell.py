"""`rtclab emu shell SCENARIO [--receiver CMD] [--out DIR] [-- COMMAND ...]`: the user's own
programs through the emulated network, mahimahi-style.

The scenario's link (capacity, queue, loss, delays) runs in the emulator; its flows are not
started (their ports keep their own delays; any other traffic takes the first flow's). COMMAND
(default: an interactive shell) runs in the sender namespace, where the other host is
10.77.0.2; `--receiver CMD` runs alongside in the receiver namespace (a server: `iperf3 -s`,
`python3 -m http.server`). Both get in their environment:

- RTCLAB_SENDER_NS, RTCLAB_RECEIVER_NS: the namespaces; RTCLAB_PEER, RTCLAB_SELF: addresses;
- RTCLAB_START_MONOTONIC_NS: the emulation's time zero on CLOCK_MONOTONIC (the clock of
  `time.monotonic_ns()`, `clock_gettime(CLOCK_MONOTONIC)`), from which the link series and the
  capture count; RTCLAB_START_REALTIME_NS: the same instant as Unix time in nanoseconds.

TCP in COMMAND and the receiver is the kernel's, with the namespaces' default congestion
controller, which is the host's (`sysctl net.ipv4.tcp_congestion_control`: often cubic, bbr on some
machines): a scenario's `cc = "cubic"` flows do not apply to your programs. `--tcp-cc NAME` sets it
in both namespaces (one of /proc/sys/net/ipv4/tcp_available_congestion_control); the controller
in use is printed and kept in the summary (`emulator.shell_tcp_cc`).

The receiver runs in a process group of its own: when COMMAND exits, the whole group gets
SIGTERM (not only the `sh` that started it), is given `RECEIVER_GRACE_S` to flush its logs
and exit, and only then is killed. Then the network is torn down; with `--out` the result
folder is written as by `rtclab run` (summary, link series, plots, report, optional capture).
The exit status is COMMAND's.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

from rtclab import _core
from rtclab.scenarios import config_values, load_scenario

SENDER_ADDR = "10.77.0.1"
RECEIVER_ADDR = "10.77.0.2"
#: Seconds the receiver's process group has between SIGTERM and SIGKILL.
RECEIVER_GRACE_S = 5.0

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _stop_group(p: subprocess.Popen, grace: float) -> None:
    """SIGTERM to p's process group, up to `grace` seconds to exit, then SIGKILL."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if p.poll() is not None:
            try:  # the leader is gone: are the others too?
                os.killpg(p.pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.02)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def available_tcp_cc() -> list[str]:
    """The kernel's TCP congestion controllers that can be chosen now."""
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return f.read().split()
    except OSError:
        return []


def _ns_tcp_cc(ns: str, set_to: str | None = None) -> str:
    """The namespace's default TCP congestion controller, after setting it to `set_to`."""
    key = "net.ipv4.tcp_congestion_control"
    if set_to:
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={set_to}"], check=True,
                       capture_output=True)
    r = subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n", key], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def run_shell(scenario, command: list[str], receiver: str | None = None, seed: int | None = None,
              capture: str | None = None, grace: float = RECEIVER_GRACE_S, capture_sent: bool = False,
              tcp_cc: str | None = None):
    """Runs `command` (and `receiver`) through the scenario's emulated network; returns
    (COMMAND's exit status, the `RunResult` of the network: summary, link series, ...).
    `tcp_cc`: the kernel TCP congestion controller of both namespaces (default: the host's)."""
    from rtclab.runner import _result

    if tcp_cc is not None and tcp_cc not in available_tcp_cc():
        raise ValueError(f"--tcp-cc {tcp_cc}: not available in this kernel; available: "
                         f"{', '.join(available_tcp_cc()) or 'none listed'} (modprobe tcp_NAME loads another)")
    src = load_scenario(scenario)
    with config_values(src):
        emu = _core.Emulation(src.text, src.format, src.base_dir, seed, capture=capture, shell=True,
                              capture_sent=capture_sent)
    t_wall = time.perf_counter()
    emu.start()
    server = None
    try:
        sender_ns, receiver_ns = emu.namespaces()
        used = {_ns_tcp_cc(ns, tcp_cc) for ns in (sender_ns, receiver_ns)}
        shell_cc = ", ".join(sorted(used))
        print(f"emu shell: your programs' TCP uses {shell_cc} ({'--tcp-cc' if tcp_cc else 'the host default; --tcp-cc NAME chooses'})",
              file=sys.stderr)
        t0 = emu.start_monotonic_ns()
        realtime0 = time.time_ns() - (time.monotonic_ns() - t0)
        env = dict(os.environ, RTCLAB_SENDER_NS=sender_ns, RTCLAB_RECEIVER_NS=receiver_ns,
                   RTCLAB_START_MONOTONIC_NS=str(t0), RTCLAB_START_REALTIME_NS=str(realtime0))
        if receiver:
            server = subprocess.Popen(["ip", "netns", "exec", receiver_ns, "sh", "-c", receiver],
                                      env=dict(env, RTCLAB_PEER=SENDER_ADDR, RTCLAB_SELF=RECEIVER_ADDR),
                                      preexec_fn=_die_with_parent, start_new_session=True)
        cmd = command or [os.environ.get("SHELL", "/bin/sh")]
        rc = subprocess.call(["ip", "netns", "exec", sender_ns, *cmd],
                             env=dict(env, RTCLAB_PEER=RECEIVER_ADDR, RTCLAB_SELF=SENDER_ADDR),
                             preexec_fn=_die_with_parent)
    finally:
        if server is not None:
            _stop_group(server, grace)
        emu.stop()
    result = _result(emu.finish(), time.perf_counter() - t_wall, src)
    result.summary.setdefault("emulator", {})["shell_tcp_cc"] = shell_cc
    result.capture_path = capture
    return rc, result
