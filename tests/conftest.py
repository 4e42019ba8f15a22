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


#: The run count each paper's reproduction runs at in the suite: the one its doc's quoted
#: `| experiment | variant | metric | ours | paper | verdict |` rows come from. The repro tests
#: (tests/test_cli.py) and the docs-in-sync guard (tests/test_docs_in_sync.py) read the same run.
REPRO_RUNS = {"gcc": 10, "copa": 10, "qlibra": 10, "fairness": 2, "zhuge": 1, "confucius": 2, "hairpin": 1,
              "afr": 10, "metis": 1}


class ReproRuns:
    """`rtclab repro PAPER --runs REPRO_RUNS[PAPER]` once per test session, on the data shipped
    with rtclab (every RTCLAB_* variable but the emulator's binary dropped, as on a fresh clone)."""

    def __init__(self, root: Path):
        self.root = root
        self.done: dict = {}

    def get(self, paper: str):
        """(the finished process, its --out directory, the rows of its repro.json)."""
        if paper not in self.done:
            import json

            out = self.root / paper
            env = {k: v for k, v in os.environ.items() if not k.startswith("RTCLAB_") or k == "RTCLAB_EMU_BIN"}
            r = rtclab("repro", paper, "--runs", REPRO_RUNS[paper], "--out", out, "--no-progress", env=env,
                       timeout=1800)
            assert r.returncode == 0, r.stderr
            self.done[paper] = (r, out, json.loads((out / "repro.json").read_text()))
        return self.done[paper]


@pytest.fixture(scope="session")
def repro_runs(tmp_path_factory):
    return ReproRuns(tmp_path_factory.mktemp("repro"))
