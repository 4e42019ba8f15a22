"""The real-network emulator through the CLI: outputs, exit status without privileges, and
cleanup on Ctrl-C, SIGTERM and SIGKILL (namespaces, devices, threads). Needs root and
/dev/net/tun (CI runs as root); skipped otherwise."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")
needs_root = pytest.mark.skipif(not ROOT, reason="the emulator needs root, /dev/net/tun and iproute2")

TWO_CUBIC = """
name = "emu-two-cubic"
duration = "{d}s"
[link]
capacity = "20Mbps"
queue = {{ limit = "1bdp", bdp_rtt = "40ms" }}
[metrics]
warmup = "2s"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = 2
"""


def namespaces_of(pid: int) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"rtclab-{pid}-")]


@needs_root
def test_emu_run_writes_the_simulators_outputs(cli, tmp_path):
    scn = tmp_path / "two.toml"
    scn.write_text(TWO_CUBIC.format(d=8))
    out = tmp_path / "out"
    r = cli("run", scn, "--engine", "emu", "--out", out, "--no-progress", timeout=120)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["engine"] == "emu"
    assert s["link"]["utilization"] > 0.8
    assert all(f["share"] > 0.2 for f in s["flows"])
    assert s["emulator"]["release_error_us"]["p50"] < 1000
    for f in ["flows.parquet", "link.parquet", "throughput.png", "report.html"]:
        assert (out / f).is_file(), f


@needs_root
def test_emu_rejects_what_it_cannot_run(cli, tmp_path):
    scn = tmp_path / "copa.toml"
    scn.write_text(TWO_CUBIC.format(d=5).replace('cc = "cubic"', 'cc = "copa"'))
    r = cli("run", scn, "--engine", "emu", "--out", tmp_path / "o")
    assert r.returncode == 2
    assert "not a Linux congestion control" in r.stderr and "cubic" in r.stderr
    assert not (tmp_path / "o").exists()


@needs_root
def test_emu_without_root_exits_2():
    """As an unprivileged user the run stops with one clear message and status 2 (the Rust
    front end `rtclab-emu`, run as nobody from a directory anyone may enter)."""
    import tempfile

    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) not installed")
    binary = os.environ.get("RTCLAB_EMU_BIN")
    if binary is None:
        pytest.skip("RTCLAB_EMU_BIN not set (make test-python sets it)")
    d = tempfile.mkdtemp(prefix="rtclab-nobody-")
    try:
        os.chmod(d, 0o755)
        target = os.path.join(d, "rtclab-emu")
        shutil.copy(binary, target)
        os.chmod(target, 0o755)
        scn = os.path.join(d, "s.toml")
        with open(scn, "w") as f:
            f.write(TWO_CUBIC.format(d=5))
        os.chmod(scn, 0o644)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", target, scn],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "needs root" in r.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _start(tmp_path, d=60):
    scn = tmp_path / "long.toml"
    scn.write_text(TWO_CUBIC.format(d=d))
    p = subprocess.Popen([sys.executable, "-m", "rtclab.cli", "run", str(scn), "--engine", "emu",
                          "--out", str(tmp_path / "out"), "--no-progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while len(namespaces_of(p.pid)) < 2:
        assert time.monotonic() < deadline, "the emulator never set up its namespaces"
        assert p.poll() is None, p.stderr.read().decode()
        time.sleep(0.1)
    time.sleep(1.0)
    return p


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_emu_interrupted_leaves_nothing_behind(tmp_path, sig):
    p = _start(tmp_path)
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err.decode()
    assert namespaces_of(p.pid) == []
    assert not (tmp_path / "out").exists()


@needs_root
def test_emu_killed_run_is_swept_by_the_next(cli, tmp_path):
    p = _start(tmp_path)
    p.kill()
    p.wait(timeout=10)
    assert len(namespaces_of(p.pid)) == 2, "SIGKILL cannot clean up"
    scn = tmp_path / "short.toml"
    scn.write_text(TWO_CUBIC.format(d=3))
    r = cli("run", scn, "--engine", "emu", "--out", tmp_path / "o2", "--no-progress", "--no-plots", timeout=60)
    assert r.returncode == 0, r.stderr
    assert namespaces_of(p.pid) == []
