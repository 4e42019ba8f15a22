"""The deployment case measured in a real browser (spec `zhuge-metis.md` B.6.4): headless Chromium,
driven by Playwright over the Chrome DevTools Protocol, loads each page of `rtclab.metis.site` from a
local server through a throttled link and plays the video.

- The link: DevTools network emulation (`Network.emulateNetworkConditions`): `rate_kbps` down
  (1200 kbit/s by default, Pensieve's mean trace bandwidth, as the dissertation's measurement) and
  `rtt_ms` of latency per request (80 ms, Pensieve's link), browser cache off, a fresh profile per load.
- Page size: the bytes of every response the page loads before its video (HTML, scripts, model,
  chunk-size table), as the network reports them (`Network.loadingFinished`).
- Page-load time: navigation start to the moment the page can decide (`rtclabAbr.markReady`: dash.js
  loaded; for the tree the table read; for Pensieve tf.js and the model loaded and one decision run).
- JS heap: the live heap (`HeapProfiler.collectGarbage`, then `Runtime.getHeapUsage`'s used bytes)
  every `sample_s` from navigation to the end of playback; mean and peak are taken over playback
  (from ready on), and the dissertation reports their extra over the `fixed` page. It read
  `performance.memory` (memory-stats.js) without collecting first, which adds whatever garbage the
  collector has not yet taken: with a tree whose data is a few kilobytes that noise is larger than
  the tree, so rtclab collects before each sample.
- Heap at ready: the live heap when the page can decide, before playback starts (the page collects
  garbage and reads `performance.memory`, exact with --enable-precise-memory-info): what the ABR
  itself keeps (`fixed` against `tree` against `pensieve`), free of dash.js' per-segment state, which
  grows with the segments a page has fetched (the fixed page fetches the most).
- Decision time: after playback every state met is decided again `repeat` times (`rtclabAbr.benchmark`).

The server binds 127.0.0.1 only and serves the site folder and the made-on-request segments.
"""

from __future__ import annotations

import http.server
import os
import shutil
import socketserver
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


class BrowserMissing(RuntimeError):
    """Playwright or a Chromium is not available; the message says how to get them."""


class PageFailed(RuntimeError):
    """A page did not get ready, or reported an error (dash.js, tf.js or the ABR); the message has
    the page and what it said."""


def find_chromium(path: str | None = None) -> str:
    """A Chromium executable: `path`, $RTCLAB_CHROMIUM, or chromium / chromium-browser / google-chrome on PATH."""
    for cand in (path, os.environ.get("RTCLAB_CHROMIUM")):
        if cand:
            if not Path(cand).is_file():
                raise BrowserMissing(f"no Chromium at {cand}")
            return cand
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise BrowserMissing("no Chromium found (apt-get install chromium, or `make chromium`; or pass --chromium PATH)")


def playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise BrowserMissing("the deployment case needs Playwright: pip install 'rtclab[browser]' (Chromium itself "
                             "comes from the system: apt-get install chromium)") from e
    return sync_playwright


_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".json": "application/json",
          ".bin": "application/octet-stream", ".png": "image/png"}


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(folder: Path, video):
    """A started server for `folder` and `video` (a `site.Video`) on 127.0.0.1; `.url`, `.shutdown()`."""
    root = Path(folder).resolve()

    class Handler(http.server.BaseHTTPRequestHandler):
        # Fixed headers: the page sizes count them, and must not depend on the Python or its MIME table.
        server_version, sys_version = "rtclab", ""

        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):
            path = self.path.split("?", 1)[0].lstrip("/")
            got = None
            if path.startswith("video/"):
                got = video.get(path[len("video/"):])
            else:
                f = (root / path).resolve()
                if f.is_file() and root in f.parents:
                    got = f.read_bytes(), _TYPES.get(f.suffix, "application/octet-stream")
            if got is None:
                self.send_error(404)
                return
            body, kind = got
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = _Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    return server


@dataclass
class Load:
    """One page load and playback."""

    page: str
    page_bytes: int
    resources: dict[str, int]
    ready_ms: float
    heap_mean: float
    heap_peak: float
    heap_ready: float | None
    heap: list[tuple[float, int]] = field(default_factory=list)
    chunks: int = 0
    levels: list[int] = field(default_factory=list)
    decision_ms: float | None = None
    played_s: float = 0.0


#: True once the page can decide (`rtclabAbr.markReady`) or has reported an error.
_READY = "window.rtclabAbr && (window.rtclabAbr.ready || !!window.rtclabAbr.failed)"


