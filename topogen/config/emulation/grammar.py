"""The trust boundary of ``topogen emulate``: every byte read from a build directory passes here first.

``emulate`` runs as root on build directories that are passed around, so nothing
read from one reaches a command (``ip -batch``, ``sysctl``, FRR's daemons and
``vtysh``), a file or a path before it has been parsed by the strict grammar of
this module into the values topogen itself writes:

* **files** (:func:`read_build_file`): regular files only, refused before they are
  opened when they are a symlink, a FIFO, a device, a socket or a directory
  (``lstat``, then ``O_NOFOLLOW | O_NONBLOCK``); at most :data:`MAX_CSV_BYTES` or
  :data:`MAX_CONF_BYTES` (the size is checked before reading and the read is
  bounded, so ``/dev/zero`` or a file that grows cannot fill memory); UTF-8;
* **directories** (:func:`walk_confs`): walked without following links; a link or a
  special file anywhere under ``frr/`` is refused;
* **CSV rows** (:func:`read_rows`): the header topogen writes, every row as many
  cells as the header, no NUL; each cell then passes its field's grammar:
  device names (:data:`NAME_RE`), interface names (``lo``, a switch port as
  topogen names it: ``p<n>``, SONiC ``Ethernet<n>``, EOS ``Ethernet<n>/<m>``,
  Cumulus ``swp<n>``/``swp<n>s<m>``; ``nic<n>``, ``vlan<n>``; Linux's IFNAMSIZ
  allows at most 15 bytes; EOS's ``/``, which Linux refuses in a name, becomes
  ``_`` in the emulation, :func:`linux_name`), IPv4 addresses with a
  prefix length, prefixes, ASNs, VLAN IDs, VRF names (``rail<n>``);
* **FRR configuration** (:func:`check_frr_conf`): an allow-list of exactly the
  statements :mod:`topogen.config.frr` writes, indentation included; anything
  else (``log file``, ``do``, ``shell``, ``!`` followed by text other than the
  header, an unknown statement) is refused.

Every refusal is an :class:`~topogen.util.errors.InputError` naming the file and
line, with control characters of the offending text escaped.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import os
import re
import stat
from pathlib import Path
from typing import Iterator

from topogen.util.errors import InputError, Problem
from topogen.util.inputs import KIND_NAMES, human_bytes

MAX_CSV_BYTES = 256 << 20  # addressing.csv / cabling.csv: a 131,072-GPU build's are about 40 MB
MAX_CONF_BYTES = 4 << 20  # one frr.conf: a 512-port switch's is about 100 KB
MAX_CONFS = 100_000  # files under frr/
IFNAMSIZ = 15  # bytes of a Linux interface name (IFNAMSIZ 16 with its NUL)

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)  # a device: what naming templates give
_SWITCH_PORT = r"p[1-9][0-9]{0,8}|Ethernet[0-9]{1,4}(?:/[1-9][0-9]?){0,2}|swp[1-9][0-9]{0,3}(?:s[0-9])?"  # p<n>, SONiC, EOS, Cumulus (topogen.fabric.ports)
IFACE_RE = re.compile(rf"lo|{_SWITCH_PORT}|nic[0-9]{{1,9}}|vlan[1-9][0-9]{{0,3}}", re.ASCII)
EOS_PORT_RE = re.compile(r"\bEthernet[0-9]{1,4}(?:/[1-9][0-9]?){1,2}\b", re.ASCII)


def linux_name(port: str) -> str:
    """A port name the grammar took, as a Linux interface name: EOS's ``Ethernet1/5`` is ``Ethernet1_5`` (Linux refuses ``/``).

    One-to-one: no other name the grammar takes holds ``_``.
    """
    return port.replace("/", "_")


def linux_conf(text: str) -> str:
    """A checked frr.conf with its EOS port names as the emulation's Linux interfaces are named (:func:`linux_name`)."""
    return EOS_PORT_RE.sub(lambda m: linux_name(m.group(0)), text) if "/" in text else text
