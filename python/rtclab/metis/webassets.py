"""The third-party scripts of the deployment case (spec `zhuge-metis.md` B.6.4): dash.js and tf.js.

Both come from the npm registry at pinned versions, checked against the registry's sha512 integrity
of the package tarball before one file is taken from it, and kept (with the package's licence) in
a cache folder: `$RTCLAB_WEB_CACHE`, else `~/.cache/rtclab/web`. Nothing is fetched at page time:
the pages load these copies from the local server, so a run needs no network once the cache is
filled (`make web-assets`, or the first `rtclab metis deploy`, which calls `npm pack`).

- dash.js 5.2.1 (Dash Industry Forum, BSD-3-Clause): `dash.mediaplayer.min.js`, the player without
  the MSS and offline modules (the Metis pages load `dash.all.min.js`; the player is the same).
- TensorFlow.js (Google, Apache-2.0): `tf.min.js`, the full bundle, as the Metis page loads it;
  4.22.0 by default, or 0.14.1, the version the Metis page loads (from a CDN), whose bundle is
  925 KB against 1,470 KB (`TFJS`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Asset:
    package: str
    version: str
    integrity: str      # the registry's sha512 of the tarball
    member: str         # the file inside the tarball
    name: str           # the file name in the cache and on the pages
    licence_member: str  # kept beside the script as NAME.LICENSE (tfjs ships no licence file: its
    licence: str         # package.json names it, and tf.min.js carries the Apache-2.0 header)


DASHJS = Asset("dashjs", "5.2.1",
          "sha512-axcJmLeJCTJMLUfQRErUJB1KOiU5iHF+DMLBc3FKeox1HPYtGUQlC6Xm5Mm6vhBUR3CHHLIPOqw0JDIqMtP+Dw==",
          "package/dist/modern/umd/dash.mediaplayer.min.js", "dash.mediaplayer.min.js", "package/LICENSE.md",
          "BSD-3-Clause")
#: TensorFlow.js by version; the file keeps its name on the page, the cache keeps one per version.
TFJS = {
    "4.22.0": Asset("@tensorflow/tfjs", "4.22.0",
                    "sha512-0TrIrXs6/b7FLhLVNmfh8Sah6JgjBPH4mZ8JGb7NU6WW+cx00qK5BcAZxw7NCzxj6N8MRAIfHq+oNbPUNG5VAg==",
                    "package/dist/tf.min.js", "tf.min.js", "package/package.json", "Apache-2.0"),
    "0.14.1": Asset("@tensorflow/tfjs", "0.14.1",
                    "sha512-fo68B4FNh/JBYAjArlLFsx2etE1kxCHG11bzsy01b2jZLrM9HE+jgmiNUGuHqN7aLu/CVqB76wDAtlBT4AnPsg==",
                    "package/dist/tf.min.js", "tf.min.js", "package/LICENSE", "Apache-2.0"),
}
DEFAULT_TFJS = "4.22.0"


def assets(tfjs: str = DEFAULT_TFJS) -> tuple[Asset, ...]:
    if tfjs not in TFJS:
        raise ValueError(f"--tfjs {tfjs!r}: rtclab pins " + " and ".join(sorted(TFJS)))
    return (DASHJS, TFJS[tfjs])


class AssetsMissing(RuntimeError):
    """A script could not be had; the message says which and what to do."""


def cache_dir() -> Path:
    env = os.environ.get("RTCLAB_WEB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "rtclab" / "web"


def _stamp(asset: Asset) -> str:
    return f"{asset.package}@{asset.version} {asset.integrity}"


def _where(folder: Path, asset: Asset) -> Path:
    return folder / asset.package.replace("/", "+") / asset.version


def _cached(folder: Path, asset: Asset) -> bool:
    d = _where(folder, asset)
    stamp = d / (asset.name + ".source")
    return (d / asset.name).is_file() and stamp.is_file() and stamp.read_text().strip() == _stamp(asset)


def _check_integrity(data: bytes, asset: Asset) -> None:
    algo, _, want = asset.integrity.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise AssetsMissing(f"{asset.package}@{asset.version}: the tarball's {algo} is {got}, the registry "
                            f"pins {want}; not used")


def _pack(asset: Asset, npm: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            r = subprocess.run([npm, "pack", "--silent", f"{asset.package}@{asset.version}"], cwd=tmp,
                               capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise AssetsMissing(f"npm pack {asset.package}@{asset.version} failed: {e}") from e
        if r.returncode != 0:
            raise AssetsMissing(f"npm pack {asset.package}@{asset.version} failed: {r.stderr.strip()[-400:]}")
        tgz = [p for p in Path(tmp).iterdir() if p.suffix == ".tgz"]
        if len(tgz) != 1:
            raise AssetsMissing(f"npm pack {asset.package}@{asset.version} left no tarball")
        return tgz[0].read_bytes()


def _extract(data: bytes, member: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        f = tar.extractfile(member)
        if f is None:
            raise AssetsMissing(f"{member} is not a file in the package")
        return f.read()


def ensure(folder: Path | None = None, say=lambda m: None, tfjs: str = DEFAULT_TFJS) -> dict[str, Path]:
    """The path of each script (by its file name), fetching and checking what the cache lacks.
    Writes only files of its own, each through a temporary name, under `folder` (default
    `cache_dir()`), one folder per package and version."""
    folder = Path(folder) if folder else cache_dir()
    wanted = assets(tfjs)
    missing = [a for a in wanted if not _cached(folder, a)]
    if missing:
        npm = shutil.which("npm")
        if npm is None:
            raise AssetsMissing("the deployment case needs " + ", ".join(f"{a.package}@{a.version}" for a in missing)
                                + f" in {folder}, fetched with npm, which is not installed (apt-get install npm, "
                                  "then `make web-assets`)")
        for a in missing:
            say(f"fetching {a.package}@{a.version} from the npm registry")
            data = _pack(a, npm)
            _check_integrity(data, a)
            d = _where(folder, a)
            d.mkdir(parents=True, exist_ok=True)
            for name, member in ((a.name, a.member), (a.name + ".LICENSE", a.licence_member)):
                tmp = d / (name + ".part")
                tmp.write_bytes(_extract(data, member))
                tmp.replace(d / name)
            tmp = d / (a.name + ".source.part")
            tmp.write_text(_stamp(a) + "\n")
            tmp.replace(d / (a.name + ".source"))
    return {a.name: _where(folder, a) / a.name for a in wanted}


if __name__ == "__main__":  # `make web-assets`: every pinned version
    for version in TFJS:
        for p in ensure(say=print, tfjs=version).values():
            print(f"{p} ({p.stat().st_size:,} bytes)")
