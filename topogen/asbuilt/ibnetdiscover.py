"""Read ``ibnetdiscover`` output (and the plan's ``.topo`` files, same format) into :class:`Found`.

The format: optional ``key=value`` lines (``vendid=``, ``switchguid=``...) and
``#`` comments; a header per node, ``Switch|Ca|Rt <ports> "<id>" # "<node
description>" ...``; then one line per connected port, ``[<port>](<port
guid>)? "<peer id>"[<peer port>](<peer port guid>)? # ...``. Every cable is
listed from both ends when both nodes were discovered; it is kept once.

Device names are node descriptions as read (``hb03-gpu5``, ``hb00 mlx5_7``,
a vendor's default); a description that several nodes share (in one file or across the files read
together; one node in several files, such as a GPU's adapter in each plane's subnet, is one node)
gives way to the node id (``S-<guid>``, ``H-<guid>``), so two unnamed
switches stay two devices. Ports become topogen's port names: switch port ``[n]`` is
``p<n>``, channel-adapter port ``[n]`` is ``nic<n-1>`` (one port per plane).
Each device keeps its node GUID and each adapter port its port GUID
(:attr:`Found.ids`, :attr:`Found.port_ids`), and each cable the link rate of
its comment (``4xNDR``: 400 Gb/s), for :mod:`.identity` and :mod:`.diff`.
A one-port adapter described ``"<device> <port>"`` with a port named as the
plan names the other networks' ports (``stor<i>``, ``p<n>``: the storage fabric's
file, :mod:`topogen.exports.infiniband.storage`) is that device's port.

A line that fits none of these shapes is an input error naming the file and
line; a file with no node line at all is not ibnetdiscover output and is
refused without quoting it.

A director (a switch of more than 254 ports) shows as its ASICs, described
``<chassis>/L<nn>/U1`` and ``<chassis>/S<nn>/U1`` (:mod:`topogen.fabric.director`):
they fold back into one device named ``<chassis>``, a leaf ASIC's external
port to the chassis port ``p<n>`` the plan names, and the links between the
chassis' own ASICs are dropped (they are no cables).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from topogen.asbuilt import Cable, End, Found
from topogen.fabric import director
from topogen.util.errors import InputError, Problem
from topogen.util.inputs import MAX_ASBUILT_BYTES, open_input

NODE_RE = re.compile(r'^(?P<type>Switch|Ca|Rt)\s+(?P<ports>[0-9]{1,9})\s+"(?P<id>[^"]+)"\s*(?:#\s*"(?P<desc>[^"]*)".*)?$', re.ASCII)
PORT_RE = re.compile(r'^\[(?P<port>[0-9]{1,9})\](?:\[ext [0-9]{1,9}\])?(?:\((?P<pguid>[0-9a-fA-F]{1,16})\))?\s*"(?P<peer>[^"]+)"\[(?P<pport>[0-9]{1,9})\](?:\[ext [0-9]{1,9}\])?(?:\([0-9a-fA-F]+\))?\s*(?:#(?P<comment>.*))?$', re.ASCII)
DESC_RE = re.compile(r'"([^"]*)"')
KEYVAL_RE = re.compile(r"^[A-Za-z]+=\S*")
NET_PORT_RE = re.compile(r"^(?P<device>\S+) (?P<port>stor[0-9]{1,4}|p[0-9]{1,5})$", re.ASCII)  # a storage port's adapter: "<device> <port>"
GUID_RE = re.compile(r"^[SHR]-(?P<guid>[0-9a-fA-F]{1,16})$", re.ASCII)
RATE_RE = re.compile(r"\b(?P<width>1|2|4|8|12)x(?P<lane>SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\b|\b(?P<gbps>[0-9]{1,5})G\b", re.ASCII)
LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
MAX_PROBLEMS = 20


def looks_like(text: str) -> bool:
    """True when ``text`` (the start of a file) holds an ibnetdiscover node record."""
    return any(NODE_RE.match(line.strip()) for line in text.splitlines()[:200])


def guid_key(node_id: str) -> str | None:
    """``guid 0x0002c90000000400`` for node id ``S-0002c90000000400`` (None when the id holds no GUID)."""
    m = GUID_RE.match(node_id)
    return f"guid 0x{int(m.group('guid'), 16):016x}" if m else None


def rate(comment: str | None) -> int:
    """Link rate in Gb/s of a port line's comment (``4xNDR``: 400; ``200G``: 200), 0 when it names none."""
    m = RATE_RE.search(comment or "")
    if not m:
        return 0
    if m.group("gbps"):
        return int(m.group("gbps"))
    return int(int(m.group("width")) * LANE_GBPS[m.group("lane")])


def _port_name(kind: str, port: int) -> str:
    return f"nic{port - 1}" if kind == "Ca" else f"p{port}"


def _name(desc: str, node_id: str) -> str:
    desc = " ".join(desc.split())
    return desc or node_id


def _node(kind: str, name: str) -> tuple[str, str, tuple[str, str, int] | None]:
    """(kind, name, director ASIC) of a node: the ASIC's (chassis, L/S, number) when its description names one."""
    return kind, name, director.parse(name.split()[0]) if kind == "Switch" and name else None