def _launch(p, exe: str):
    return p.chromium.launch(executable_path=exe, args=[
        "--no-sandbox", "--autoplay-policy=no-user-gesture-required", "--disable-gpu",
        "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
        "--js-flags=--expose-gc", "--enable-precise-memory-info"])


def measure(url: str, pages: list[str], *, runs: int = 3, seconds: float = 30.0, rate_kbps: float = 1200.0,
            rtt_ms: float = 80.0, sample_s: float = 0.25, repeat: int = 50, chromium: str | None = None,
            timeout_s: float = 120.0, say=lambda m: None) -> list[Load]:
    """Loads each page `runs` times (pages interleaved) and plays `seconds` of video after it is ready."""
    exe = find_chromium(chromium)
    sync_playwright = playwright()
    loads = []
    with sync_playwright() as p:
        browser = _launch(p, exe)
        try:
            for run in range(runs):
                for page in pages:
                    say(f"  {page}: load {run + 1}/{runs}")
                    loads.append(_one(browser, f"{url}/{page}.html", page, seconds, rate_kbps, rtt_ms, sample_s,
                                      repeat, timeout_s))
        finally:
            browser.close()
    return loads


def _one(browser, url, page, seconds, rate_kbps, rtt_ms, sample_s, repeat, timeout_s) -> Load:
    ctx = browser.new_context()
    try:
        tab = ctx.new_page()
        cdp = ctx.new_cdp_session(tab)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        if rate_kbps > 0:
            cdp.send("Network.emulateNetworkConditions", {
                "offline": False, "latency": rtt_ms, "downloadThroughput": rate_kbps * 1000 / 8,
                "uploadThroughput": max(rate_kbps, 10_000) * 1000 / 8})
        urls: dict[str, str] = {}
        sizes: dict[str, int] = {}
        cdp.on("Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"], e["request"]["url"]))
        cdp.on("Network.loadingFinished", lambda e: sizes.__setitem__(
            urls.get(e["requestId"], e["requestId"]), int(e["encodedDataLength"])))
        cdp.send("Runtime.enable")
        heap: list[tuple[float, int]] = []
        t0 = time.perf_counter()

        def sample():
            cdp.send("HeapProfiler.collectGarbage")
            heap.append((time.perf_counter() - t0, int(cdp.send("Runtime.getHeapUsage")["usedSize"])))

        tab.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        deadline = time.perf_counter() + timeout_s
        while not tab.evaluate(_READY):
            if time.perf_counter() > deadline:
                raise PageFailed(f"{url} was not ready within {timeout_s:g} s")
            sample()
            time.sleep(sample_s)
        ready_at = len(heap)
        ready_ms = float(tab.evaluate("window.rtclabAbr.readyAt || 0"))
        heap_ready = tab.evaluate("window.rtclabAbr.heapAtReady")
        page_sizes = {u: n for u, n in sizes.items() if "/video/" not in u}
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            failed = tab.evaluate("window.rtclabAbr.failed")
            if failed:
                raise PageFailed(f"{url}: {failed}")
            sample()
            time.sleep(sample_s)
        state = tab.evaluate("({chunks: rtclabAbr.chunks, levels: rtclabAbr.levels, "
                             "played: document.getElementById('video').currentTime, failed: rtclabAbr.failed})")
        if state["failed"]:
            raise PageFailed(f"{url}: {state['failed']}")
        decision = tab.evaluate(f"rtclabAbr.benchmark({int(repeat)})")
        used = [h for _, h in heap[ready_at:]] or [h for _, h in heap[-1:]]
        return Load(page, sum(page_sizes.values()), {u.rsplit("/", 1)[-1]: n for u, n in page_sizes.items()},
                    ready_ms, float(sum(used) / len(used)), float(max(used)),
                    float(heap_ready) if heap_ready is not None else None, heap, int(state["chunks"]),
                    [int(x) for x in state["levels"]], decision, float(state["played"]))
    finally:
        ctx.close()


def pensieve_probs(url: str, states, chromium: str | None = None) -> list[list[float]]:
    """The tf.js actor's probabilities for each state (48 values), from the Pensieve page (unthrottled);
    the test holds them against the numpy forward pass."""
    exe = find_chromium(chromium)
    with playwright()() as p:
        browser = _launch(p, exe)
        try:
            tab = browser.new_page()
            tab.goto(f"{url}/pensieve.html")
            tab.wait_for_function(_READY, timeout=60_000)
            failed = tab.evaluate("window.rtclabAbr.failed")
            if failed:
                raise PageFailed(failed)
            return tab.evaluate("(xs) => xs.map(x => rtclabPensieve.probs(x))", [list(map(float, s)) for s in states])
        finally:
            browser.close()
