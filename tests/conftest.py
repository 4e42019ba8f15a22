import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# The suite runs on the data shipped in the project (python/rtclab/data), as a fresh clone does:
# a developer's variables pointing at other copies are dropped (tests that need one set it).
for _var in ("RTCLAB_PENSIEVE_DATA", "RTCLAB_HAIRPIN_TABLES", "RTCLAB_ZHUGE_TRACES"):
    os.environ.pop(_var, None)


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


# Several seconds of wall time (a run that is still going when a test acts on it).
LONG = """
name = "long"
duration = "400s"
[link]
capacity = "1Gbps"
queue = { limit = "1bdp" }
[[flows]]
kind = "tcp"
rtt = "20ms"
count = 4
"""


@pytest.fixture
def good_scenario(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(GOOD)
    return p
