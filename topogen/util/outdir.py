"""The output-directory contract: topogen replaces only what it wrote, atomically.

* An output directory is replaced only when it is empty or holds topogen's own earlier
  output: a topogen ``manifest.json`` listing every file in it. Files changed since
  that build (a size differs from the manifest) are replaced only with ``force``.
  A file topogen did not write is never deleted, with or without ``force``: the run
  refuses (exit 2) before building anything.
* ``.``, ``..``, ``/``, the current directory or one of its parents, an existing file,
  FIFO, socket or device, and a path under a file are refused, with nothing created.
* A symlinked ``out/<name>`` is followed: its target is replaced and the link kept.
* Everything is written into a sibling ``.<name>.tmp-*`` directory, then swapped in
  with ``renameat2(RENAME_EXCHANGE)``: ``out/<name>`` always exists, holding the old or
  the new output. Where the exchange is unavailable (not Linux, or a filesystem
  without it) the fallback is two renames, with a moment without ``out/<name>``.
* One run at a time per output directory: a lock file ``.<name>.lock`` beside it
  (``flock``); a second run exits 2 naming the first one's pid. The lock file is
  removed at the end.
* Leftovers of runs killed outright (``.<name>.tmp-*``, ``.<name>.old-*``) are removed
  by the next run into the same directory, which says so.
* SIGINT/SIGTERM during the swap are held until it is complete; an interrupted run
  removes its temporary directory (see :class:`~topogen.util.errors.Interrupted`).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from topogen.util.errors import InputError, Problem

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 16 << 20
SHOWN = 3  # foreign files named in a refusal
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _refuse(out_dir: Path, message: str, hint: str = "choose another --out directory") -> InputError:
    return InputError([Problem("out", message, hint)])


def check(out_dir: Path, force: bool = False) -> Path:
    """Check ``out_dir`` against the contract without touching anything; the directory to replace.

    Returns the real directory (a symlink followed). Raises :class:`InputError`.
    """
    out_dir = Path(out_dir)
    shown = str(out_dir)
    if out_dir.name in ("", ".", "..") or str(out_dir) in ("", ".", ".."):
        raise _refuse(out_dir, f"{shown!r} names the current, parent or root directory, which topogen never replaces", "give a directory of its own, e.g. --out out/<name>")
    if out_dir.is_symlink():
        target = Path(os.path.realpath(out_dir))
        if not target.exists():
            raise _refuse(out_dir, f"{shown!r} is a symlink to {str(target)!r}, which does not exist", "create the target directory, or remove the link")
        real = target
    else:
        real = Path(os.path.realpath(out_dir.parent)) / out_dir.name
    cwd = Path(os.path.realpath(os.getcwd()))
    if real == Path(real.anchor) or real == cwd or real in cwd.parents:
        raise _refuse(out_dir, f"{shown!r} is {'the root directory' if real == Path(real.anchor) else 'the current directory or one of its parents'}, which topogen never replaces", "give a directory of its own, e.g. --out out/<name>")
    probe = real.parent
    while not os.path.lexists(probe):
        probe = probe.parent
    if os.path.lexists(real) and not real.is_dir():
        raise _refuse(out_dir, f"{shown!r} exists and is not a directory ({_kind(real)})")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise _refuse(out_dir, f"cannot write to {shown!r}: {str(probe)!r} is not a writable directory", "choose a writable --out directory")
    if real.is_dir():
        _check_owned(real, shown, force)
    return real


def _kind(p: Path) -> str:
    import stat

    m = os.lstat(p).st_mode
    for test, name in ((stat.S_ISREG, "a file"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(m):
            return name
    return "not a directory"


def _check_owned(d: Path, shown: str, force: bool) -> None:
    """Refuse unless ``d`` is empty or topogen's own output (changed outputs: only with ``force``)."""
    with os.scandir(d) as it:
        first = [e.name for _, e in zip(range(SHOWN + 1), it)]
    if not first:
        return
    listed = _manifest_files(d / MANIFEST)
    hint = "topogen replaces only an empty directory or its own earlier output; move those files away or choose another --out (--force replaces changed topogen outputs, never other files)"
    if listed is None:
        names = ", ".join(sorted(first)[:SHOWN]) + (", ..." if len(first) > SHOWN else "")
        why = " (--force never deletes files topogen did not write)" if force else ""
        raise _refuse(Path(shown), f"{shown!r} is not empty and holds no topogen {MANIFEST} ({names}){why}", hint)
    foreign, changed = [], []
    for root, dirs, files in os.walk(d):
        for name in sorted(files) + [x for x in sorted(dirs) if os.path.islink(os.path.join(root, x))]:
            p = os.path.join(root, name)
            rel = os.path.relpath(p, d).replace(os.sep, "/")
            if rel == MANIFEST:
                continue
            st = os.lstat(p)
            if rel not in listed or not os.path.isfile(p) or os.path.islink(p):
                foreign.append(rel)
            elif st.st_size != listed[rel]:
                changed.append(rel)
            if len(foreign) > SHOWN:
                break
        dirs[:] = sorted(x for x in dirs if not os.path.islink(os.path.join(root, x)))
        if len(foreign) > SHOWN:
            break
    if foreign:
        names = ", ".join(foreign[:SHOWN]) + (", ..." if len(foreign) > SHOWN else "")
        why = " (--force never deletes files topogen did not write)" if force else ""
        raise _refuse(Path(shown), f"{shown!r} holds files topogen did not write: {names}{why}", hint)
    if changed and not force:
        names = ", ".join(changed[:SHOWN]) + (", ..." if len(changed) > SHOWN else "")
        raise _refuse(Path(shown), f"{shown!r} holds topogen outputs changed since they were written: {names}", "add --force to replace them, or choose another --out directory")


