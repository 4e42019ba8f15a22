"""The run summary as a typed object, checked against the one schema.

`summary.json` is written from one Rust type (`rtclab_harness::summary::Summary`); its JSON
Schema is generated from that type (`schema()`, published as `docs/summary.schema.json`), so
the Python side reads the same fields the engines write. `Summary(d)` wraps a summary dict
with attribute access that knows those fields::

    s = rtclab.Summary(result.summary)
    s.flows[0].media.frame_delay_ms.p95      # a typo is an AttributeError naming the fields
    s.link.utilization

Every metric has one spelling: the path in the summary joined with ``_``
(``media.frame_delay_ms.p95`` -> ``frame_delay_ms_p95``), the name sweep catalogs and suite
tables use. `canonical_metric` maps the spellings earlier versions used (`METRIC_RENAMES`)
to it, with a `DeprecationWarning`.
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any, Iterator

from rtclab import _core

#: Spellings earlier versions used -> the one spelling now.
METRIC_RENAMES = {
    "frame_delay_p95_ms": "frame_delay_ms_p95",
    "frame_delay_p50_ms": "frame_delay_ms_p50",
    "frame_delay_mean_ms": "frame_delay_ms_mean",
    "frame_delay_ms.p95": "frame_delay_ms_p95",
    "frame_delay_ms.p50": "frame_delay_ms_p50",
    "queuing_delay_p95_ms": "queuing_delay_ms_p95",
    "queuing_delay_ms.p95": "queuing_delay_ms_p95",
}


def canonical_metric(name: str) -> str:
    """The one spelling of metric `name` (a deprecated spelling warns and is mapped)."""
    new = METRIC_RENAMES.get(name)
    if new is None:
        return name
    warnings.warn(f"metric {name!r} is now spelled {new!r}", DeprecationWarning, stacklevel=2)
    return new


@functools.lru_cache(maxsize=None)
def _schema_text() -> str:
    return _core.summary_schema()


def summary_schema() -> dict[str, Any]:
    """The JSON Schema of `summary.json` (draft 2020-12), generated from the Rust type."""
    return json.loads(_schema_text())


schema = summary_schema


def _resolve(node: dict, defs: dict) -> dict:
    """Follows `$ref` and an optional's `anyOf [T, null]` to T's schema."""
    while True:
        if "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in node:
            rest = [n for n in node["anyOf"] if n.get("type") != "null"]
            if len(rest) != 1:
                return node
            node = rest[0]
        else:
            return node


def _wrap(value: Any, node: dict, defs: dict, path: str) -> Any:
    node = _resolve(node, defs)
    if isinstance(value, dict) and "properties" in node:
        return Summary(value, node, defs, path)
    if isinstance(value, list) and "items" in node:
        return [_wrap(v, node["items"], defs, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


class Summary:
    """A summary (or a part of one) with attribute access to the fields its schema names."""

    __slots__ = ("_d", "_node", "_defs", "_path")

    def __init__(self, d: dict, node: dict | None = None, defs: dict | None = None, path: str = "summary"):
        if node is None:
            full = schema()
            node, defs = full, full.get("$defs", {})
        object.__setattr__(self, "_d", d)
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_defs", defs)
        object.__setattr__(self, "_path", path)

    def fields(self) -> list[str]:
        return list(self._node.get("properties", {}))

    def __getattr__(self, name: str) -> Any:
        props = self._node.get("properties", {})
        if name not in props:
            raise AttributeError(f"{self._path} has no field {name!r}; its fields: {', '.join(props)}")
        return _wrap(self._d.get(name), props[name], self._defs, f"{self._path}.{name}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Summary is read-only; change the dict it wraps (to_dict())")

    def __getitem__(self, key: str) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def to_dict(self) -> dict:
        return self._d

    def __repr__(self) -> str:
        return f"<{self._path}: {', '.join(self.fields())}>"


def problems(d: dict) -> list[str]:
    """What in summary dict `d` the schema does not describe, or misses: unknown keys and
    missing required keys at every level (an empty list for a summary the engines wrote)."""
    full = schema()
    defs = full.get("$defs", {})
    out: list[str] = []

    def walk(value: Any, node: dict, path: str) -> None:
        node = _resolve(node, defs)
        if isinstance(value, dict) and "properties" in node:
            props = node["properties"]
            for k in value:
                if k not in props and node.get("additionalProperties") is not True:
                    out.append(f"{path}.{k}: not in the schema")
            for k in node.get("required", []):
                if k not in value:
                    out.append(f"{path}.{k}: missing")
            for k, v in value.items():
                if k in props:
                    walk(v, props[k], f"{path}.{k}")
        elif isinstance(value, list) and "items" in node:
            for i, v in enumerate(value):
                walk(v, node["items"], f"{path}[{i}]")

    walk(d, full, "summary")
    return out
