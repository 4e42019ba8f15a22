"""`rtclab.realclient.frames`: the overshoot detector replayed on a real client's frames."""

import pytest

from rtclab.realclient.frames import Frame, main, replay


def test_frames_that_the_target_pays_for_read_as_no_overshoot():
    # 100 kbit/s, a frame every 100 ms of exactly 10 kbit: the bucket drains before each.
    frames = [Frame(0.1 * k, 10_000.0) for k in range(50)]
    util = replay(frames, lambda t: 100_000.0, fps=30.0)
    # libwebrtc's first 30 frames of a stream read the default 1.2 (kMinFramesSinceLayoutChange)
    assert util[:29] == [pytest.approx(1.2)] * 29
    assert util[-1] == pytest.approx(1.0, abs=0.1)


def test_frames_are_timed_by_their_rtp_timestamps_across_the_wrap():
    from types import SimpleNamespace

    from rtclab.realclient.frames import video_frames

    def pkt(t, ts, n=1000):
        return SimpleNamespace(time_s=t, stream=(0, 0, 0, 0, 7), payload_type=96, timestamp=ts, payload=b"x" * n)

    # three frames 33 ms apart on the RTP clock, the second held 200 ms in the pacer; the
    # timestamp wraps between the first and the second
    first = 2**32 - 1000
    fr = video_frames([pkt(1.0, first), pkt(1.233, (first + 3000) % 2**32), pkt(1.240, (first + 6000) % 2**32)])
    assert [round(f.time_s, 3) for f in fr] == [0.0, 0.233, 0.24]
    assert [round(f.encoded_s, 4) for f in fr] == [0.0, 0.0333, 0.0667]


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


def test_frame_sizes_and_the_frames_csv_round_trip(tmp_path, capsys):
    from rtclab.realclient.frames import frame_sizes, read_frames_csv, write_frames_csv

    # a key frame of 2,100 B, then floor frames of 1,900, 2,000, 2,100 B in turn and one odd large frame
    frames = [Frame(0.0, 8 * 2100.0, 0.0)] + [Frame(0.033 * k, 8 * (1900.0 + 100 * (k % 3)), 0.033 * k)
                                              for k in range(1, 40)] + [Frame(1.4, 8 * 9000.0, 1.35)]
    z = frame_sizes(frames)
    assert z["key_bytes"] == 2100 and z["frames"] == 31
    assert z["median_bytes"] == 2000 and z["key_ratio"] == pytest.approx(1.05)
    assert z["spread"] == pytest.approx(1.4826 * 100 / 2000)  # the odd large frame moves nothing
    out = tmp_path / "f.csv"
    write_frames_csv(frames, out)
    back = read_frames_csv(out)
    assert [(round(f.time_s, 6), round(f.encoded_s, 6), round(f.bits)) for f in back] == [
        (round(f.time_s, 6), round(f.encoded_s, 6), round(f.bits)) for f in frames]
    with pytest.raises(FileExistsError):
        write_frames_csv(frames, out)  # never replaced
    assert read_frames_csv(out) == back and len(list(tmp_path.iterdir())) == 1  # no leftover
    with pytest.raises(ValueError, match="need more than 10"):
        frame_sizes(frames[:5])
