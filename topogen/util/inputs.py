"""Opening a user's input file: regular files only, bounded size, errors that name the file.

Specs, catalogs and wiring files all come through :func:`open_input`, so a FIFO
(which would block forever), ``/dev/zero`` (endless), a directory, or a file too large
to be what it claims is refused with exit code 2 before anything is read.
"""

from __future__ import annotations

import io
import os
import re
import stat

from topogen.util.errors import InputError, Problem

CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # C0, DEL, C1, line/paragraph separators: refused in user text
MAX_ASBUILT_BYTES = 1 << 30  # an ibnetdiscover dump or lldpctl JSON file, read whole
KIND_NAMES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def is_file(path) -> bool:
    """``Path.is_file`` that never raises: a name too long or otherwise unusable is simply not a file."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def human_bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} GiB"  # pragma: no cover


def open_input(path, field: str, label: str, max_bytes: int, missing: Problem, what: str = "file") -> io.BufferedReader:
    """Open ``path`` for binary reading after checking it is a regular file of at most ``max_bytes``.

    ``missing`` is raised when it does not exist; ``what`` names the kind of file in messages
    (``spec``, ``catalog``, ``cabling file``). Bundled templates (importlib resources) are
    plain files too.
    """
    p = os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError([missing]) from None
    except OSError as exc:
        if os.path.isdir(p):
            raise InputError([Problem(field, f"{label} is a directory, not a {what}", f"give the path of a {what}")]) from None
        raise InputError([Problem(field, f"cannot read {label}: {exc.strerror or exc}", f"give a readable {what}")]) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in KIND_NAMES if test(st.st_mode)), "not a regular file")
            raise InputError([Problem(field, f"{label} is {kind}, not a regular file", f"give the path of a {what}")])
        if st.st_size > max_bytes:
            raise InputError([Problem(field, f"{label} is {human_bytes(st.st_size)}; a {what} is at most {human_bytes(max_bytes)}", f"is this the right file? a {what} this large is not one topogen wrote")])
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text(path, field: str, label: str, max_bytes: int, missing: Problem, what: str = "file") -> str:
    """The whole of a small input file as text (UTF-8, a leading BOM dropped)."""
    with open_input(path, field, label, max_bytes, missing, what) as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we read it
        raise InputError([Problem(field, f"{label} is larger than {human_bytes(max_bytes)}", f"a {what} is at most {human_bytes(max_bytes)}")])
    return decode(data, field, label)


def decode(data: bytes, field: str, label: str) -> str:
    """UTF-8 text (a leading BOM, as spreadsheets write, dropped); a bad byte names its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError([Problem(field, f"{label} is not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line} cannot be decoded", "save the file as UTF-8")]) from None

