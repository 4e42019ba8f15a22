"""The deployment case's web site (spec `zhuge-metis.md` B.6.4): three dash.js pages over one video.

- `fixed.html`: dash.js with a rule that always picks the lowest level (the Metis pages' `fixed`,
  the reference the other two are measured against);
- `tree.html`: dash.js + Metis' Pensieve tree as flat arrays (`tree.js`) + Pensieve's state (which
  needs the next chunk's sizes: `sizes.js`, as Pensieve's server reads them);
- `pensieve.html`: dash.js + TensorFlow.js + Pensieve's released actor (`pensieve/model.json`,
  `pensieve/weights.bin`) + the same state.

The video is Pensieve's: 48 chunks of 4 s at 300-4300 kbit/s whose sizes are the released
`video_size_0..5` (`rtclab/data/pensieve`). Its segments are made on request (`Video.segment`)
from one 4-second VP9 fragment (`web/clip`, see `web/make_clip.py`): each is stamped with its
sequence number and decode time and padded with a `free` box to the chunk's size, so dash.js
downloads Pensieve's bytes and the decoder plays a valid stream. Only the pages, scripts and model
are written to disk (a few MB); the 270 MB of segments never are.
"""

from __future__ import annotations

import json
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rtclab.metis.pensieve import BITRATES_KBPS

WEB = Path(__file__).resolve().parent / "web"
CHUNKS = 48
CHUNK_S = 4
PAGES = ("fixed", "tree", "pensieve")


class SiteError(ValueError):
    """A site that cannot be built from what was given; the message says what."""


def boxes(data: bytes, start: int = 0, end: int | None = None):
    """(type, start, size) of each ISO-BMFF box between `start` and `end` (default: the top level)."""
    end = len(data) if end is None else end
    i = start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", data[i:i + 8])
        if size < 8 or i + size > end:
            raise SiteError(f"broken MP4 box {kind!r} at byte {i}")
        yield kind.decode("latin-1"), i, size
        i += size


def _find(data: bytes, path: list[str], start: int = 0, end: int | None = None) -> tuple[int, int]:
    """(start, size) of the first box along `path` (types, outermost first)."""
    for kind, at, size in boxes(data, start, end):
        if kind == path[0]:
            if len(path) == 1:
                return at, size
            return _find(data, path[1:], at + 8, at + size)
    raise SiteError(f"no {'/'.join(path)} box in the clip")


@dataclass
class Clip:
    init: bytes
    fragment: bytes
    timescale: int
    duration: int        # of the fragment, in timescale units
    codecs: str
    width: int
    height: int

    @classmethod
    def load(cls, folder: Path = WEB / "clip") -> "Clip":
        init, frag = (folder / "init.mp4").read_bytes(), (folder / "media.m4s").read_bytes()
        at, _ = _find(init, ["moov", "trak", "mdia", "mdhd"])
        version = init[at + 8]
        timescale = struct.unpack(">I", init[at + (28 if version == 1 else 20):][:4])[0]
        i = init.find(b"vpcC")
        if i < 0:
            raise SiteError("the clip is not VP9 (no vpcC box)")
        profile, level, depth = init[i + 8], init[i + 9], init[i + 10] >> 4
        j = init.find(b"vp09")
        width, height = struct.unpack(">HH", init[j + 4 + 24:j + 4 + 28])
        duration = cls._duration(frag)
        return cls(init, frag, timescale, duration, f"vp09.{profile:02d}.{level:02d}.{depth:02d}", width, height)

    @staticmethod
    def _duration(frag: bytes) -> int:
        at, size = _find(frag, ["moof", "traf"])
        default = None
        total = 0
        for kind, b, n in boxes(frag, at + 8, at + size):
            flags = int.from_bytes(frag[b + 9:b + 12], "big")
            if kind == "tfhd":
                off = b + 16 + (8 if flags & 0x1 else 0) + (4 if flags & 0x2 else 0)
                if flags & 0x8:
                    default = struct.unpack(">I", frag[off:off + 4])[0]
            elif kind == "trun":
                count = struct.unpack(">I", frag[b + 12:b + 16])[0]
                off = b + 16 + (4 if flags & 0x1 else 0) + (4 if flags & 0x4 else 0)
                per = 4 * sum(1 for bit in (0x100, 0x200, 0x400, 0x800) if flags & bit)
                if flags & 0x100:
                    total += sum(struct.unpack(">I", frag[off + k * per:off + k * per + 4])[0] for k in range(count))
                elif default is not None:
                    total += default * count
                else:
                    raise SiteError("the clip's fragment states no sample durations")
        return total

    def segment(self, number: int, size: int) -> bytes:
        """Media segment `number` (1-based), `size` bytes long."""
        out = bytearray(self.fragment)
        at, _ = _find(out, ["moof", "mfhd"])
        struct.pack_into(">I", out, at + 12, number)
        at, _ = _find(out, ["moof", "traf", "tfdt"])
        t = (number - 1) * self.duration
        if out[at + 8] == 1:
            struct.pack_into(">Q", out, at + 12, t)
        else:
            struct.pack_into(">I", out, at + 12, t)
        pad = size - len(out)
        if pad < 8:
            raise SiteError(f"a {size}-byte chunk is smaller than the clip's fragment ({len(out)} bytes) plus a "
                            f"free box")
        out += struct.pack(">I4s", pad, b"free") + bytes(pad - 8)
        return bytes(out)


