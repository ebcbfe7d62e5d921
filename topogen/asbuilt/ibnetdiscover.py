"""Read ``ibnetdiscover`` output (and the plan's ``.topo`` files, same format) into :class:`Found`.

The format: optional ``key=value`` lines (``vendid=``, ``switchguid=``...) and
``#`` comments; a header per node, ``Switch|Ca|Rt <ports> "<id>" # "<node
description>" ...``; then one line per connected port, ``[<port>](<port
guid>)? "<peer id>"[<peer port>](<peer port guid>)? # ...``. Every cable is
listed from both ends when both nodes were discovered; it is kept once.

Device names are node descriptions (the first word when the description
holds several, as in ``hb03-gpu5 mlx5_5``); ports become topogen's port
names: switch port ``[n]`` is ``p<n>``, channel-adapter port ``[n]`` is
``nic<n-1>`` (one port per plane). A line that fits none of these shapes is
an input error naming the file and line.

A director (a switch of more than 254 ports) shows as its ASICs, described
``<chassis>/L<nn>/U1`` and ``<chassis>/S<nn>/U1`` (:mod:`topogen.fabric.director`):
they fold back into one device named ``<chassis>``, a leaf ASIC's external
port to the chassis port ``p<n>`` the plan names, and the links between the
chassis' own ASICs are dropped (they are no cables).
"""

from __future__ import annotations

import re
from pathlib import Path

from topogen.asbuilt import Cable, End, Found
from topogen.fabric import director
from topogen.util.errors import InputError, Problem
from topogen.util.inputs import MAX_ASBUILT_BYTES, read_text

NODE_RE = re.compile(r'^(?P<type>Switch|Ca|Rt)\s+(?P<ports>[0-9]{1,9})\s+"(?P<id>[^"]+)"\s*(?:#\s*"(?P<desc>[^"]*)".*)?$', re.ASCII)
PORT_RE = re.compile(r'^\[(?P<port>[0-9]{1,9})\](?:\[ext [0-9]{1,9}\])?(?:\([0-9a-fA-F]+\))?\s*"(?P<peer>[^"]+)"\[(?P<pport>[0-9]{1,9})\](?:\[ext [0-9]{1,9}\])?(?:\([0-9a-fA-F]+\))?\s*(?:#(?P<comment>.*))?$', re.ASCII)
DESC_RE = re.compile(r'"([^"]*)"')
KEYVAL_RE = re.compile(r"^[A-Za-z]+=\S*")
MAX_PROBLEMS = 20


def looks_like(text: str) -> bool:
    """True when ``text`` (the start of a file) holds an ibnetdiscover node record."""
    return any(NODE_RE.match(line.strip()) for line in text.splitlines()[:200])


def _port_name(kind: str, port: int) -> str:
    return f"nic{port - 1}" if kind == "Ca" else f"p{port}"


def _name(desc: str, node_id: str) -> str:
    desc = desc.strip()
    return desc.split()[0] if desc else node_id


def _node(kind: str, name: str) -> tuple[str, str, tuple[str, str, int] | None]:
    """(kind, name, director ASIC) of a node: the ASIC's (chassis, L/S, number) when its description names one."""
    return kind, name, director.parse(name) if kind == "Switch" else None


def _end(node: tuple[str, str, tuple[str, str, int] | None], port: int) -> tuple[End, bool]:
    """A port as topogen names it, and whether it is a director's internal port (see :mod:`topogen.fabric.director`)."""
    kind, name, asic = node
    if asic is None:
        return End(name, _port_name(kind, port)), False
    pname, inner = director.port_name(asic, port)
    return End(asic[0], pname), inner


def read(paths: list[Path]) -> Found:
    """Read one or more ibnetdiscover files (one per subnet) into one :class:`Found`."""
    found = Found("ibnetdiscover", [str(p) for p in paths])
    problems: list[Problem] = []
    seen: set[tuple[End, End]] = set()
    for path in paths:
        records = _parse(Path(path), problems)
        nodes = {nid: _node(kind, name) for nid, (kind, name, _ports) in records.items()}
        for nid, (*_, ports) in records.items():
            node = nodes[nid]
            for port, peer, pport, comment, where in ports:
                if peer in nodes:
                    pnode = nodes[peer]
                else:  # the peer's own record is missing (a partial discovery): trust the comment
                    m = DESC_RE.search(comment or "")
                    pnode = _node("Ca" if peer.startswith("H-") else "Switch", _name(m.group(1) if m else "", peer))
                (a, a_in), (z, z_in) = _end(node, port), _end(pnode, pport)
                if a_in and z_in and a.device == z.device:
                    continue  # a director's own link between its ASICs: inside the chassis, not a cable
                cable = Cable(a, z, where)
                k = cable.key()
                if k not in seen:
                    seen.add(k)
                    found.cables.append(cable)
    if problems:
        if len(problems) > MAX_PROBLEMS:
            problems = problems[:MAX_PROBLEMS] + [Problem("as-built", f"... and {len(problems) - MAX_PROBLEMS} more bad line(s)", "fix the lines above")]
        raise InputError(problems)
    return found


def _parse(path: Path, problems: list[Problem]) -> dict[str, tuple[str, str, list]]:
    missing = Problem("as-built", f"file {str(path)!r} does not exist", "give ibnetdiscover output (ibnetdiscover > fabric.topo)")
    text = read_text(path, "as-built", repr(str(path)), MAX_ASBUILT_BYTES, missing, what="ibnetdiscover file")
    records: dict[str, tuple[str, str, list]] = {}
    current: list | None = None
    kind = ""
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or KEYVAL_RE.match(line):
            continue
        where = f"{path.name} line {no}"
        m = NODE_RE.match(line)
        if m:
            kind = m.group("type")
            name = _name(m.group("desc") or "", m.group("id"))
            current = []
            records[m.group("id")] = (kind, name, current)
            continue
        m = PORT_RE.match(line)
        if m:
            if current is None:
                problems.append(Problem(where, "a port line before any Switch/Ca node line", 'each node starts with: Switch <ports> "S-<guid>" # "<name>"'))
                continue
            current.append((int(m.group("port")), m.group("peer"), int(m.group("pport")), m.group("comment"), where))
            continue
        problems.append(Problem(where, f"not an ibnetdiscover line: {line[:80]!r}", 'expected a node line (Switch <ports> "S-<guid>" # "<name>") or a port line ([<port>] "<peer id>"[<peer port>])'))
    return records
