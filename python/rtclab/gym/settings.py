"""Checks of the Gymnasium environments' settings, with messages as a scenario's: the setting's
name, the value given and what is accepted. A NaN weight would make every reward NaN and a
negative one flip its sign, so neither is ever taken silently."""

from __future__ import annotations

import math
import numbers

from rtclab.runner import MAX_SEED


def number(name: str, value, lo: float | None = None, hi: float | None = None, lo_open: bool = False) -> float:
    """`value` as a float if it is a finite real number within [lo, hi] ((lo, hi] with lo_open)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    rng = (f"{'(' if lo_open else '['}{'-inf' if lo is None else f'{lo:g}'}, {'inf' if hi is None else f'{hi:g}'}]")
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number in {rng}, got {v}")
    if (lo is not None and (v <= lo if lo_open else v < lo)) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be in {rng}, got {v:g}")
    return v


def whole(name: str, value, lo: int, hi: int) -> int:
    """`value` if it is a whole number in lo..=hi."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be a whole number in {lo}..={hi}, got {value!r}")
    return int(value)


def seed(value) -> int:
    return whole("seed", value, 0, MAX_SEED)
