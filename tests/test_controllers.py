"""Controllers from outside: a Python object registered by name runs as a flow's congestion
controller (tcp and media flows), its metrics become columns, and every mistake in it is a
clear error at the right place."""

import pytest

import rtclab
from rtclab import ConfigError


def scenario(cc: str, params: str = "", kind: str = "tcp", duration: str = "6s") -> str:
    return f"""
name = "py-controller"
duration = "{duration}"
[link]
capacity = "10Mbps"
queue = {{ limit = "100ms" }}
[metrics]
warmup = "2s"
[[flows]]
kind = "{kind}"
cc = "{cc}"
rtt = "100ms"
{params}
"""


class FixedWindow:
    """A window that never moves: throughput = window / RTT."""

    def __init__(self, args):
        self.cwnd = int(args["params"].get("packets", 10)) * args["packet_size"]
        if self.cwnd <= 0:
            raise ValueError("`packets` must be positive")
        self.acks = 0

    def on_feedback(self, now, fb):
        self.acks += fb["acked_packets"]

    def target(self):
        return {"cwnd_bytes": self.cwnd}

    def metrics(self):
        return {"acked_total": float(self.acks)}


class Aimd:
    """Additive increase (1 packet per window), multiplicative decrease (1/2) on loss."""

    def __init__(self, args):
        self.mss = args["packet_size"]
        self.cwnd = float(args["initial_window"] * self.mss)
        self.losses = 0

    def on_feedback(self, now, fb):
        if not fb["in_recovery"]:
            self.cwnd += self.mss * fb["acked_bytes"] / self.cwnd

    def on_congestion_event(self, now, kind, inflight):
        self.losses += 1
        self.cwnd = max(2 * self.mss, self.cwnd / 2)

    def target(self):
        return {"cwnd_bytes": self.cwnd}

    def metrics(self):
        return {"losses": float(self.losses)}


class ConstantRate:
    def __init__(self, args):
        self.bps = args["params"]["mbps"] * 1e6

    def on_transport_feedback(self, now, packets):
        assert all(len(p) == 4 for p in packets)

    def target(self):
        return {"target_rate_bps": self.bps}


@pytest.fixture
def registered():
    names = []

    def reg(name, factory, **kw):
        rtclab.register_controller(name, factory, **kw)
        names.append(name)

    yield reg
    for n in names:
        rtclab.unregister_controller(n)


def test_a_python_window_controller_drives_a_tcp_flow(registered):
    registered("py_fixed", FixedWindow)
    r = rtclab.run(scenario("py_fixed", "params = { packets = 20 }"), progress=False)
    # 20 x 1500 B per 100 ms = 2.4 Mbit/s, well under the 10 Mbit/s link.
    assert r.summary["flows"][0]["cc"] == "py_fixed"
    assert r.summary["flows"][0]["throughput_mbps"] == pytest.approx(2.4, rel=0.03)
    assert r.flows["cwnd_packets"].dropna().eq(20).all()
    # Its own metric is a column, growing with the acknowledgements.
    acked = r.flows["acked_total"].dropna()
    assert acked.is_monotonic_increasing and acked.iloc[-1] > 1000


def test_a_python_aimd_fills_the_link_and_backs_off(registered):
    registered("py_aimd", Aimd)
    # Additive increase from 10 packets needs ~15 s to fill the pipe and the 100 ms queue.
    r = rtclab.run(scenario("py_aimd", duration="40s"), progress=False)
    assert r.summary["link"]["utilization"] > 0.85
    assert r.summary["link"]["drops"]["queue_overflow"] > 0
    assert r.flows["losses"].max() >= 2
    cwnd = r.flows["cwnd_packets"].dropna()
    assert cwnd.max() > 1.5 * cwnd.min()  # a sawtooth, not a constant


def test_a_python_media_controller_sets_the_target(registered):
    registered("py_const", ConstantRate, tcp=False, media=True)
    r = rtclab.run(scenario("py_const", "params = { mbps = 1.5 }", kind="media"), progress=False)
    assert r.flows["target_mbps"].dropna().eq(1.5).all()
    assert r.summary["flows"][0]["throughput_mbps"] == pytest.approx(1.5, rel=0.15)


