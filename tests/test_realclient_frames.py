"""`rtclab.realclient.frames`: the overshoot detector replayed on a real client's frames."""

import pytest

from rtclab.realclient.frames import Frame, main, replay


def test_frames_that_the_target_pays_for_read_as_no_overshoot():
    # 100 kbit/s, a frame every 100 ms of exactly 10 kbit: the bucket drains before each.
    frames = [Frame(0.1 * k, 10_000.0) for k in range(50)]
    util = replay(frames, lambda t: 100_000.0, fps=30.0)
    assert util[0] == pytest.approx(3.0)  # the first frame of a window: size / ideal (3.33 kbit)
    assert util[-1] == pytest.approx(1.0, abs=0.1)


def test_floor_frames_one_in_four_read_as_double_overshoot():
    # Frames of five ideal frames every four input frames at the rate that pays for four: each
    # leaves one ideal frame in the bucket, which the next pushes past: 2.0 a frame (the twin's
    # 4g case, docs/realclient.md).
    ideal = 100_000.0 / 30
    frames = [Frame(4 * k / 30, 5 * ideal) for k in range(100)]
    util = replay(frames, lambda t: 100_000.0, fps=30.0)
    assert util[-1] == pytest.approx(2.0, abs=0.01)


def test_a_missing_file_is_named(tmp_path, capsys):
    assert main([str(tmp_path / "none.pcap"), str(tmp_path / "none.csv")]) == 2
    assert "none.pcap" in capsys.readouterr().err


def test_acked_rate_of_a_steady_stream_and_of_too_few_packets():
    from rtclab.realclient.frames import acked_rate

    packets = [(0.01 * k, 1000) for k in range(300)]  # 1000 B every 10 ms: 800 kbit/s
    assert acked_rate(packets, 2.99) == pytest.approx(800_000, rel=0.02)
    assert acked_rate(packets[:5], 1.0) is None
