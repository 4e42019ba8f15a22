import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def rtclab(*args, cwd=None, env=None, timeout=300):
    """Runs the CLI in a subprocess; returns CompletedProcess (text)."""
    return subprocess.run(
        [sys.executable, "-m", "rtclab.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return rtclab


GOOD = """
name = "small"
duration = "5s"
[link]
capacity = "10Mbps"
queue = { limit = "1bdp" }
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = 2
"""


@pytest.fixture
def good_scenario(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(GOOD)
    return p
