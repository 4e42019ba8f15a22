"""`rtclab emu shell SCENARIO [--receiver CMD] [-- COMMAND ...]`: the user's own programs
through the emulated network, mahimahi-style.

The scenario's link (capacity, queue, loss, delays) runs in the emulator; its flows are not
started (their ports keep their own delays; any other traffic takes the first flow's). COMMAND
(default: an interactive shell) runs in the sender namespace, where the other host is
10.77.0.2; `--receiver CMD` runs alongside in the receiver namespace (a server: `iperf3 -s`,
`python3 -m http.server`). Both get RTCLAB_SENDER_NS, RTCLAB_RECEIVER_NS, RTCLAB_PEER and
RTCLAB_SELF in their environment, and die with rtclab. When COMMAND exits the network is torn
down and a short report is printed; the exit status is COMMAND's.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess

from rtclab import _core
from rtclab.scenarios import load_scenario

SENDER_ADDR = "10.77.0.1"
RECEIVER_ADDR = "10.77.0.2"
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def run_shell(scenario, command: list[str], receiver: str | None = None, seed: int | None = None,
              capture: str | None = None) -> tuple[int, dict]:
    src = load_scenario(scenario)
    emu = _core.Emulation(src.text, src.format, src.base_dir, seed, capture=capture, shell=True)
    emu.start()
    server = None
    try:
        sender_ns, receiver_ns = emu.namespaces()
        env = dict(os.environ, RTCLAB_SENDER_NS=sender_ns, RTCLAB_RECEIVER_NS=receiver_ns)
        if receiver:
            server = subprocess.Popen(["ip", "netns", "exec", receiver_ns, "sh", "-c", receiver],
                                      env=dict(env, RTCLAB_PEER=SENDER_ADDR, RTCLAB_SELF=RECEIVER_ADDR),
                                      preexec_fn=_die_with_parent)
        cmd = command or [os.environ.get("SHELL", "/bin/sh")]
        rc = subprocess.call(["ip", "netns", "exec", sender_ns, *cmd],
                             env=dict(env, RTCLAB_PEER=RECEIVER_ADDR, RTCLAB_SELF=SENDER_ADDR),
                             preexec_fn=_die_with_parent)
    finally:
        if server is not None and server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=3)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        emu.stop()
    import json
    summary = json.loads(emu.finish()[0])
    return rc, summary