def _end(node: tuple[str, str, tuple[str, str, int] | None], port: int) -> tuple[End, bool]:
    """A port as topogen names it, and whether it is a director's internal port (see :mod:`topogen.fabric.director`)."""
    kind, name, asic = node
    if asic is None:
        m = NET_PORT_RE.match(name) if kind == "Ca" and port == 1 else None
        if m:
            return End(m.group("device"), m.group("port")), False
        return End(name, _port_name(kind, port)), False
    pname, inner = director.port_name(asic, port)
    return End(asic[0], pname), inner


def read(paths: list[Path]) -> Found:
    """Read one or more ibnetdiscover files (one per subnet) into one :class:`Found`."""
    found = Found("ibnetdiscover", [str(p) for p in paths])
    problems: list[Problem] = []
    seen: set[tuple[End, End]] = set()
    parsed = [_parse(Path(path), problems) for path in paths]
    shared: dict[str, set[str]] = {}  # the nodes a description names, in any of the files (one factory default per subnet)
    for records in parsed:
        for nid, (kind, name, _ports) in records.items():
            shared.setdefault(name, set()).add(nid)  # one node in several files (a GPU's adapter in each plane's subnet) is one node
    for records in parsed:
        nodes = {nid: _node(kind, nid if len(shared[name]) > 1 and director.parse(name.split()[0]) is None else name) for nid, (kind, name, _ports) in records.items()}
        for nid, node in nodes.items():
            key = guid_key(nid)
            if key is not None and node[2] is None:
                found.ids.setdefault(node[1], key)
        for nid, (*_, ports) in records.items():
            node = nodes[nid]
            for port, pguid, peer, pport, comment, where in ports:
                if peer in nodes:
                    pnode = nodes[peer]
                else:  # the peer's own record is missing (a partial discovery): trust the comment
                    m = DESC_RE.search(comment or "")
                    pnode = _node("Ca" if peer.startswith("H-") else "Switch", _name(m.group(1) if m else "", peer))
                    key = guid_key(peer)
                    if key is not None and pnode[2] is None:
                        found.ids.setdefault(pnode[1], key)
                (a, a_in), (z, z_in) = _end(node, port), _end(pnode, pport)
                if a_in and z_in and a.device == z.device:
                    continue  # a director's own link between its ASICs: inside the chassis, not a cable
                if pguid and node[0] == "Ca":
                    found.port_ids.setdefault(a, f"guid 0x{int(pguid, 16):016x}")
                gbps = rate(comment)
                cable = Cable(a, z, where, (gbps, gbps))
                k = cable.key()
                if k not in seen:
                    seen.add(k)
                    found.cables.append(cable)
    if problems:
        if len(problems) > MAX_PROBLEMS:
            problems = problems[:MAX_PROBLEMS] + [Problem("as-built", f"... and {len(problems) - MAX_PROBLEMS} more bad line(s)", "fix the lines above")]
        raise InputError(problems)
    return found


def _lines(path: Path):
    """The file's lines as text, streamed (a bad byte is an InputError naming the line)."""
    missing = Problem("as-built", f"file {str(path)!r} does not exist", "give ibnetdiscover output (ibnetdiscover > fabric.topo)")
    with open_input(path, "as-built", repr(str(path)), MAX_ASBUILT_BYTES, missing, what="ibnetdiscover file") as fh:
        no = 0
        try:
            for no, line in enumerate(io.TextIOWrapper(fh, encoding="utf-8-sig", errors="strict", newline=None), 1):
                yield no, line
        except UnicodeDecodeError:
            raise InputError([Problem("as-built", f"{str(path)!r} is not UTF-8 text (a bad byte after line {no:,}): not ibnetdiscover output", "give the output of ibnetdiscover")]) from None


def _parse(path: Path, problems: list[Problem]) -> dict[str, tuple[str, str, list]]:
    """Node id -> (kind, name, port lines) of one file; bad lines go to ``problems``.

    A file without a single node line is refused as a whole, its content not
    quoted: it is no ibnetdiscover output (a wrong file, ``/proc/self/environ``).
    """
    records: dict[str, tuple[str, str, list]] = {}
    current: list | None = None
    mine: list[Problem] = []
    for no, raw in _lines(path):
        line = raw.strip()
        if not line or line.startswith("#") or KEYVAL_RE.match(line):
            continue
        m = NODE_RE.match(line)
        if m:
            name = _name(m.group("desc") or "", m.group("id"))
            current = []
            records[m.group("id")] = (m.group("type"), name, current)
            continue
        where = f"{path.name} line {no}"
        m = PORT_RE.match(line)
        if m:
            if current is None:
                mine.append(Problem(where, "a port line before any Switch/Ca node line", 'each node starts with: Switch <ports> "S-<guid>" # "<name>"'))
                continue
            current.append((int(m.group("port")), m.group("pguid"), m.group("peer"), int(m.group("pport")), m.group("comment"), where))
            continue
        if not records and len(mine) >= MAX_PROBLEMS:
            break  # nothing of ibnetdiscover so far: no need to read on
        mine.append(Problem(where, f"not an ibnetdiscover line: {line[:80]!r}", 'expected a node line (Switch <ports> "S-<guid>" # "<name>") or a port line ([<port>] "<peer id>"[<peer port>])'))
    if not records:
        problems.append(Problem("as-built", f"{str(path)!r} is not ibnetdiscover output: it holds no node line (Switch|Ca <ports> \"<id>\")", "give the output of ibnetdiscover, or pass --format for lldpctl JSON or a cabling CSV"))
        return records
    problems.extend(mine)
    return records