class Video:
    """Pensieve's video over the clip: manifest and segments by (level, number)."""

    def __init__(self, sizes: np.ndarray, clip: Clip | None = None):
        self.sizes = np.asarray(sizes, dtype=np.int64)
        if self.sizes.shape[0] != len(BITRATES_KBPS) or self.sizes.shape[1] < CHUNKS:
            raise SiteError(f"chunk sizes must be {len(BITRATES_KBPS)} levels × {CHUNKS} chunks, got "
                            f"{self.sizes.shape}")
        self.clip = clip or Clip.load()
        if abs(self.clip.duration / self.clip.timescale - CHUNK_S) > 1e-6:
            raise SiteError(f"the clip lasts {self.clip.duration / self.clip.timescale} s, not {CHUNK_S} s")

    def manifest(self) -> str:
        c = self.clip
        reps = "\n".join(f'      <Representation id="{q}" bandwidth="{kbps * 1000}" codecs="{c.codecs}" width="{c.width}" '
                         f'height="{c.height}" frameRate="30"/>' for q, kbps in enumerate(BITRATES_KBPS))
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" '
                f'type="static" minBufferTime="PT4S" mediaPresentationDuration="PT{CHUNKS * CHUNK_S}S">\n'
                f'  <Period id="0" start="PT0S">\n'
                f'    <AdaptationSet mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">\n'
                f'      <SegmentTemplate timescale="{c.timescale}" duration="{c.duration}" startNumber="1" '
                f'initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Number$.m4s"/>\n'
                f'{reps}\n    </AdaptationSet>\n  </Period>\n</MPD>\n')

    def get(self, path: str) -> tuple[bytes, str] | None:
        """(body, content type) of `video/...` path, or None."""
        if path == "manifest.mpd":
            return self.manifest().encode(), "application/dash+xml"
        parts = path.split("/")
        if len(parts) != 2 or not parts[0].isdigit() or int(parts[0]) >= len(BITRATES_KBPS):
            return None
        level, name = int(parts[0]), parts[1]
        if name == "init.mp4":
            return self.clip.init, "video/mp4"
        stem = name.removesuffix(".m4s")
        if name.endswith(".m4s") and stem.isdigit() and 1 <= int(stem) <= CHUNKS:
            return self.clip.segment(int(stem), int(self.sizes[level, int(stem) - 1])), "video/mp4"
        return None


def load_sizes(folder: Path | None = None) -> np.ndarray:
    from rtclab.metis.pensieve import load_video

    rows = [[int(x) for x in text.split()] for _, text in load_video(folder)]
    n = min(len(r) for r in rows)
    return np.array([r[:n] for r in rows], dtype=np.int64)


