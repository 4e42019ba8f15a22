"""One end of an aiortc (https://github.com/aiortc/aiortc) video call, for `rtclab realclient`.

Run inside the emulator's namespaces by `rtclab emu shell`: the answerer (receiver) with
`--receiver`, the offerer (sender) as the command. Signalling is two JSON files in a folder
both namespaces see (the file system is shared; the network is not). The sender streams a
320x240, 30 fps VP8 video of a moving pattern with a noisy patch (VP8 then tracks targets of
0.3-1.4 Mbit/s; pure noise cannot go below 2.2 Mbit/s at this size) and logs every 200 ms, on the emulation's time axis (`RTCLAB_START_MONOTONIC_NS`):
the encoder's target bitrate (set by the receiver's REMB: aiortc's receive-side estimator,
`aiortc/rate.py`, a port of libwebrtc's RemoteBitrateEstimatorAbsSendTime, the paper's GCC)
and the bytes sent so far.

    python -m rtclab.realclient.aiortc_peer answer DIR
    python -m rtclab.realclient.aiortc_peer offer DIR --duration 30
"""

from __future__ import annotations

import asyncio
import fractions
import signal
import sys
import time
from pathlib import Path

from rtclab.realclient.peer import no_signal, now_s, parse_args, read_signal, write_atomically


async def _wait_for(path: Path, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        msg = read_signal(path)
        if msg is not None:
            return msg
        await asyncio.sleep(0.05)
    raise no_signal(path, timeout_s)


def _noise_track():
    import numpy as np
    from aiortc import VideoStreamTrack
    from av import VideoFrame

    yy, xx = np.mgrid[0:240, 0:320]

    class PatternTrack(VideoStreamTrack):
        """320x240 at 30 fps: a drifting interference pattern and a 64x64 patch of noise."""

        def __init__(self) -> None:
            super().__init__()
            self._rng = np.random.default_rng(1)
            self._i = 0

        async def recv(self):
            pts, time_base = await self.next_timestamp()
            i = self._i = self._i + 1
            v = (127 + 100 * np.sin((xx + 4 * i) / 9.0) * np.cos((yy - 3 * i) / 13.0)).astype(np.uint8)
            img = np.ascontiguousarray(np.stack([v, np.roll(v, i, axis=1), 255 - v], axis=2))
            img[80:144, 100:164] = self._rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
            frame = VideoFrame.from_ndarray(img, format="bgr24")
            frame.pts = pts
            frame.time_base = time_base or fractions.Fraction(1, 90000)
            return frame

    return PatternTrack()


async def offer(folder: Path, duration_s: float, log: Path) -> None:
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    sender = pc.addTrack(_noise_track())
    await pc.setLocalDescription(await pc.createOffer())
    write_atomically(folder / "offer.json", {"sdp": pc.localDescription.sdp, "type": pc.localDescription.type})
    answer = await _wait_for(folder / "answer.json", 30)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type=answer["type"]))
    rows = ["time_s,target_bps,bytes_sent"]
    t_end = time.monotonic() + duration_s
    while time.monotonic() < t_end:
        await asyncio.sleep(0.2)
        encoder = getattr(sender, "_RTCRtpSender__encoder", None)
        target = getattr(encoder, "target_bitrate", float("nan")) if encoder else float("nan")
        sent = 0
        for s in (await sender.getStats()).values():
            if getattr(s, "type", "") == "outbound-rtp":
                sent = s.bytesSent
        rows.append(f"{now_s():.3f},{target},{sent}")
    log.write_text("\n".join(rows) + "\n")
    await pc.close()


async def answer(folder: Path) -> None:
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)

    @pc.on("track")
    def on_track(track) -> None:
        async def drain() -> None:
            while True:
                from aiortc.mediastreams import MediaStreamError

                try:
                    await track.recv()
                except MediaStreamError:  # the track ended
                    return
        asyncio.ensure_future(drain())

    offer_msg = await _wait_for(folder / "offer.json", 60)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer_msg["sdp"], type=offer_msg["type"]))
    await pc.setLocalDescription(await pc.createAnswer())
    write_atomically(folder / "answer.json", {"sdp": pc.localDescription.sdp, "type": pc.localDescription.type})
    await done.wait()
    await pc.close()


def main(argv: list[str] | None = None) -> int:
    a = parse_args(__doc__.splitlines()[0], argv)
    if a.role == "offer":
        asyncio.run(offer(a.folder, a.duration, a.log))
    else:
        asyncio.run(answer(a.folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