VRF_RE = re.compile(r"rail[0-9]{1,9}", re.ASCII)
ROLE_RE = re.compile(r"gpu|leaf|spine|core|tier[0-9]{1,2}", re.ASCII)
DIGITS_RE = re.compile(r"[0-9]{1,10}", re.ASCII)
IPV4_RE = r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}"
CIDR_RE = re.compile(IPV4_RE + r"/[0-9]{1,2}", re.ASCII)
_CTRL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shown(text: str, limit: int = 80) -> str:
    """``text`` as an error message quotes it: control characters escaped (``\\r``, ``\\n``, ``\\x00``), cut to ``limit``."""
    text = text if len(text) <= limit else text[:limit] + "…"
    return _CTRL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def _refuse(where: str, message: str, hint: str) -> InputError:
    return InputError([Problem(shown(where, 300), message, hint)])


# -- files


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return next((name for test, name in KIND_NAMES if test(mode)), "not a regular file")


def read_build_file(path: Path, max_bytes: int) -> str:
    """The text of a regular file of the build, refused (before opening) when a link or special file, or too large."""
    label = str(path)
    hint = "emulate reads only regular files that topogen build wrote; copy the build afresh"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise _refuse(label, "is missing", "build with --formats cabling,addressing,frr") from None
    except OSError as exc:
        raise _refuse(label, f"cannot be read: {exc.strerror or exc}", hint) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(label, f"is {_kind(st.st_mode)}, not a regular file", hint)
    if st.st_size > max_bytes:
        raise _refuse(label, f"is {human_bytes(st.st_size)}; emulate reads at most {human_bytes(max_bytes)} from such a file", "is this the build topogen wrote?")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _refuse(label, f"cannot be opened: {exc.strerror or exc}", hint) from None
    try:
        st2 = os.fstat(fd)
        if not stat.S_ISREG(st2.st_mode) or (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
            raise _refuse(label, "changed while it was opened (not the regular file seen before)", hint)
        chunks, got = [], 0
        while got <= max_bytes:
            b = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
    finally:
        os.close(fd)
    if got > max_bytes:
        raise _refuse(label, f"grew past {human_bytes(max_bytes)} while it was read", "is this the build topogen wrote?")
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _refuse(f"{label}:{line}", f"is not UTF-8 text (byte 0x{data[exc.start]:02x})", "topogen writes UTF-8; copy the build afresh") from None


def check_dir(path: Path) -> None:
    """``path`` is a real directory of the build (not a link to one)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise _refuse(str(path), "is missing", "build with --formats cabling,addressing,frr") from None
    except OSError as exc:
        raise _refuse(str(path), f"cannot be read: {exc.strerror or exc}", "give a build directory") from None
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(str(path), f"is {_kind(st.st_mode)}, not a directory", "emulate reads only what topogen build wrote; copy the build afresh")


def walk_confs(root: Path) -> dict[str, Path]:
    """Switch name -> its ``.conf`` under ``root`` (``frr/``), walked without following links; links and special files refused."""
    check_dir(root)
    out: dict[str, Path] = {}
    seen = 0
    for d, dirs, files in os.walk(root, followlinks=False, onerror=_walk_error):
        for name in sorted(dirs + files):
            p = Path(d) / name
            seen += 1
            if seen > MAX_CONFS:
                raise _refuse(str(root), f"holds more than {MAX_CONFS:,} entries", "emulate a smaller build")
            try:
                mode = os.lstat(p).st_mode
            except OSError as exc:
                raise _refuse(str(p), f"cannot be read: {exc.strerror or exc}", "copy the build afresh") from None
            if stat.S_ISDIR(mode):
                if name.endswith(".conf"):
                    raise _refuse(str(p), "is a directory where a switch's frr.conf is expected", "emulate reads only what topogen build wrote; copy the build afresh")
                continue
            if not stat.S_ISREG(mode):
                raise _refuse(str(p), f"is {_kind(mode)}; a build holds only regular files and directories", "emulate reads only what topogen build wrote; copy the build afresh")
            if name.endswith(".conf"):
                stem = name[:-5]
                if not NAME_RE.fullmatch(stem):
                    raise _refuse(str(p), f"is not named <switch>.conf (switch names: {NAME_RE.pattern})", "emulate reads only what topogen build wrote")
                if stem in out:
                    raise _refuse(str(p), f"a second frr.conf for {stem} (the first: {out[stem]})", "one file per switch")
                out[stem] = p
        dirs.sort()
    return out


def _walk_error(exc: OSError) -> None:
    raise _refuse(str(exc.filename), f"cannot be read: {exc.strerror or exc}", "copy the build afresh")


# -- CSV


def read_rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` of a build's CSV: the header holds ``columns``, each row as many cells as the header."""
    text = read_build_file(path, MAX_CSV_BYTES)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None or any(c not in header for c in columns):
            miss = [c for c in columns if header is None or c not in header]
            raise _refuse(f"{path}:1", f"the header lacks {', '.join(miss)}", f"topogen writes {', '.join(columns)}")
        width = len(header)
        for row in reader:
            line = reader.line_num
            if len(row) != width:
                raise _refuse(f"{path}:{line}", f"has {len(row)} cells, the header {width}", "one cell per column, as topogen writes")
            yield line, dict(zip(header, row))
    except csv.Error as exc:
        raise _refuse(f"{path}:{reader.line_num}", f"is not CSV: {exc}", "topogen writes plain CSV; copy the build afresh") from None


class Cells:
    """The cells of one CSV row, each taken through its field's grammar (the file and line in every refusal)."""

    def __init__(self, path: Path, line: int, row: dict[str, str]):
        self.where, self.row = f"{path}:{line}", row

    def _bad(self, col: str, what: str) -> InputError:
        return _refuse(self.where, f"{col} '{shown(self.row[col])}' is not {what}", "emulate takes only what topogen build writes; copy the build afresh")

    def name(self, col: str, empty: bool = False) -> str:
        v = self.row[col]
        if empty and v == "":
            return v
        if not NAME_RE.fullmatch(v):
            raise self._bad(col, "a device name (ASCII letters, digits, '.', '_', '-'; at most 64)")
        return v

    def iface(self, col: str, empty: bool = False) -> str:
        v = self.row[col]
        if empty and v == "":
            return v
        if len(v.encode("utf-8", "replace")) > IFNAMSIZ:
            raise self._bad(col, f"an interface name: Linux allows at most {IFNAMSIZ} bytes (IFNAMSIZ), it has {len(v.encode('utf-8', 'replace'))}")
        if not IFACE_RE.fullmatch(v):
            raise self._bad(col, "an interface name topogen writes (lo, p<n>, Ethernet<n>, Ethernet<n>/<m>, swp<n>, swp<n>s<m>, nic<n>, vlan<n>)")
        return linux_name(v)

    def role(self, col: str) -> str:
        v = self.row[col]
        if not ROLE_RE.fullmatch(v):
            raise self._bad(col, "a role (gpu, leaf, spine, core, tier<n>)")
        return v

    def vrf(self, col: str) -> str:
        v = self.row[col]
        if v != "" and not VRF_RE.fullmatch(v):
            raise self._bad(col, "a VRF name (rail<n>) or empty")
        return v

    def number(self, col: str, low: int, high: int, what: str, empty: bool = True) -> str:
        v = self.row[col]
        if empty and v == "":
            return v
        if not DIGITS_RE.fullmatch(v) or not low <= int(v) <= high:
            raise self._bad(col, f"{what} ({low}..{high}, ASCII digits)")
        return str(int(v))

    def address(self, col: str, empty: bool = True) -> str:
        """An IPv4 address with its prefix length (``10.0.0.1/31``), written back canonically."""
        return self._ipv4(col, empty, ipaddress.IPv4Interface, "an IPv4 address with its prefix length (a.b.c.d/len)")

    def prefix(self, col: str, empty: bool = True) -> str:
        """An IPv4 prefix (``10.128.0.0/9``, host bits zero), written back canonically."""
        return self._ipv4(col, empty, ipaddress.IPv4Network, "an IPv4 prefix (a.b.c.d/len, host bits zero)")

    def _ipv4(self, col: str, empty: bool, kind, what: str) -> str:
        v = self.row[col]
        if empty and v == "":
            return v
        try:
            if not CIDR_RE.fullmatch(v):
                raise ValueError
            return str(kind(v))
        except ValueError:
            raise self._bad(col, what) from None


# -- FRR configuration: exactly the statements topogen.config.frr writes

_N = r"[0-9]{1,10}"
_A = IPV4_RE
_P = IPV4_RE + r"/[0-9]{1,2}"
_NM = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
_IF = rf"(?:{_SWITCH_PORT}|nic[0-9]{{1,9}})"
_SP = rf"(?:{_SWITCH_PORT})"
_VRF = r"rail[0-9]{1,9}"
FRR_LINES = tuple(
    re.compile(p, re.ASCII)
    for p in (
        r"",
        r"!",
        r" !",
        rf"! frr\.conf of {_NM} \({_NM}, (?:rail-optimized|rail-only)\), written by topogen",
        r"frr defaults datacenter",
        rf"hostname {_NM}",
        r"service integrated-vtysh-config",
        r"ip forwarding",
        rf"vrf {_VRF}",
        r"exit-vrf",
        rf"interface lo",
        rf"interface (?:{_SP}|vlan[1-9][0-9]{{0,3}})(?: vrf {_VRF})?",
        rf" description {_NM}:{_IF}",
        r" description rail [0-9]{1,9} GPU gateway",
        rf" ip address {_P}",
        r" ipv6 nd ra-interval [0-9]{1,4}",
        r" no ipv6 nd suppress-ra",
        r"exit",
        rf"router bgp {_N}(?: vrf {_VRF})?",
        rf" bgp router-id {_A}",
        r" no bgp ebgp-requires-policy",
        r" no bgp network import-check",
        r" bgp bestpath as-path multipath-relax",
        r" timers bgp [0-9]{1,5} [0-9]{1,5}",
        rf" neighbor (?:{_A}|{_SP} interface) remote-as {_N}",
        rf" neighbor (?:{_A}|{_SP}) description {_NM}:{_IF}",
        rf" neighbor (?:{_A}|{_SP}) bfd profile fabric",
        r" address-family ipv4 unicast",
        r"  redistribute connected route-map LOCAL",
        r"  maximum-paths [0-9]{1,3}",
        r" exit-address-family",
        rf"ip prefix-list LOCAL seq [0-9]{{1,5}} permit {_P} (?:ge|le) 32",
        rf"ip route {_P} (?:{_A}|blackhole)",
        r"route-map LOCAL permit 10",
        r" match ip address prefix-list LOCAL",
        r"bfd",
        r" profile fabric",
        r"  (?:receive|transmit)-interval [0-9]{1,5}",
        r"  detect-multiplier [0-9]{1,3}",
        r" exit",
    )
)
_ADDRESS_IN = re.compile(_P + "|" + _A, re.ASCII)


def check_frr_conf(path: Path, text: str) -> None:
    """Refuse any line of ``text`` (``path``'s) that is not one of the statements topogen's frr.conf writer emits."""
    for i, line in enumerate(text.split("\n"), 1):
        if i > 1 and line == "" and i == text.count("\n") + 1:
            break  # the final newline
        if not any(p.fullmatch(line) for p in FRR_LINES):
            raise _refuse(f"{path}:{i}", f"'{shown(line)}' is not a statement topogen writes in frr.conf", "emulate loads only topogen's own FRR statements (no log file, do, shell or other commands); rebuild with --formats frr")
        for a in _ADDRESS_IN.findall(line):
            try:
                (ipaddress.IPv4Interface if "/" in a else ipaddress.IPv4Address)(a)
            except ValueError:
                raise _refuse(f"{path}:{i}", f"'{shown(a)}' is not an IPv4 address", "rebuild with --formats frr") from None