def tree_script(tree) -> str:
    """Metis' tree as flat arrays for `rtclabAbr.treeDecider` (25 Pensieve features)."""
    if tree.task != "classification" or tree.n_features != 25:
        raise SiteError(f"the page needs a classification tree over Pensieve's 25 features, got a {tree.task} tree "
                        f"over {tree.n_features}")
    data = {"feature": tree.feature.tolist(), "threshold": [float(x) for x in tree.threshold],
            "left": tree.left.tolist(), "right": tree.right.tolist(), "value": [int(v) for v in tree.value]}
    return "window.rtclabTree = " + json.dumps(data, separators=(",", ":")) + ";\n"


def write_model(arrays: dict[str, np.ndarray], folder: Path) -> int:
    """The actor's arrays as model.json + weights.bin; returns the bytes of both."""
    folder.mkdir(parents=True, exist_ok=True)
    meta, blobs, offset = [], [], 0
    for key in sorted(k for k in arrays if k.startswith("actor.")):
        a = np.ascontiguousarray(arrays[key], dtype="<f4")
        meta.append({"name": key.split(".", 1)[1], "shape": list(a.shape), "offset": offset})
        blobs.append(a.tobytes())
        offset += a.nbytes
    if not meta:
        raise SiteError("the Pensieve checkpoint holds no actor arrays")
    (folder / "weights.bin").write_bytes(b"".join(blobs))
    (folder / "model.json").write_text(json.dumps({"format": "rtclab-pensieve-actor", "arrays": meta}) + "\n")
    return offset + (folder / "model.json").stat().st_size


_HEAD = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>rtclab deployment case: {title}</title>
{scripts}</head>
<body><video id="video" muted playsinline width="320" height="180"></video>
<script>
(async function () {{
  const abr = window.rtclabAbr;
  try {{
{body}
  }} catch (e) {{ abr.fail(e); }}
}})();
</script></body></html>
"""

_BODIES = {
    "fixed": """    abr.markReady();
    abr.play(document.getElementById('video'), 'video/manifest.mpd', null);""",
    "tree": """    abr.sizes = window.rtclabSizes;
    const decide = abr.treeDecider(window.rtclabTree);
    decide(abr.state);
    abr.markReady();
    abr.play(document.getElementById('video'), 'video/manifest.mpd', decide);""",
    "pensieve": """    await tf.setBackend('cpu');
    abr.sizes = window.rtclabSizes;
    const net = await window.rtclabPensieve.load('pensieve');
    net.decide(abr.state);
    abr.markReady();
    abr.play(document.getElementById('video'), 'video/manifest.mpd', net.decide);""",
}
#: Each page's scripts, fetched in parallel as the page is parsed (so a page's added load time is its
#: added bytes over the link); Pensieve's model is fetched once tf.js has run, as the Metis page does.
_SCRIPTS = {"fixed": ["dash.mediaplayer.min.js", "abr.js"],
            "tree": ["dash.mediaplayer.min.js", "abr.js", "sizes.js", "tree.js"],
            "pensieve": ["dash.mediaplayer.min.js", "tf.min.js", "abr.js", "sizes.js", "pensieve.js"]}
TITLES = {"fixed": "fixed (lowest level)", "tree": "Metis tree", "pensieve": "Pensieve (tf.js)"}


def build(folder: Path, tree, arrays: dict[str, np.ndarray], sizes: np.ndarray, assets: dict[str, Path]) -> dict:
    """Writes the pages and their files into `folder` (which must be new or empty); returns each
    page's HTML size in bytes, by page."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise SiteError(f"{folder} is not empty")
    folder.mkdir(parents=True, exist_ok=True)
    for name, path in assets.items():
        shutil.copyfile(path, folder / name)
    for name in ("abr.js", "pensieve.js"):
        shutil.copyfile(WEB / name, folder / name)
    (folder / "tree.js").write_text(tree_script(tree))
    write_model(arrays, folder / "pensieve")
    (folder / "sizes.js").write_text("window.rtclabSizes = " + json.dumps(np.asarray(sizes)[:, :CHUNKS].tolist(),
                                                                        separators=(",", ":")) + ";\n")
    for page in PAGES:
        scripts = "\n".join(f'<script src="{s}"></script>' for s in _SCRIPTS[page])
        (folder / f"{page}.html").write_text(_HEAD.format(title=TITLES[page], scripts=scripts, body=_BODIES[page]))
    return {p: (folder / f"{p}.html").stat().st_size for p in PAGES}
