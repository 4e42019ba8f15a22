"""Long runs: the progress bar, and Ctrl-C leaving nothing behind."""

import os
import select
import signal
import subprocess
import sys
import time

from conftest import LONG

# Several seconds of wall time even on a fast machine: the bar appears only after one second.
MEDIUM = LONG.replace('"400s"', '"150s"')


def test_ctrl_c_stops_cleanly(tmp_path):
    scn = tmp_path / "long.toml"
    scn.write_text(LONG)
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, "-m", "rtclab.cli", "run", str(scn), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, RTCLAB_PROGRESS="1"),
    )
    # Wait until the simulation is visibly running (the progress bar appears after 1 s).
    seen = b""
    deadline = time.monotonic() + 60
    while b"simulating:" not in seen:
        assert time.monotonic() < deadline, seen
        assert p.poll() is None, "the run ended before it could be interrupted"
        ready, _, _ = select.select([p.stderr], [], [], 1.0)
        if ready:
            seen += os.read(p.stderr.fileno(), 4096)
    p.send_signal(signal.SIGINT)
    _, rest = p.communicate(timeout=30)
    err = (seen + rest).decode()
    assert p.returncode == 130, err
    assert "interrupted" in err
    assert not out.exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["long.toml"]


def test_progress_bar_on_long_runs(tmp_path):
    scn = tmp_path / "medium.toml"
    scn.write_text(MEDIUM)
    env = dict(os.environ, RTCLAB_PROGRESS="1")
    r = subprocess.run(
        [sys.executable, "-m", "rtclab.cli", "run", str(scn), "--out", str(tmp_path / "o"), "--no-plots"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "simulating:" in r.stderr
    assert "100%|" in r.stderr and "150.0/150.0 s sim" in r.stderr
    # Without a terminal and without the variable, no bar.
    r2 = subprocess.run(
        [sys.executable, "-m", "rtclab.cli", "run", str(scn), "--out", str(tmp_path / "o2"), "--no-plots"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "simulating" not in r2.stderr
