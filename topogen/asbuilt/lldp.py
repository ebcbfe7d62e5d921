"""Read LLDP neighbours (``lldpctl -f json``) into :class:`Found`.

One file per device, named after it: ``lldpctl -f json > $(hostname).json``
(the output lists neighbours, not the local system, so the file name says
whose they are). The shapes lldpd writes are read: ``{"lldp": {"interface":
{<ifname>: {...}}}}`` for one interface and a list of such one-key objects for
several; each interface holds ``chassis`` (keyed by the neighbour's system
name) and ``port`` (``id`` with ``type``/``value``, and ``descr``).

Names: switches and GPUs by topogen's names; compute nodes by their host
names with interfaces ``gpu<rank>-nic<plane>`` (NetBox and Slurm exports),
which map to the GPU ``<host>-gpu<rank>`` port ``nic<plane>`` (``hb03`` +
``gpu5-nic0`` is ``hb03-gpu5:nic0``; ``hb003-n17`` + ``gpu70-nic0`` is
``hb003-gpu70:nic0``). Switch ports ``p<n>`` or Cumulus-style ``swp<n>`` are
port ``p<n>``. A cable seen from both ends is kept once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from topogen.asbuilt import Cable, End, Found
from topogen.asbuilt.wiring import load_json
from topogen.util.errors import InputError, Problem
from topogen.util.inputs import MAX_ASBUILT_BYTES, read_text

NIC_IF_RE = re.compile(r"^gpu([0-9]{1,9})-nic([0-9]{1,9})$", re.ASCII)
HOST_RE = re.compile(r"^(hb[0-9]{1,9})(?:-n[0-9]{1,9})?$", re.ASCII)
SWP_RE = re.compile(r"^swp([0-9]{1,9})$", re.ASCII)


def end(device: str, port: str) -> End:
    """topogen's name for an LLDP (system name, interface) pair."""
    m = NIC_IF_RE.match(port)
    h = HOST_RE.match(device)
    if m and h:
        return End(f"{h.group(1)}-gpu{m.group(1)}", f"nic{m.group(2)}")
    s = SWP_RE.match(port)
    if s:
        return End(device, f"p{s.group(1)}")
    return End(device, port)


def _interfaces(data: Any) -> list[tuple[str, Any]] | None:
    lldp = data.get("lldp") if isinstance(data, dict) else None
    if not isinstance(lldp, dict):
        return None
    raw = lldp.get("interface", [])
    items = raw if isinstance(raw, list) else [raw]
    out: list[tuple[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        out.extend(item.items())
    return out


def read(paths: list[Path]) -> Found:
    """Read per-device lldpctl JSON files; InputError naming the file (and line for bad JSON)."""
    found = Found("lldp", [str(p) for p in paths])
    problems: list[Problem] = []
    seen: set = set()
    for path in paths:
        path = Path(path)
        local = path.stem
        try:
            missing = Problem(path.name, "cannot read: the file does not exist", "give the output of lldpctl -f json")
            data = load_json(read_text(path, path.name, repr(str(path)), MAX_ASBUILT_BYTES, missing, what="lldpctl JSON file"), path.name)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        interfaces = _interfaces(data)
        if interfaces is None:
            problems.append(Problem(path.name, "not lldpctl JSON: expected {\"lldp\": {\"interface\": ...}}", "run lldpctl -f json > <device>.json on each device"))
            continue
        for ifname, info in interfaces:
            where = f"{path.name} interface {ifname}"
            chassis = info.get("chassis") if isinstance(info, dict) else None
            port = info.get("port") if isinstance(info, dict) else None
            names = [k for k in chassis if k not in ("id", "descr", "mgmt-ip", "capability")] if isinstance(chassis, dict) else []
            pid = port.get("id") if isinstance(port, dict) else None
            peer_port = None
            if isinstance(pid, dict) and pid.get("type") in ("ifname", "local") and isinstance(pid.get("value"), str):
                peer_port = pid["value"]
            elif isinstance(port, dict) and isinstance(port.get("descr"), str):
                peer_port = port["descr"]
            if len(names) != 1 or not peer_port:
                problems.append(Problem(where, "a neighbour needs one chassis system name and a port id (ifname) or descr", "lldpd on the neighbour must send its system name and interface names"))
                continue
            cable = Cable(end(local, ifname), end(names[0], peer_port), where)
            if cable.key() not in seen:
                seen.add(cable.key())
                found.cables.append(cable)
    if problems:
        raise InputError(problems[:20])
    return found
