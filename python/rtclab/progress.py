"""A small terminal progress bar for long runs (stderr, shown only after one second)."""

from __future__ import annotations

import os
import sys
import time


class ProgressBar:
    """Draws `label [#####-----] 42% 12.3/60.0 s sim, 0.8 s wall` on stderr.

    Appears only once the run has taken longer than `delay` seconds, and only when stderr is a
    terminal (or RTCLAB_PROGRESS=1), so quick runs and logs stay clean.
    """

    def __init__(self, label: str, total: float, unit: str = "s sim", delay: float = 1.0, enabled: bool | None = None):
        self.label = label
        self.total = max(total, 1e-12)
        self.unit = unit
        self.delay = delay
        if enabled is None:
            enabled = sys.stderr.isatty() or os.environ.get("RTCLAB_PROGRESS") == "1"
        self.enabled = enabled
        self.start = time.perf_counter()
        self.shown = False
        self.last_draw = 0.0

    def update(self, done: float) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.start
        if elapsed < self.delay or (now - self.last_draw < 0.1 and done < self.total):
            return
        self.last_draw = now
        self.shown = True
        frac = min(max(done / self.total, 0.0), 1.0)
        width = 30
        filled = int(frac * width)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(
            f"\r{self.label} [{bar}] {frac * 100:5.1f}% {done:.1f}/{self.total:.1f} {self.unit}, {elapsed:.1f} s wall"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
