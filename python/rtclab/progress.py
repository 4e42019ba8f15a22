"""Progress of long runs on stderr (tqdm), shown only once a run has taken more than a second.

`ProgressBar` keeps rtclab's small interface (`update(done)` with the absolute amount done,
`close()`) over tqdm, which draws the bar, rate and time left. It appears only when stderr is a
terminal (or RTCLAB_PROGRESS=1), so quick runs, pipes and logs stay clean; tqdm is imported
only when a bar may be drawn.
"""

from __future__ import annotations

import os
import sys
import time


def _terminal_size() -> tuple[int, int]:
    """(columns, rows) of the terminal on stderr. A pseudo-terminal whose size was never set
    (`script`, a pty opened by a program, some CI runners) reports 0 x 0, and tqdm then draws
    nothing at all (a bar on row 0 of a 0-row screen is "off screen"): such a terminal counts as
    120 x 24."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
        cols, rows = size.columns, size.lines
    except (OSError, ValueError, AttributeError):
        cols, rows = 0, 0
    return (cols if cols > 0 else 120), (rows if rows > 0 else 24)


class ProgressBar:
    """`label: 42%|#####     | 12.3/60.0 s sim [00:00<00:01, 48.1 s sim/s]` on stderr."""

    def __init__(self, label: str, total: float, unit: str = "s sim", delay: float = 1.0, enabled: bool | None = None):
        self.label = label
        self.total = max(float(total), 1e-12)
        self.unit = unit
        self.delay = delay
        if enabled is None:
            enabled = sys.stderr.isatty() or os.environ.get("RTCLAB_PROGRESS") == "1"
        self.enabled = enabled
        self.start = time.perf_counter()
        self.bar = None
        self.done = 0.0

    @property
    def shown(self) -> bool:
        return self.bar is not None

    def update(self, done: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.start < self.delay:
                return
            from tqdm import tqdm

            # mininterval keeps redraws cheap; the bar is drawn on stderr even when it is a file
            # (RTCLAB_PROGRESS=1), which tqdm otherwise does too.
            self.bar = tqdm(total=self.total, desc=self.label, unit=self.unit, file=sys.stderr, mininterval=0.1,
                            bar_format="{desc}: {percentage:3.0f}%|{bar:30}| {n:.1f}/{total:.1f} {unit} "
                                       "[{elapsed}<{remaining}, {rate_fmt}]", dynamic_ncols=False, leave=True,
                            ncols=_terminal_size()[0], nrows=_terminal_size()[1])
        done = min(max(float(done), 0.0), self.total)
        if done > self.done:
            self.bar.update(done - self.done)
            self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Stages:
    """A long command made of a few long steps (`rtclab bench`): one line per step on stderr,
    `bench sim [3/9] gcc call, 300 s (gcc) ...`, under the same rule as the bar (a terminal, or
    RTCLAB_PROGRESS=1), and the time each took once it is done."""

    def __init__(self, label: str, total: int, enabled: bool | None = None):
        if enabled is None:
            enabled = sys.stderr.isatty() or os.environ.get("RTCLAB_PROGRESS") == "1"
        self.label, self.total, self.enabled = label, total, enabled
        self.k, self.t0 = 0, None

    def stage(self, what: str) -> None:
        self.done()
        self.k += 1
        self.t0 = time.perf_counter()
        if self.enabled:
            print(f"{self.label} [{self.k}/{self.total}] {what} ...", file=sys.stderr, end="", flush=True)

    def done(self) -> None:
        if self.t0 is not None and self.enabled:
            print(f" {time.perf_counter() - self.t0:.1f} s", file=sys.stderr, flush=True)
        self.t0 = None
