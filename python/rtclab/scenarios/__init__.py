"""Built-in scenarios and scenario loading.

A scenario can be given as a path to a TOML file, the name of a built-in scenario
(`rtclab list`), TOML text, or a dict with the same structure as the TOML file.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, Union

from rtclab import _core

BUILTIN_DIR = Path(__file__).resolve().parent
DEFAULT = "default"

ScenarioLike = Union[str, Path, dict]


class ScenarioNotFound(FileNotFoundError):
    """Neither a readable file nor a built-in scenario name."""


class ScenarioSource(NamedTuple):
    """Scenario text ready for the core, plus where it came from. (A named tuple, not a
    dataclass: `dataclasses` imports `inspect`, a tenth of `rtclab run`'s start-up.)"""

    text: str
    format: str  # "toml" or "json"
    base_dir: str
    origin: str  # file path, "builtin:NAME" or "<dict>"/"<text>"

    @property
    def display(self) -> str:
        return self.origin


#: The sender every experiment rtclab ships (reproductions, test suites, the learning
#: environments, benchmarks) was built, calibrated and documented with: an encoder that meets
#: its target. A user's own media flow defaults to libwebrtc's sender (`media.sender`,
#: docs/scenario.md); these name theirs with `with_sender`.
SHIPPED_SENDER = "ideal"


def with_sender(scenario: dict[str, Any], sender: str = SHIPPED_SENDER) -> dict[str, Any]:
    """A copy of the scenario dict whose media flows without a `media.sender` of their own
    have `sender` (the dict given is not changed; anything but a dict is returned as it is)."""
    if not isinstance(scenario, dict):
        return scenario
    flows = scenario.get("flows")
    if not isinstance(flows, list):
        return scenario
    out = dict(scenario)
    out["flows"] = []
    for f in flows:
        if isinstance(f, dict) and f.get("kind") == "media":
            media = f.get("media")
            if media is None or (isinstance(media, dict) and "sender" not in media):
                f = {**f, "media": {**(media or {}), "sender": sender}}
        out["flows"].append(f)
    return out


def builtin_scenarios() -> dict[str, Path]:
    """Name -> path of every built-in scenario."""
    return {p.stem: p for p in sorted(BUILTIN_DIR.glob("*.toml"))}


def builtin_description(path: Path) -> str:
    import tomllib

    with open(path, "rb") as f:
        return tomllib.load(f).get("description", "")


def load_scenario(scenario: ScenarioLike = DEFAULT) -> ScenarioSource:
    """Resolves a path, built-in name, TOML text or dict into a `ScenarioSource`."""
    if isinstance(scenario, ScenarioSource):
        return scenario
    if isinstance(scenario, dict):
        return ScenarioSource(json.dumps(scenario), "json", str(Path.cwd()), "<dict>")
    if isinstance(scenario, str) and not scenario.strip():
        raise ScenarioNotFound("the scenario is empty: give a file, a built-in name (`rtclab list`), TOML text or a dict")
    if isinstance(scenario, Path) or (isinstance(scenario, str) and "\n" not in scenario and "=" not in scenario):
        name = str(scenario)
        path = Path(name)
        if path.exists():
            from rtclab.inputs import InputFileError, read_input_text

            try:
                text = read_input_text(path, "scenario")
            except InputFileError as e:
                raise ScenarioNotFound(str(e)) from e
            return ScenarioSource(text, "toml", str(path.resolve().parent), str(path))
        builtins = builtin_scenarios()
        if name in builtins:
            p = builtins[name]
            return ScenarioSource(p.read_text(encoding="utf-8"), "toml", str(BUILTIN_DIR), f"builtin:{name}")
        raise ScenarioNotFound(
            f"no such file or built-in scenario: {name!r} (built-ins: {', '.join(builtins)}; see `rtclab list`)"
        )
    if isinstance(scenario, str):
        return ScenarioSource(scenario, "toml", str(Path.cwd()), "<text>")
    raise TypeError(f"a scenario is a path, a built-in name, TOML text or a dict, not {type(scenario).__name__}")


FILE_KEYS = ("trace", "frame_sizes")


def file_references(data: Any) -> list[str]:
    """The file names (`trace`, `frame_sizes`) a parsed scenario refers to, each once, in order."""
    refs: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k in FILE_KEYS and isinstance(x, str):
                    refs.append(x)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(data)
    return list(dict.fromkeys(refs))


def input_files(src: ScenarioSource) -> list[Path]:
    """The files a scenario reads: its own file and every trace or frame-size file it names."""
    files = [Path(src.origin)] if Path(src.origin).is_file() else []
    if not may_name_files(src.text):
        return files
    try:
        data = parse_text(src)
    except ValueError:
        return files
    return files + [Path(src.base_dir) / x for x in file_references(data)]


def may_name_files(text: str) -> bool:
    """False only if the scenario text cannot name a file: none of `FILE_KEYS` appears in it
    and no escape could spell one (a key is written as itself, quoted or dotted, or with
    `\\u` escapes inside double quotes); then it need not be parsed."""
    return any(k in text for k in FILE_KEYS) or "\\u" in text or "\\U" in text


def parse_text(src: ScenarioSource) -> Any:
    """The scenario text as Python data (ValueError if it does not parse)."""
    if src.format == "json":
        return json.loads(src.text)
    import tomllib  # imported when needed: not every run reads its scenario in Python

    return tomllib.loads(src.text)


def validate(scenario: ScenarioLike) -> dict[str, Any]:
    """Validates without running; returns name, duration, flow count and the estimated cost.
    Raises ConfigError (with `.path`, `.value` and `.message`)."""
    src = load_scenario(scenario)
    with config_values(src):
        return _core.validate(src.text, src.format, src.base_dir)


_PATH_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def value_at(src: ScenarioSource, path: str) -> Any:
    """The value the scenario text has at a `ConfigError.path` such as `flows[1].cc` or
    `link.queue.limit`; None where the path names no value (a missing key, a syntax error)."""
    if not path or path.startswith("line "):
        return None
    try:
        data: Any = parse_text(src)
    except ValueError:
        return None
    for key, index in _PATH_STEP.findall(path):
        if key and isinstance(data, dict) and key in data:
            data = data[key]
        elif index and isinstance(data, list) and int(index) < len(data):
            data = data[int(index)]
        else:
            return None
    return data


@contextmanager
def config_values(src: ScenarioSource):
    """Fills `.value` of a ConfigError raised inside from the scenario text (and `.path`,
    `.message` where the error came without them)."""
    try:
        yield
    except _core.ConfigError as e:
        if not hasattr(e, "path"):
            e.path = ""
        if not hasattr(e, "message"):
            e.message = str(e)
        e.value = value_at(src, e.path)
        raise
