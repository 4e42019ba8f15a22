"""What every real-client peer shares: the emulation's clock, file signalling (a JSON file
written atomically, read once complete) and the command line (`offer|answer DIR
[--duration S] [--log FILE]`)."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path


def now_s() -> float:
    """Seconds on the emulation's time axis (`RTCLAB_START_MONOTONIC_NS`, CLOCK_MONOTONIC)."""
    start = int(os.environ.get("RTCLAB_START_MONOTONIC_NS", "0"))
    return (time.monotonic_ns() - start) / 1e9


def read_signal(path: Path) -> dict | None:
    """The signalling message at `path`, or None while it is absent or not yet complete."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None  # written but not yet complete


def no_signal(path: Path, timeout_s: float) -> TimeoutError:
    return TimeoutError(f"no {path.name} after {timeout_s:.0f} s: did the other peer start?")


def wait_for(path: Path, timeout_s: float) -> dict:
    """Blocks until the other peer's message is there (or raises after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        msg = read_signal(path)
        if msg is not None:
            return msg
        time.sleep(0.05)
    raise no_signal(path, timeout_s)


def write_atomically(path: Path, obj: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj))
    tmp.replace(path)


def parse_args(description: str, argv: list[str] | None) -> argparse.Namespace:
    """role, folder (created), duration (s of media, offer) and log (default DIR/sender.csv)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("role", choices=["offer", "answer"])
    p.add_argument("folder", type=Path)
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--log", type=Path, default=None)
    a = p.parse_args(argv)
    a.folder.mkdir(parents=True, exist_ok=True)
    a.log = a.log or a.folder / "sender.csv"
    return a
