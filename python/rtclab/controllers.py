"""Congestion controllers written in Python.

Register a factory under a name, then name it in a scenario like a built-in controller::

    import rtclab

    class FixedWindow:
        def __init__(self, args):                 # args: flow, role, packet_size,
            self.cwnd = args["params"].get("packets", 10) * args["packet_size"]
        def on_congestion_event(self, now, kind, bytes_in_flight):
            pass
        def target(self):
            return {"cwnd_bytes": self.cwnd}

    rtclab.register_controller("fixed_window", FixedWindow)
    rtclab.run({... "flows": [{"kind": "tcp", "cc": "fixed_window",
                               "params": {"packets": 20}, ...}]})

Entry points (all optional but `target`; times in seconds, rates in bit/s):
`on_packet_sent(now, seq, size, bytes_in_flight)`, `on_feedback(now, fb)` (a dict:
`acked_bytes`, `acked_packets`, `rtt`, `srtt`, `min_rtt`, `bytes_in_flight`, `snd_una`,
`snd_nxt`, `in_recovery`, `app_limited`, `lost_packets`), `on_congestion_event(now, kind,
bytes_in_flight)` (`"loss"` or `"timeout"`), `on_transport_feedback(now, packets)` (media: a
list of `(seq, send_time, arrival or None, size)`), `on_receiver_estimate(now, bps)`,
`on_loss_report(now, fraction_lost, rtt)`, `on_data_in_flight(now, bytes)` (media),
`on_media_frame(now, bytes, queue_delay, queued_bytes)` (media), `on_tx_start(now, idle)`
(tcp: sending again after an idle spell), `may_send(now, size)` -> bool (media: the
controller's own send gate), `poll_timeout()` -> seconds or None with `handle_timeout(now)`
(media: a timer), `target()` -> a dict with any of `cwnd_bytes`,
`pacing_rate_bps`, `target_rate_bps`, and `metrics()` -> up to 12 name -> number pairs (each a
column of `flows.parquet`). The factory is called once when the scenario is checked (so a bad
parameter is reported at its key) and once per flow per run; an exception it or a callback
raises ends the run and is raised from `rtclab.run`. See docs/controllers.md.
"""

from __future__ import annotations

from typing import Any, Callable

from rtclab import _core


def register_controller(name: str, factory: Callable[[dict], Any], *, tcp: bool = True,
                        media: bool = False, owns_recovery_window: bool = False,
                        simulator_only: str | None = None) -> None:
    """Registers `factory` under `name` for tcp flows (window/pacing) and/or media flows
    (target rate). Registering a name again replaces it; built-in names are refused.

    Capabilities, declared here as the built-in controllers declare theirs
    (`rtclab_cc::capabilities`): `owns_recovery_window=True` if the controller sets the window
    itself during loss recovery (the transport then applies no PRR, as for Copa and BBR);
    `simulator_only="why"` if it cannot run in the emulator (`--engine emu` then refuses the
    scenario with that reason)."""
    _core.register_controller(name, factory, tcp=tcp, media=media,
                              owns_recovery_window=owns_recovery_window,
                              simulator_only=simulator_only)


def unregister_controller(name: str) -> bool:
    """Removes a registered controller; returns whether there was one."""
    return _core.unregister_controller(name)


def registered_controllers() -> list[str]:
    return list(_core.registered_controllers())
