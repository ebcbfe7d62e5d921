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
``hb003-gpu70:nic0``). A plan whose spec has a ``naming:`` section names hosts,
GPUs and interfaces by its templates; those are read once the plan is known
(:class:`.identity.Hosts`), from the host and interface as read
(:attr:`Found.hosts` keeps them for the ends mapped here the default way). Switch ports are kept as the switch names them
(``Ethernet8``, ``swp1s0``, ``Ethernet1/5``, ``p3``): the diff maps them onto the
plan's names of that switch's model (:mod:`topogen.fabric.ports`; a generic
switch's ``swp<n>``, ``Eth1/<n>`` and ``Ethernet1/<n>`` are its ``p<n>``). Of a neighbour's port id
(``ifname``/``local``) and port description, the one that names a port this
way is taken, else the id, else the description. A cable seen from both ends
is kept once.

Identity: every neighbour's chassis ID is kept (:attr:`Found.ids`,
``chassis mac 0c:42:a1:...``). A neighbour that sends no system name is named
by the system name another interface reports for the same chassis ID, else by
the file that sees each of its links from the other end, else by its chassis
ID; :mod:`.identity` matches any of these to the plan.
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
SWP_RE = re.compile(r"^(?:swp|[Ee]th(?:ernet)?1/)([0-9]{1,9})$", re.ASCII)
NATIVE_RE = re.compile(r"^(?:p[0-9]{1,9}|Ethernet[0-9]{1,4}(?:/[0-9]{1,2}){0,2}|swp[0-9]{1,4}(?:s[0-9])?|[0-9]{1,3}/[0-9]{1,2}(?:/[0-9])?)$", re.ASCII)  # p<n>, SONiC, EOS, Cumulus, MLNX-OS
SKIP_CHASSIS = ("id", "descr", "mgmt-ip", "mgmt-iface", "capability")


def end(device: str, port: str) -> End:
    """topogen's name for an LLDP (system name, interface) pair."""
    m = NIC_IF_RE.match(port)
    h = HOST_RE.match(device)
    if m and h:
        return End(f"{h.group(1)}-gpu{m.group(1)}", f"nic{m.group(2)}")
    return End(device, port)  # a switch port as the switch names it: the plan's names (topogen.fabric.ports) map it


def legacy(port: str) -> str:
    """``p<n>`` for the short forms a generic switch's port ``n`` shows (``swp<n>``, ``Eth1/<n>``, ``Ethernet1/<n>``), else ``port``.

    Used only when the plan's switches are unknown; with the plan's spec, its
    port names (:meth:`topogen.fabric.ports.SwitchPorts.name`) decide.
    """
    s = SWP_RE.match(port)
    return f"p{s.group(1)}" if s else port


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


def _known_port(text: str) -> bool:
    return bool(NIC_IF_RE.match(text) or SWP_RE.match(text) or NATIVE_RE.match(text))


def _peer_port(port: Any) -> str | None:
    """The neighbour's interface: the port id or the description, whichever names a port topogen knows."""
    if not isinstance(port, dict):
        return None
    pid = port.get("id")
    value = pid.get("value") if isinstance(pid, dict) and isinstance(pid.get("value"), str) else None
    by_name = value if isinstance(pid, dict) and pid.get("type") in ("ifname", "local") else None
    descr = port.get("descr") if isinstance(port.get("descr"), str) else None
    for cand in (by_name, descr):
        if cand and _known_port(cand.strip()):
            return cand.strip()
    return next((c.strip() for c in (by_name, descr, value) if c and c.strip()), None)


def _chassis(chassis: Any) -> tuple[str | None, str | None] | None:
    """(system name, chassis-ID key) of a neighbour; None when the chassis names several systems."""
    if not isinstance(chassis, dict):
        return None, None
    names = [k for k in chassis if k not in SKIP_CHASSIS]
    if len(names) > 1:
        return None
    body = chassis[names[0]] if names else chassis
    cid = body.get("id") if isinstance(body, dict) else None
    key = f"chassis {cid.get('type', 'id')} {cid['value']}" if isinstance(cid, dict) and isinstance(cid.get("value"), str) and cid["value"].strip() else None
    return (names[0] if names else None), key


def _by_reply(entries: list, name_of: dict[str, str]) -> dict[str, str]:
    """Chassis key -> file: a neighbour no interface names is the device of the file that sees every one of its links from the other end.

    An interface (X, i) that hears chassis K on its port p is answered by the
    file of K, which hears X on its interface p at port i; when every link to K
    is answered by one file, K is that file's device.
    """
    answer: dict[tuple[str, str, str], str] = {}
    for local, ifname, sysname, key, peer_port, _where in entries:
        peer = sysname or name_of.get(key)
        if peer:
            answer[(ifname, peer, peer_port)] = local
    found: dict[str, set[str | None]] = {}
    for local, ifname, sysname, key, peer_port, _where in entries:
        if not sysname and key and key not in name_of:
            found.setdefault(key, set()).add(answer.get((peer_port, local, ifname)))
    return {k: next(iter(v)) for k, v in found.items() if len(v) == 1 and None not in v}


def read(paths: list[Path]) -> Found:
    """Read per-device lldpctl JSON files; InputError naming the file (and line for bad JSON)."""
    found = Found("lldp", [str(p) for p in paths])
    found.local = set()
    problems: list[Problem] = []
    entries: list[tuple[str, str, str | None, str | None, str, str]] = []
    name_of: dict[str, str] = {}  # chassis key -> the system name some interface reports for it
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
        found.local.add(local)
        for ifname, info in interfaces:
            where = f"{path.name} interface {ifname}"
            who = _chassis(info.get("chassis") if isinstance(info, dict) else None)
            peer_port = _peer_port(info.get("port") if isinstance(info, dict) else None)
            if who is None or (who[0] is None and who[1] is None) or not peer_port:
                problems.append(Problem(where, "a neighbour needs one chassis (a system name or a chassis id) and a port id or descr", "lldpd on the neighbour must send its chassis id and interface names"))
                continue
            sysname, key = who
            if sysname and key:
                name_of.setdefault(key, sysname)
            entries.append((local, ifname, sysname, key, peer_port, where))
    if problems:
        raise InputError(problems[:20])
    name_of.update(_by_reply(entries, name_of))
    seen: set = set()
    for local, ifname, sysname, key, peer_port, where in entries:
        peer = sysname or name_of.get(key) or key.split(" ", 2)[2]
        if key:
            found.ids.setdefault(peer, key)
        a, z = end(local, ifname), end(peer, peer_port)
        for e, raw in ((a, End(local, ifname)), (z, End(peer, peer_port))):
            if e.device != raw.device:
                found.hosts.setdefault(e, raw)
        cable = Cable(a, z, where)
        if cable.key() not in seen:
            seen.add(cable.key())
            found.cables.append(cable)
    return found