class Watching(ConstantRate):
    """A constant rate that keeps what the sender tells it beyond the feedback."""

    def __init__(self, args):
        super().__init__(args)
        self.in_flight, self.frames = [], []

    def on_data_in_flight(self, now, n):
        self.in_flight.append(n)

    def on_media_frame(self, now, size, queue_delay, queued):
        self.frames.append((size, queue_delay, queued))

    def metrics(self):
        mean = sum(self.in_flight) / len(self.in_flight) if self.in_flight else float("nan")
        told = sum(1 for size, wait, queued in self.frames if size > 0 and wait >= 0 and queued >= 0)
        return {"in_flight_kb": mean / 1e3, "frames_told": float(told)}


def test_a_python_media_controller_is_told_bytes_in_flight_and_frames(registered):
    registered("py_watch", Watching, tcp=False, media=True)
    r = rtclab.run(scenario("py_watch", "params = { mbps = 1.5 }", kind="media"), progress=False)
    # 1.5 Mbit/s over a 100 ms RTT keeps about 19 kB in flight (feedback arrives every ~50 ms
    # and covers what left up to half an RTT before): between a quarter and twice that.
    kb = r.flows["in_flight_kb"].dropna()
    assert kb.between(19 / 4, 2 * 19).all(), kb.describe()
    # One call per encoded frame: 30 fps by default, 6 s.
    told = r.flows["frames_told"].dropna().iloc[-1]
    assert 150 <= told <= 185, told


class StepAtTwoSeconds(ConstantRate):
    """1 Mbit/s, then 3 Mbit/s from a timer set for t = 2 s."""

    def __init__(self, args):
        self.bps, self.at, self.fired = 1e6, 2.0, []

    def poll_timeout(self):
        return self.at

    def handle_timeout(self, now):
        self.fired.append(now)
        self.bps, self.at = 3e6, None

    def metrics(self):
        return {"timeouts": float(len(self.fired)), "fired_at": self.fired[0] if self.fired else float("nan")}


def test_a_python_media_controller_keeps_a_timer(registered):
    registered("py_step", StepAtTwoSeconds, tcp=False, media=True)
    r = rtclab.run(scenario("py_step", kind="media"), progress=False)
    f = r.flows.dropna(subset=["target_mbps"])
    assert f[f.time_s <= 2.0]["target_mbps"].eq(1.0).all()
    assert f[f.time_s > 2.2]["target_mbps"].eq(3.0).all()
    last = r.flows.dropna(subset=["timeouts"]).iloc[-1]
    assert last["timeouts"] == 1 and last["fired_at"] == pytest.approx(2.0, abs=1e-6)


def test_a_python_timer_already_past_fires_at_once_and_the_clock_never_runs_back(registered):
    # The flow starts at 3 s; its controller's timer says 2 s.
    registered("py_step_late", StepAtTwoSeconds, tcp=False, media=True)
    r = rtclab.run(scenario("py_step_late", 'start = "3s"', kind="media"), progress=False)
    last = r.flows.dropna(subset=["timeouts"]).iloc[-1]
    assert last["timeouts"] == 1 and 3.0 <= last["fired_at"] < 3.1
    assert r.flows["time_s"].is_monotonic_increasing


class Gated(ConstantRate):
    """2 Mbit/s, but at most 4 packets in flight (told by on_data_in_flight) may leave."""

    def __init__(self, args):
        self.bps, self.in_flight, self.held = 2e6, 0, 0
        self.mss = args["packet_size"]

    def on_data_in_flight(self, now, n):
        self.in_flight = n

    def on_packet_sent(self, now, seq, size, in_flight):
        self.in_flight += size

    def may_send(self, now, size):
        ok = self.in_flight + size <= 4 * self.mss
        self.held += not ok
        return ok

    def metrics(self):
        return {"held": float(self.held)}


def test_a_python_media_controller_gates_its_own_packets(registered):
    registered("py_gate", Gated, tcp=False, media=True)
    r = rtclab.run(scenario("py_gate", kind="media"), progress=False)
    # 4 packets per 100 ms round trip is about 0.5 Mbit/s, a quarter of the 2 Mbit/s target.
    assert r.flows["held"].dropna().iloc[-1] > 100
    assert r.summary["flows"][0]["throughput_mbps"] < 0.8