def _manifest_files(path: Path) -> dict[str, int] | None:
    """``{relative path: bytes}`` of a topogen manifest, or ``None`` when it is not one."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_MANIFEST_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not str(data.get("generator", "")).startswith("topogen "):
            return None
        return {str(f["path"]): int(f["bytes"]) for f in data["files"]}
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


# --- the lock -----------------------------------------------------------------------


@contextmanager
def _lock(real: Path, shown: str) -> Iterator[None]:
    """Hold ``.<name>.lock`` beside ``real``; a second run refuses, naming the first one's pid.

    The file is removed at the end; a run that locked a file another run already
    removed (it checks the inode) tries again.
    """
    path = real.parent / f".{real.name}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise _refuse(Path(shown), f"another topogen run (pid {pid}) is writing {shown!r} right now", "wait for it to finish, or choose another --out directory") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        try:
            os.unlink(path)
        finally:
            os.close(fd)


def _clean_stale(real: Path, notes: list[str] | None) -> None:
    """Remove ``.<name>.tmp-*`` / ``.<name>.old-*`` left by killed runs (called under the lock)."""
    pattern = re.compile(rf"\.{re.escape(real.name)}\.(tmp|old)-[A-Za-z0-9_]+")
    stale = []
    with os.scandir(real.parent) as it:
        for e in it:
            if pattern.fullmatch(e.name) and e.is_dir(follow_symlinks=False):
                stale.append(e.name)
    for name in sorted(stale):
        shutil.rmtree(real.parent / name, ignore_errors=True)
    if stale and notes is not None:
        notes.append(f"removed {len(stale)} leftover(s) of an interrupted run in {str(real.parent)!r}: {', '.join(sorted(stale))}")


# --- the swap -----------------------------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_EXCHANGE = _renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux ``renameat2``); False when unsupported."""
    if _EXCHANGE is None:
        return False
    if _EXCHANGE(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


@contextmanager
def held_signals() -> Iterator[None]:
    """SIGINT/SIGTERM wait until the block ends (then act): a swap or a clean-up is never cut."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _commit(tmp: Path, real: Path, shown: str, force: bool) -> None:
    """Put ``tmp`` in place of ``real`` (replacing it only as :func:`check` allows)."""
    os.chmod(tmp, 0o755)
    if not os.path.lexists(real):
        os.rename(tmp, real)
        return
    if not real.is_dir() or real.is_symlink():
        raise _refuse(Path(shown), f"{shown!r} was replaced by something that is not a directory during the run")
    _check_owned(real, shown, force)  # again: files may have appeared during the build
    if exchange(tmp, real):
        shutil.rmtree(tmp)  # now the old output
        return
    old = Path(tempfile.mkdtemp(prefix=f".{real.name}.old-", dir=real.parent))
    os.rmdir(old)
    os.rename(real, old)  # fallback: the moment without out/<name> is here
    os.rename(tmp, real)
    shutil.rmtree(old)


@contextmanager
def atomic_dir(out_dir: Path, force: bool = False, notes: list[str] | None = None) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces ``out_dir`` as the contract says.

    ``notes`` receives messages for the user (leftovers of killed runs removed).
    """
    out_dir = Path(out_dir)
    real = check(out_dir, force)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _refuse(out_dir, f"cannot write to {str(out_dir)!r}: {exc.strerror or exc}", "choose a writable --out directory") from None
    with _lock(real, str(out_dir)):
        _clean_stale(real, notes)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.tmp-", dir=real.parent))
        except OSError as exc:
            raise _refuse(out_dir, f"cannot write to {str(out_dir)!r}: {exc.strerror or exc}", "choose a writable --out directory") from None
        try:
            yield tmp
            with held_signals():
                _commit(tmp, real, str(out_dir), force)
        except BaseException:
            with held_signals():
                shutil.rmtree(tmp, ignore_errors=True)
            raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write one file through a temporary sibling and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
