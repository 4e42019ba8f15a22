"""The options of `rtclab metis convert`, `rtclab metis rtc`, `rtclab metis design` and `rtclab metis auto` (and of
`rtclab.metis_convert`, `rtclab.metis_rtc`, `rtclab.metis_design`, `rtclab.metis_auto`): one place for their defaults, light to import (the CLI's parser reads them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass
class ConvertOptions:
    """`rtclab metis convert`'s options (the CLI's flags; their defaults are these)."""

    traces: Optional[str] = None
    teacher: str = "pensieve"
    qoe: str = "lin"
    iterations: int = 50
    videos: int = 10
    max_leaves: Optional[int] = 200
    resample: str = "uniform"
    no_reward_aware: bool = False
    holdout: str = "resample"
    oversample: Optional[str] = None
    greedy_teacher: bool = False
    seed: int = 0
    quiet: bool = False


@dataclass
class RtcOptions:
    """`rtclab metis rtc`'s options (the CLI's flags; their defaults are these)."""

    train: int = 8
    test: int = 6
    rounds: int = 2
    max_seconds: float = 300.0
    es_generations: int = 8
    iterations: int = 4
    max_leaves: Optional[int] = 100
    seed: int = 0


@dataclass
class DesignOptions:
    """`rtclab metis design`'s options (the CLI's flags; their defaults are these)."""

    iterations: int = 2000
    seeds: str = "0"
    eval_every: int = 50
    agents: int = 16
    traces: Optional[str] = None
    quiet: bool = False


@dataclass
class AutoOptions:
    """`rtclab metis auto`'s options (the CLI's flags; their defaults are these)."""

    workload: str = "websearch"
    load: float = 0.7
    srla_steps: int = 2000
    lrla_episodes: int = 100
    iterations: int = 5
    episodes: int = 3
    max_leaves: int = 100
    test_seeds: int = 10
    test_seconds: float = 4.0
    seed: int = 0
    quiet: bool = False


@dataclass
class DeployOptions:
    """`rtclab metis deploy`'s options (the CLI's flags; their defaults are these)."""

    tree: Optional[str] = None
    iterations: int = 10
    runs: int = 3
    seconds: float = 30.0
    rate_kbps: float = 1200.0
    rtt_ms: float = 80.0
    tfjs: str = "4.22.0"
    chromium: Optional[str] = None
    seed: int = 0
    quiet: bool = False