def test_a_python_timer_must_move_on(registered):
    class Stuck(ConstantRate):
        def __init__(self, args):
            self.bps = 1e6

        def poll_timeout(self):
            return 1.0

        def handle_timeout(self, now):
            pass

    class Half(ConstantRate):
        def __init__(self, args):
            self.bps = 1e6

        def poll_timeout(self):
            return None

    registered("py_stuck", Stuck, tcp=False, media=True)
    with pytest.raises(ValueError, match="not after the last timeout it was given"):
        rtclab.run(scenario("py_stuck", kind="media"), progress=False)
    registered("py_half", Half, tcp=False, media=True)
    with pytest.raises(ConfigError, match="poll_timeout.*no handle_timeout"):
        rtclab.run(scenario("py_half", kind="media"), progress=False)


def test_mistakes_are_named(registered):
    registered("py_fixed", FixedWindow)
    with pytest.raises(ValueError, match="built-in"):
        rtclab.register_controller("cubic", FixedWindow)
    with pytest.raises(TypeError, match="callable"):
        rtclab.register_controller("py_x", 3)
    # An unknown name lists the registered ones.
    with pytest.raises(ConfigError, match="py_fixed") as e:
        rtclab.run(scenario("py_fixedd"), progress=False)
    assert e.value.path == "flows[0].cc"
    # The factory's own complaint, at the parameter it names.
    with pytest.raises(ConfigError, match="must be positive") as e:
        rtclab.run(scenario("py_fixed", "params = { packets = 0 }"), progress=False)
    assert e.value.path == "flows[0].params.packets"
    # A tcp-only controller on a media flow.
    with pytest.raises(ConfigError, match="does not serve media"):
        rtclab.run(scenario("py_fixed", kind="media"), progress=False)


def test_an_exception_inside_a_callback_ends_the_run_and_is_raised(registered):
    class Broken(FixedWindow):
        def on_feedback(self, now, fb):
            if now > 1.0:
                raise RuntimeError("model crashed at t=%.1f" % now)

    class BadTarget(FixedWindow):
        def target(self):
            return {"cwnd": 3}

    registered("py_broken", Broken)
    registered("py_bad_target", BadTarget)
    with pytest.raises(RuntimeError, match="model crashed"):
        rtclab.run(scenario("py_broken"), progress=False)
    with pytest.raises(ConfigError, match='unknown key "cwnd"'):
        rtclab.run(scenario("py_bad_target"), progress=False)


def test_a_python_media_controller_runs_in_the_emulator_too(registered):
    import os
    import shutil
    if not (os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")):
        pytest.skip("the emulator needs root, /dev/net/tun and iproute2")
    registered("py_const", ConstantRate, tcp=False, media=True)
    r = rtclab.run(scenario("py_const", "params = { mbps = 1.5 }", kind="media"),
                   progress=False, engine="emu")
    assert r.flows["target_mbps"].dropna().eq(1.5).all()
    assert r.summary["flows"][0]["throughput_mbps"] == pytest.approx(1.5, rel=0.15)
    # A tcp flow with a Python controller is rtclab's own TCP over UDP in the emulator:
    # 10 packets per 100 ms round trip = 1.2 Mbit/s.
    registered("py_fixed", FixedWindow)
    r = rtclab.run(scenario("py_fixed"), progress=False, engine="emu")
    assert r.flows["cwnd_packets"].dropna().eq(10).all()
    assert r.flows["acked_total"].dropna().is_monotonic_increasing
    assert r.summary["flows"][0]["throughput_mbps"] == pytest.approx(1.2, rel=0.1)


def test_a_python_controller_declares_its_capabilities(registered):
    """Capabilities are declared with the registration and checked by the same generic code as
    the built-in controllers': a simulator-only controller is refused by the emulator with its
    own reason, before anything starts."""
    registered("py_sim_only", FixedWindow, simulator_only="it reads the simulator's ground truth")
    with pytest.raises(Exception, match=r'cc = "py_sim_only" runs in the simulator only '
                                        r"\(it reads the simulator's ground truth\)"):
        rtclab.run(scenario("py_sim_only"), engine="emu", progress=False)
    # The simulator runs it.
    r = rtclab.run(scenario("py_sim_only"), progress=False)
    assert r.summary["flows"][0]["cc"] == "py_sim_only"
    registered("py_own_recovery", FixedWindow, owns_recovery_window=True)
    r = rtclab.run(scenario("py_own_recovery"), progress=False)
    assert r.summary["flows"][0]["throughput_mbps"] > 0
