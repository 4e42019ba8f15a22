"""One end of a call between two headless Chromium instances (Chromium's own libwebrtc: send-side
GCC with TWCC, LossBasedBweV2, probing, the pacer, the VP8 encoder's rate control), for
`rtclab realclient chromium`.

Run inside the emulator's namespaces by `rtclab emu shell`: the answerer (receiver) as the
shell's `--receiver`, the offerer (sender) as its command. Each end drives its own headless
Chromium through ChromeDriver (Selenium; Debian's `chromium` and `chromium-driver`, which
`make test` installs where it can) on the namespace's loopback; signalling is two JSON files
in a folder both namespaces see, as for the other clients, and ICE uses the namespaces' host
addresses (mDNS obfuscation of local addresses off, no STUN).

The sender's video is a 640x480 canvas at 30 fps (`canvas.captureStream`): a drifting pattern
with a small noise patch, so that VP8 has something to spend bits on across the scenarios'
range (at 640x480 libwebrtc allows up to 1.7 Mbit/s; `RTCLAB_CHROMIUM_VIDEO=WxH` picks another
size, e.g. 320x240, where it allows 0.6; `RTCLAB_CHROMIUM_FLAGS` adds switches, e.g. field
trials); `degradationPreference` is
"maintain-resolution" so the encoder follows the bandwidth estimate with its quantizer and
frame rate rather than by rescaling (`RTCLAB_CHROMIUM_DEGRADATION` picks another). Every
200 ms the sender reads `getStats()` and logs, on
the emulation's clock (`RTCLAB_START_MONOTONIC_NS`): the bandwidth estimate
(`candidate-pair.availableOutgoingBitrate`: GCC's target, what `target_mbps` is for our
controllers), RTP payload bytes sent, the encoder's target (`outbound-rtp.targetBitrate`),
retransmitted bytes, frame width, frames per second, the quality limitation reason, and the
encoder's counters (frames and key frames encoded, PLIs and NACKs received, huge frames sent).
The receiver logs every 200 ms too (`receiver.csv`, `RECEIVER_HEADER`): the frames displayed
and their delay from capture to the arrival of their last packet (`requestVideoFrameCallback`'s
captureTime, the sender's clock mapped through RTCP sender reports, and receiveTime: both
browsers read the one machine clock), and inbound-rtp's frame, jitter-buffer and freeze counters.

    python -m rtclab.realclient.chromium_peer answer DIR
    python -m rtclab.realclient.chromium_peer offer DIR --duration 59
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from rtclab.realclient.peer import now_s, parse_args, wait_for, write_atomically

CHROMIUM = os.environ.get("RTCLAB_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RTCLAB_CHROMEDRIVER", "/usr/bin/chromedriver")
#: The canvas's size, WxH.
VIDEO = os.environ.get("RTCLAB_CHROMIUM_VIDEO", "640x480")
#: The sender's `degradationPreference`: "maintain-resolution" (rtclab's runs: the encoder
#: follows the estimate with its quantizer and frame rate), "maintain-framerate", "balanced",
#: or "default" (left unset: Chromium's own choice for a canvas track).
DEGRADATION = os.environ.get("RTCLAB_CHROMIUM_DEGRADATION", "maintain-resolution")
#: "0": the canvas's pattern stands still (only the noise patch changes each frame): the cause
#: experiment that ruled out the pattern's cycle for Chromium's frame-rate dips every ~3.3 s.
DRIFT = os.environ.get("RTCLAB_CHROMIUM_DRIFT", "1") != "0"
#: How often the page redraws the canvas, per second (60). At 30 the timer's 33 ms ticks (30.3 a
#: second) beat against the 30 fps capture every ~3.3 s and Chromium encodes 15-20 fps for about
#: a second each time (the recordings of 2026-11-29 were made so); at 60 it holds 30
#: (docs/realclient.md).
DRAW_HZ = os.environ.get("RTCLAB_CHROMIUM_DRAW_HZ", "60")
#: More Chromium switches, space-separated (e.g. `--force-fieldtrials=...` for an experiment).
EXTRA_FLAGS = os.environ.get("RTCLAB_CHROMIUM_FLAGS", "").split()
#: "0": the answering peer removes generic NACK (`a=rtcp-fb:PT nack`, not `nack pli`) from the
#: offer it receives, so the call negotiates no retransmission (a cause experiment: libwebrtc
#: subtracts its retransmission rate from the encoder's target).
NACK = os.environ.get("RTCLAB_CHROMIUM_NACK", "1") != "0"
#: A path prefix: each peer's Chromium output (with `--enable-logging=stderr`, libwebrtc's own
#: log lines, e.g. `--vmodule=video_stream_encoder=1`) goes to PREFIX-offer.log / -answer.log
#: (then PREFIX-offer-2.log ... for later runs: an existing file is never overwritten).
STDERR_PREFIX = os.environ.get("RTCLAB_CHROMIUM_STDERR", "")
#: Chromium as the machine's probe starts it headless (no background connections: the network
#: is closed), plus what a call needs: real local addresses in ICE, timers at full rate, a
#: granted (fake) camera.
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-features=WebRtcHideLocalIpsWithMdns", "--disable-background-timer-throttling",
         "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
         "--autoplay-policy=no-user-gesture-required", "--use-fake-ui-for-media-stream",
         "--use-fake-device-for-media-stream"]

PAGE = """<!doctype html><meta charset="utf-8"><title>rtclab chromium peer</title>
<canvas id="c" width="@W@" height="@H@"></canvas><video id="v" autoplay muted playsinline></video>
<script>
window.rc = {pc: null, sender: null, frames: []};
function gathered(pc) {
  return new Promise(r => {
    if (pc.iceGatheringState === "complete") return r();
    pc.addEventListener("icegatheringstatechange", () => { if (pc.iceGatheringState === "complete") r(); });
  });
}
async function allowAllInterfaces() {
  // Chromium gathers candidates on every interface only for a page with camera permission
  // (else on the default route's interface alone, and the namespaces have no default route):
  // ask for the fake camera once, then let it go.
  const s = await navigator.mediaDevices.getUserMedia({video: true});
  s.getTracks().forEach(t => t.stop());
}
function source() {
  const c = document.getElementById("c"), g = c.getContext("2d");
  const noise = g.createImageData(48, 48);
  let seed = 1, i = 0;
  setInterval(() => {
    i++;
    for (let y = 0; y < c.height; y += 40) {
      for (let x = 0; x < c.width; x += 40) {
        const j = @DRIFT@ ? i : 0;
        const v = 127 + 100 * Math.sin((x + 4 * j) / 57) * Math.cos((y - 3 * j) / 83);
        g.fillStyle = `rgb(${v | 0},${(255 - v) | 0},${((v * 7 + j) % 256) | 0})`;
        g.fillRect(x, y, 40, 40);
      }
    }
    for (let k = 0; k < noise.data.length; k++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      noise.data[k] = k % 4 === 3 ? 255 : seed >> 23;
    }
    g.putImageData(noise, (c.width >> 1) - 24, (c.height >> 1) - 24);
  }, 1000 / @DRAW_HZ@);
  return c.captureStream(30);
}
async function offer() {
  await allowAllInterfaces();
  const pc = rc.pc = new RTCPeerConnection({iceServers: []});
  const track = source().getVideoTracks()[0];
  const tr = pc.addTransceiver(track, {direction: "sendonly"});
  rc.sender = tr.sender;
  if ("@DEGRADATION@" !== "default") {
    const p = tr.sender.getParameters();
    p.degradationPreference = "@DEGRADATION@";
    await tr.sender.setParameters(p);
  }
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  return {sdp: pc.localDescription.sdp, type: pc.localDescription.type};
}
async function answer(o) {
  await allowAllInterfaces();
  const pc = rc.pc = new RTCPeerConnection({iceServers: []});
  pc.ontrack = e => {
    const v = document.getElementById("v");
    v.srcObject = new MediaStream([e.track]);
    // each displayed frame's capture time (the sender's, mapped to this page's clock through
    // RTCP sender reports: both browsers read the one machine clock) and the arrival of its last
    // packet, in performance.now() ms
    const each = (_, m) => {
      if (m.captureTime !== undefined && m.receiveTime !== undefined) rc.frames.push([m.captureTime, m.receiveTime]);
      v.requestVideoFrameCallback(each);
    };
    v.requestVideoFrameCallback(each);
  };
  await pc.setRemoteDescription(o);
  await pc.setLocalDescription(await pc.createAnswer());
  await gathered(pc);
  return {sdp: pc.localDescription.sdp, type: pc.localDescription.type};
}
async function stats() {
  const out = {state: rc.pc.connectionState};
  (await rc.pc.getStats()).forEach(s => {
    if (s.type === "candidate-pair" && s.nominated && s.availableOutgoingBitrate !== undefined)
      out.bwe = s.availableOutgoingBitrate;
    if (s.type === "outbound-rtp" && s.kind === "video") {
      out.bytes = s.bytesSent; out.rtx = s.retransmittedBytesSent; out.enc = s.targetBitrate;
      out.width = s.frameWidth; out.fps = s.framesPerSecond; out.limit = s.qualityLimitationReason;
      out.frames = s.framesEncoded; out.keys = s.keyFramesEncoded; out.pli = s.pliCount;
      out.nack = s.nackCount; out.huge = s.hugeFramesSent; out.qp = s.qpSum; out.height = s.frameHeight;
    }
  });
  return out;
}
async function recvStats() {
  const out = {state: rc.pc.connectionState, now: performance.now(), frames: rc.frames};
  rc.frames = [];
  (await rc.pc.getStats()).forEach(s => {
    if (s.type === "inbound-rtp" && s.kind === "video") {
      out.decoded = s.framesDecoded; out.fps = s.framesPerSecond; out.dropped = s.framesDropped;
      out.jb = s.jitterBufferDelay; out.jbn = s.jitterBufferEmittedCount; out.proc = s.totalProcessingDelay;
      out.freezes = s.freezeCount; out.frozen = s.totalFreezesDuration; out.bytes = s.bytesReceived;
    }
  });
  return out;
}
</script>
"""


def _page() -> str:
    import re

    m = re.fullmatch(r"(\d{2,4})x(\d{2,4})", VIDEO)
    if not m:
        raise SystemExit(f"RTCLAB_CHROMIUM_VIDEO={VIDEO!r} is not a size like 640x480")
    if not (DRAW_HZ.isdigit() and 1 <= int(DRAW_HZ) <= 240):
        raise SystemExit(f"RTCLAB_CHROMIUM_DRAW_HZ={DRAW_HZ!r} is not a whole number of redraws a second in 1..240")
    if DEGRADATION not in ("maintain-resolution", "maintain-framerate", "balanced", "default"):
        raise SystemExit(f"RTCLAB_CHROMIUM_DEGRADATION={DEGRADATION!r}: one of maintain-resolution, "
                         "maintain-framerate, balanced, default")
    return PAGE.replace("@W@", m.group(1)).replace("@H@", m.group(2)).replace("@DEGRADATION@", DEGRADATION).replace(
        "@DRIFT@", "true" if DRIFT else "false").replace("@DRAW_HZ@", DRAW_HZ)


def stderr_path(role: str) -> Path | None:
    """A new file for this peer's Chromium output (`RTCLAB_CHROMIUM_STDERR`), or None: the first
    of PREFIX-ROLE.log, PREFIX-ROLE-2.log, ... that does not exist yet, created here (so runs one
    after another each get their own, and no existing file is ever overwritten)."""
    if not STDERR_PREFIX:
        return None
    for n in range(1, 10_000):
        path = Path(f"{STDERR_PREFIX}-{role}{'' if n == 1 else f'-{n}'}.log")
        try:
            with open(path, "x"):
                return path
        except FileExistsError:
            continue
        except OSError as e:
            raise SystemExit(f"RTCLAB_CHROMIUM_STDERR: cannot create {path}: {e.strerror}") from None
    raise SystemExit(f"RTCLAB_CHROMIUM_STDERR: no free name {STDERR_PREFIX}-{role}-N.log left")


def _browser(profile: Path, page: Path, role: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in [*FLAGS, *EXTRA_FLAGS, f"--user-data-dir={profile}"]:
        opts.add_argument(f)
    log = stderr_path(role)
    service = Service(executable_path=CHROMEDRIVER, log_output=str(log) if log else None,
                      service_args=["--enable-chrome-logs"] if log else None)
    driver = webdriver.Chrome(options=opts, service=service)
    driver.set_script_timeout(30)
    driver.get(page.as_uri())
    return driver


def _call(driver, js: str, *args):
    """Runs an async JS expression; returns its value (or raises its error)."""
    r = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"({js}).then(v => done({{ok: v}}), e => done({{err: String(e)}}));", *args)
    if "err" in r:
        raise RuntimeError(f"in Chromium: {r['err']}")
    return r["ok"]


def offer(folder: Path, duration_s: float, log: Path, scratch: Path) -> None:
    page = scratch / "peer.html"
    page.write_text(_page())
    driver = _browser(scratch / "profile-offer", page, "offer")
    try:
        write_atomically(folder / "offer.json", _call(driver, "offer()"))
        ans = wait_for(folder / "answer.json", 60)
        _call(driver, "rc.pc.setRemoteDescription(arguments[0])", ans)
        deadline = time.monotonic() + 20
        while _call(driver, "stats()")["state"] != "connected":
            if time.monotonic() > deadline:
                raise TimeoutError("the call did not connect within 20 s")
            time.sleep(0.05)
        rows = ["time_s,target_bps,bytes_sent,encoder_target_bps,retransmitted_bytes,frame_width,fps,quality_limitation,"
                "frames_encoded,key_frames_encoded,pli_received,nack_received,huge_frames_sent,qp_sum,frame_height"]
        t_end = time.monotonic() + duration_s
        nxt = time.monotonic()
        while time.monotonic() < t_end:
            nxt += 0.2
            time.sleep(max(0.0, nxt - time.monotonic()))
            s = _call(driver, "stats()")
            rows.append(f"{now_s():.3f},{s.get('bwe', 'nan')},{s.get('bytes', 0)},{s.get('enc', 'nan')},"
                        f"{s.get('rtx', 0)},{s.get('width', 'nan')},{s.get('fps', 'nan')},{s.get('limit', '')},"
                        f"{s.get('frames', 0)},{s.get('keys', 0)},{s.get('pli', 0)},{s.get('nack', 0)},{s.get('huge', 0)},"
                        f"{_or_nan(s.get('qp'))},{_or_nan(s.get('height'))}")
        log.write_text("\n".join(rows) + "\n")
    finally:
        driver.quit()


def _or_nan(x) -> str:
    """A getStats field as a CSV cell: "nan" where the browser did not report it."""
    return "nan" if x is None else str(x)


def without_nack(sdp: str) -> str:
    """The SDP without generic NACK feedback lines (`a=rtcp-fb:PT nack`); `nack pli` stays."""
    import re

    return re.sub(r"a=rtcp-fb:\d+ nack\r?\n", "", sdp)


def answer(folder: Path, scratch: Path) -> None:
    stop = {"now": False}

    def on_signal(*_):
        stop["now"] = True

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    page = scratch / "peer.html"
    page.write_text(_page())
    driver = _browser(scratch / "profile-answer", page, "answer")
    try:
        o = wait_for(folder / "offer.json", 90)
        if not NACK:
            o["sdp"] = without_nack(o["sdp"])
        write_atomically(folder / "answer.json", _call(driver, "answer(arguments[0])", o))
        rows = [RECEIVER_HEADER]
        nxt = time.monotonic()
        while not stop["now"]:
            nxt += 0.2
            time.sleep(max(0.0, nxt - time.monotonic()))
            try:
                s = _call(driver, "recvStats()")
            except Exception:  # the browser going away as the shell ends the call
                break
            rows.append(receiver_row(now_s(), s))
        tmp = folder / "receiver.csv.tmp"
        tmp.write_text("\n".join(rows) + "\n")
        tmp.replace(folder / "receiver.csv")
    finally:
        driver.quit()


#: The receiver's log, every 200 ms (`receiver.csv`): displayed frames since the last row and
#: their mean and largest frame delay (capture to the arrival of the frame's last packet, from
#: `requestVideoFrameCallback`'s captureTime and receiveTime), and inbound-rtp's counters.
RECEIVER_HEADER = ("time_s,frames_displayed,frame_delay_ms_mean,frame_delay_ms_max,frames_decoded,fps,frames_dropped,"
                   "jitter_buffer_delay_s,jitter_buffer_emitted,processing_delay_s,freezes,freeze_s,bytes_received")


def receiver_row(t: float, s: dict) -> str:
    """One receiver.csv row from `recvStats()` at emulation time `t`."""
    d = [b - a for a, b in s.get("frames", []) if a is not None and b is not None and b >= a]
    mean = f"{sum(d) / len(d):.2f}" if d else "nan"
    top = f"{max(d):.2f}" if d else "nan"
    return (f"{t:.3f},{len(s.get('frames', []))},{mean},{top},{s.get('decoded', 0)},{s.get('fps', 'nan')},"
            f"{s.get('dropped', 0)},{s.get('jb', 'nan')},{s.get('jbn', 0)},{s.get('proc', 'nan')},"
            f"{s.get('freezes', 0)},{s.get('frozen', 0)},{s.get('bytes', 0)}")


def main(argv: list[str] | None = None) -> int:
    a = parse_args(__doc__.splitlines()[0], argv)
    scratch = Path(tempfile.mkdtemp(prefix=f"rtclab-chromium-{a.role}-"))
    try:
        if a.role == "offer":
            offer(a.folder, a.duration, a.log, scratch)
        else:
            answer(a.folder, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
