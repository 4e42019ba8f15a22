"""Bounded reads of the files a user hands rtclab (scenarios, sweeps, captures, models, trees).

Every input file is checked before it is read: it must exist, be a regular file (a device such as
/dev/zero, a pipe or a directory never ends or is no file) and be no larger than a limit that suits
its kind, so that a wrong path costs a message, not the machine's memory. Files that can be large
(captures) are streamed by their readers; the limit here is for files read whole. The scenario
crate applies the same rule to traces, frame-size and tree files (`MAX_INPUT_FILE_BYTES`, 256 MiB).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MiB = 1 << 20
#: Limits per kind of input, for files read whole.
LIMITS = {
    "scenario": 16 * MiB,
    "sweep": 16 * MiB,
    "sdp": 1 * MiB,
    "model": 512 * MiB,
    "tree": 256 * MiB,
    "trace": 256 * MiB,
}


class InputFileError(ValueError):
    """An input file that cannot be read as one: the message names the file and the problem."""


def check_input_file(path: str | os.PathLike, what: str, max_bytes: int | None = None) -> Path:
    """`path` if it is a regular file within the limit for `what` (a key of LIMITS, or any
    word with `max_bytes`); else InputFileError saying what it is instead. Never reads it."""
    p = Path(path)
    limit = LIMITS[what] if max_bytes is None else max_bytes
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputFileError(f"{p}: no such {what} file") from None
    except OSError as e:
        raise InputFileError(f"{p}: cannot read the {what} file ({e.strerror or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputFileError(f"{p}: is a directory, not a {what} file")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a character device" if stat.S_ISCHR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode)
                else "a pipe" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "not a regular file")
        raise InputFileError(f"{p}: is {kind}, not a {what} file (a {what} must be a regular file)")
    if st.st_size > limit:
        raise InputFileError(f"{p}: {_size(st.st_size)}, above the {_size(limit)} limit for a {what} file")
    return p


def read_input_bytes(path: str | os.PathLike, what: str, max_bytes: int | None = None) -> bytes:
    """The whole file after `check_input_file`; reads at most the limit + 1 bytes, so a file that
    grows while it is read is refused too."""
    p = check_input_file(path, what, max_bytes)
    limit = LIMITS[what] if max_bytes is None else max_bytes
    try:
        with open(p, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise InputFileError(f"{p}: cannot read the {what} file ({e.strerror or e})") from None
    if len(data) > limit:
        raise InputFileError(f"{p}: grew past the {_size(limit)} limit for a {what} file while it was read")
    return data


def read_input_text(path: str | os.PathLike, what: str, max_bytes: int | None = None) -> str:
    """The whole file as UTF-8 text, with the checks of `read_input_bytes`."""
    data = read_input_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputFileError(f"{path} is not a {what}: byte {e.start} is not UTF-8 text") from None


def _size(n: int) -> str:
    return f"{n / MiB:.0f} MiB" if n >= MiB else f"{n} bytes"


def load_npz(path: str | os.PathLike, what: str = "model") -> dict:
    """The arrays of a NumPy `.npz` file as a dict, read without pickle (a model file can never
    run code); a damaged or foreign file is an InputFileError naming it, not numpy's advice."""
    import zipfile

    import numpy as np

    p = check_input_file(path, what, LIMITS["model"])
    try:
        with np.load(p, allow_pickle=False) as z:
            if not hasattr(z, "files"):
                raise InputFileError(f"{p}: a single array, not a {what} file (an .npz archive of named arrays)")
            return {k: z[k] for k in z.files}
    except InputFileError:
        raise
    except ValueError as e:
        why = ("it holds Python objects, which rtclab never unpickles" if "pickle" in str(e)
               else "numpy cannot read it")
        raise InputFileError(f"{p}: not a valid {what} file ({why}; expected an .npz archive of plain arrays)") from None
    except (OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise InputFileError(f"{p}: not a valid {what} file (a damaged or foreign .npz: {e})") from None
