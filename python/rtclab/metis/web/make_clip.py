"""Makes the 4-second video clip the deployment case's segments are built from (`clip/`).

The clip is ffmpeg's `testsrc2` pattern (generated, no third-party footage), 320 × 180 at 30 frame/s,
VP9 (royalty-free, decoded by every Chromium build) at about 110 kbit/s, one key frame, as a
fragmented MP4: `init.mp4` (ftyp + moov) and `media.m4s` (one moof + mdat). `rtclab.metis.site`
stamps each of the 48 segments of every level with its sequence number and decode time and pads it
with a `free` box to Pensieve's chunk size, so the bytes on the wire are Pensieve's while the decoder
sees a small, valid stream.

Run once by a developer (the output is committed): `python -m rtclab.metis.web.make_clip [FFMPEG]`,
FFMPEG defaulting to `ffmpeg` on PATH (the `imageio-ffmpeg` package's binary also works).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from rtclab.metis.site import boxes

HERE = Path(__file__).resolve().parent / "clip"


def main(ffmpeg: str = "ffmpeg") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "clip.mp4"
        subprocess.run([ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
                        "-i", "testsrc2=size=320x180:rate=30:duration=4", "-c:v", "libvpx-vp9", "-b:v", "110k",
                        "-g", "120", "-keyint_min", "120", "-row-mt", "0", "-threads", "1", "-deadline", "good",
                        "-cpu-used", "4", "-pix_fmt", "yuv420p", "-an", "-bitexact", "-f", "mp4",
                        "-movflags", "frag_keyframe+empty_moov+default_base_moof", str(out)], check=True)
        data = out.read_bytes()
    parts = {k: data[s:s + n] for k, s, n in boxes(data)}
    HERE.mkdir(exist_ok=True)
    (HERE / "init.mp4").write_bytes(parts["ftyp"] + parts["moov"])
    (HERE / "media.m4s").write_bytes(parts["moof"] + parts["mdat"])


if __name__ == "__main__":
    main(*sys.argv[1:2])
