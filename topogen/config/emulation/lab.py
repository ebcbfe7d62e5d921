"""The lab an emulation boots, read from a build: routers (a switch, or one VRF of it), sampled GPU NICs and cables.

Also what the plan says about BGP against each router's ``frr.conf`` (:func:`bgp_mismatches`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from topogen.config.emulation.grammar import MAX_CONF_BYTES, Cells, check_dir, check_frr_conf, linux_conf, read_build_file, read_rows, shown, walk_confs
from topogen.fabric.naming import GpuNames
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError, Problem

FRR_DIR = Path("/usr/lib/frr")
DAEMONS = ("zebra", "bgpd", "bfdd", "staticd")  # every daemon a topogen frr.conf may need (machine.py checks each is installed)
ROLE_ORDER = {"gpu": 0, "leaf": 1, "spine": 2, "core": 3}
GPU_NAME = re.compile(r"hb([0-9]{1,9})-gpu([0-9]{1,9})", re.ASCII)


def role_rank(role: str) -> int:
    return ROLE_ORDER.get(role, int(role[4:]) if role.startswith("tier") and role[4:].isdigit() else 99)


@dataclass
class Port:
    device: str
    name: str
    vrf: str
    vlan: str
    address: str  # a.b.c.d/len or ""
    peer: str
    peer_port: str
    peer_address: str


@dataclass
class Router:
    """One FRR instance: a switch, or one VRF of a switch carrying several rails."""

    name: str  # the switch, or <switch>/<vrf>
    switch: str
    role: str
    vrf: str
    config: str
    ports: list[Port] = field(default_factory=list)
    ns: str = ""
    asn: str = ""

    @property
    def daemons(self) -> tuple[str, ...]:
        """The FRR daemons this router's configuration needs: zebra always, bgpd for ``router bgp``, bfdd for ``bfd``, staticd for ``ip route``."""
        return daemons_for(self.config)

    def uplinks(self, roles: dict[str, str]) -> list[Port]:
        return [p for p in self.ports if roles.get(p.peer, "gpu") != "gpu" and role_rank(roles[p.peer]) > role_rank(self.role)]

    def isls(self, roles: dict[str, str]) -> list[Port]:
        """Ports to a switch of this router's own tier: the inter-switch links of a leaf pair (``design: leaf-pair``)."""
        return [p for p in self.ports if roles.get(p.peer, "gpu") != "gpu" and role_rank(roles[p.peer]) == role_rank(self.role)]

    def exits(self, roles: dict[str, str]) -> list[Port]:
        """The ports traffic to another leaf's GPUs leaves by: the uplinks, and a leaf pair's ISLs."""
        return self.uplinks(roles) + self.isls(roles)


def daemons_for(config: str) -> tuple[str, ...]:
    """The FRR daemons a configuration needs, in :data:`DAEMONS` order (each statement's owner; zebra always)."""
    need = {"zebra"}
    for ln in config.splitlines():
        if ln.startswith("router bgp "):
            need.add("bgpd")
        elif ln == "bfd" or ln.endswith(" bfd profile fabric"):
            need.add("bfdd")
        elif ln.startswith(("ip route ", "ipv6 route ")):
            need.add("staticd")
    return tuple(d for d in DAEMONS if d in need)


@dataclass
class Host:
    """One GPU NIC port: a namespace with one interface."""

    gpu: str
    nic: str
    rail: int
    address: str
    gateway: str
    route: str
    leaf: str
    leaf_port: str
    ns: str = ""

    @property
    def ip(self) -> str:
        return self.address.split("/")[0]


@dataclass
class Lab:
    arch: str
    routers: list[Router]
    hosts: list[Host]
    cables: list[tuple[str, str, str, str]]  # a device, a port, z device, z port
    roles: dict[str, str]
    gpus_total: int  # GPU NICs of the build (a GPU has one per plane)
    configs: dict[str, Path]  # switch -> its frr.conf as built
    texts: dict[str, str] = field(default_factory=dict)  # switch -> that file's text, checked by the grammar
    loopbacks: dict[str, str] = field(default_factory=dict)  # switch -> its loopback a.b.c.d/32 in the plan


def _arch_dir(build: Path, arch: str | None) -> tuple[str, Path]:
    if not build.is_dir():
        raise InputError([Problem("build_dir", f"{shown(str(build), 300)} is not a directory", "give a build directory written by topogen build --formats cabling,addressing,frr (e.g. out/demo)")])
    have = [a for a in ("rail-optimized", "rail-only") if (build / a / "addressing.csv").exists() or (build / a / "addressing.csv").is_symlink()]
    if arch is not None:
        if arch not in have:
            raise InputError([Problem("arch", f"{shown(str(build), 300)} has no {arch}/addressing.csv", f"architectures there: {', '.join(have) or 'none'}; build with --formats cabling,addressing,frr")])
        return arch, build / arch
    if len(have) != 1:
        raise InputError([Problem("arch", f"{shown(str(build), 300)} holds {len(have)} architectures with addressing.csv ({', '.join(have) or 'none'})", "pick one with --arch rail-optimized or --arch rail-only; build with --formats cabling,addressing,frr")])
    return have[0], build / have[0]


def split_vrfs(text: str) -> dict[str, str]:
    """A ``frr.conf`` cut into one configuration per VRF (``""`` the default): what a router per VRF loads.

    ``vrf X`` blocks go away, ``interface P vrf X`` and ``router bgp N vrf X``
    go to X's router without the ``vrf X``, other interface and BGP blocks to
    the default router, every other line (hostname, prefix lists, route maps,
    BFD profiles) to all.
    """
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line and not line[0].isspace() and line != "!" and not line.startswith("exit"):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    vrfs = sorted({b[0].split()[1] for b in blocks if b[0].startswith("vrf ")})
    out = {v: [] for v in [""] + vrfs}
    for b in blocks:
        head = b[0].split()
        if head[:1] == ["vrf"]:
            continue
        if head[:1] == ["interface"] or head[:2] == ["router", "bgp"]:
            v = head[head.index("vrf") + 1] if "vrf" in head else ""
            out[v].append("\n".join([" ".join(head[: head.index("vrf")]) if v else b[0]] + b[1:]))
        else:
            for v in out:
                out[v].append("\n".join(b))
    return {v: "\n".join(lines) + "\n" for v, lines in out.items()}


ADDRESSING = ("device", "role", "interface", "vrf", "vlan", "address", "asn", "peer_device", "peer_interface", "peer_address", "route")
CABLING = ("a_device", "a_port", "z_device", "z_port")
MAX_ASN = (1 << 32) - 1


def _addressing(path: Path) -> list[dict[str, str]]:
    """The rows of addressing.csv, each cell through its grammar (:mod:`.grammar`): what reaches ``ip`` and FRR."""
    rows = []
    for line, row in read_rows(path, ADDRESSING):
        row["line"] = str(line)
        c = Cells(path, line, row)
        role = c.role("role")
        gpu = role == "gpu"
        rows.append(
            {
                "device": c.name("device"),
                "role": role,
                "interface": c.iface("interface"),
                "vrf": c.vrf("vrf"),
                "vlan": c.number("vlan", 1, 4094, "a VLAN ID"),
                "address": c.address("address", empty=not gpu),
                "asn": c.number("asn", 1, MAX_ASN, "an ASN"),
                "peer_device": c.name("peer_device", empty=True),
                "peer_interface": c.iface("peer_interface", empty=True),
                "peer_address": c.address("peer_address", empty=not gpu),
                "route": c.prefix("route", empty=not gpu),
                "line": row["line"],
            }
        )
    return rows


def _cabling(path: Path, ends: set[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    """The cables of cabling.csv, each end a (device, interface) of addressing.csv (``ends``)."""
    out = []
    for line, row in read_rows(path, CABLING):
        c = Cells(path, line, row)
        cable = (c.name("a_device"), c.iface("a_port"), c.name("z_device"), c.iface("z_port"))
        for dev, port in (cable[:2], cable[2:]):
            if (dev, port) not in ends:
                raise InputError([Problem(f"{shown(str(path), 300)}:{line}", f"{dev}:{port} is no interface of addressing.csv", "cabling.csv and addressing.csv come from one build; copy the build afresh")])
        out.append(cable)
    return out


def load_lab(build: Path, arch: str | None, max_gpus: int) -> Lab:
    """The routers, GPU hosts and cables of one architecture of a build; GPUs sampled to ``max_gpus``.

    Every file goes through :mod:`.grammar` (regular files only, bounded, each cell and
    each frr.conf line in topogen's own grammar) before anything of it is used.
    """
    arch, root = _arch_dir(Path(build), arch)
    check_dir(root)
    problems = []
    for need in ("cabling.csv", "addressing.csv", "frr"):
        if not (root / need).exists() and not (root / need).is_symlink():
            problems.append(Problem("build", f"{shown(str(root / need), 300)} is missing", "build with --formats cabling,addressing,frr"))
    if problems:
        raise InputError(problems)
    rows = _addressing(root / "addressing.csv")
    known = {r["device"] for r in rows}
    stray = next((r for r in rows if r["peer_device"] and r["peer_device"] not in known), None)
    if stray is not None:
        raise InputError([Problem(f"{shown(str(root / 'addressing.csv'), 300)}:{stray['line']}", f"peer_device {stray['peer_device']} is no device of addressing.csv", "emulate takes only what topogen build writes; copy the build afresh")])
    cables = _cabling(root / "cabling.csv", {(r["device"], r["interface"]) for r in rows})
    configs = walk_confs(root / "frr")
    roles = {r["device"]: r["role"] for r in rows}
    loopbacks = {r["device"]: r["address"] for r in rows if r["role"] != "gpu" and r["interface"] == "lo"}
    asns = {r["device"]: r["asn"] for r in rows if r["role"] != "gpu"}
    ports: dict[str, list[Port]] = {}
    gpu_rows = []
    for r in rows:
        if r["role"] == "gpu":
            gpu_rows.append(r)
        elif r["peer_device"] and r["interface"] != "lo" and not r["interface"].startswith("vlan"):  # a cabled switch port, by any of its model's names (the grammar took it)
            ports.setdefault(r["device"], []).append(Port(r["device"], r["interface"], r["vrf"], r["vlan"], r["address"], r["peer_device"], r["peer_interface"], r["peer_address"]))
    switches = [d for d in dict.fromkeys(r["device"] for r in rows if r["role"] != "gpu")]
    missing = [s for s in switches if s not in configs]
    if missing:
        first = next(r["line"] for r in rows if r["device"] == missing[0])
        raise InputError([Problem(f"{shown(str(root / 'addressing.csv'), 300)}:{first}", f"no frr.conf for {len(missing)} switch(es) of addressing.csv: {', '.join(missing[:3])}", f"expected {shown(str(root / 'frr'), 300)}/**/<switch>.conf; build with --formats frr")])
    routers = []
    texts = {}
    for s in switches:
        text = read_build_file(configs[s], MAX_CONF_BYTES)
        check_frr_conf(configs[s], text)
        text = linux_conf(text)  # EOS's Ethernet1/5 as the emulation's Linux interface Ethernet1_5
        texts[s] = text
        parts = split_vrfs(text)
        for vrf, conf in parts.items():
            name = s if vrf == "" else f"{s}/{vrf}"
            routers.append(Router(name, s, roles[s], vrf, conf if len(parts) > 1 else text, [p for p in ports.get(s, []) if p.vrf == vrf], asn=asns.get(s, "")))
    hosts = []
    names = _site_gpu_names(root)
    for r in gpu_rows:
        if names is not None:
            g = names.parse(r["device"])
            rail = -1 if g is None else g % names.hb
        else:
            m = GPU_NAME.fullmatch(r["device"])
            rail = int(m.group(2)) if m else -1
        hosts.append(Host(r["device"], r["interface"], rail, r["address"], r["peer_address"].split("/")[0], r["route"], r["peer_device"], r["peer_interface"]))
    key = _gpu_key if names is None else _site_key(names)
    gpus = sorted({h.gpu for h in hosts}, key=key)
    picked = set(sample_gpus(gpus, max_gpus, key))
    hosts = [h for h in hosts if h.gpu in picked]
    return Lab(arch, routers, hosts, cables, roles, len(gpu_rows), {s: configs[s] for s in switches}, texts, loopbacks)  # GPU NICs, as the hosts are


def _site_gpu_names(root: Path) -> GpuNames | None:
    """The GPU names of a build whose spec has a ``naming.gpu`` template (its summary.json beside the architecture's directory); None: topogen's."""
    for summary in (root.parent / "summary.json", root / "summary.json"):
        if summary.is_file() and not summary.is_symlink():
            try:
                data = json.loads(read_build_file(summary, MAX_CONF_BYTES * 16))
            except ValueError:
                return None
            spec = data.get("spec") if isinstance(data, dict) else None
            if isinstance(spec, dict) and isinstance(spec.get("naming"), dict) and "gpu" in spec["naming"]:
                s = build_spec(dict(spec), default_name=str(spec.get("name") or "cluster"))
                return GpuNames.of(s)
            return None
    return None


def _gpu_key(name: str) -> tuple[int, int]:
    m = GPU_NAME.fullmatch(name)
    return (int(m.group(1)), int(m.group(2))) if m else (1 << 62, 0)


def _site_key(names: GpuNames):
    """(HB domain, rank) of a GPU under the site's names, as :func:`_gpu_key` of topogen's."""

    def key(name: str) -> tuple[int, int]:
        g = names.parse(name)
        return divmod(g, names.hb) if g is not None else (1 << 62, 0)

    return key


def sample_gpus(gpus: list[str], limit: int, key=None) -> list[str]:
    """Every GPU when there are at most ``limit``; else whole HB domains spread evenly from first to last.

    Whole domains keep every rail in the sample (the cross-rail checks need
    them); the spread reaches the leaves of the first and the last group. The
    choice depends only on the names and ``limit``: the same build samples alike.
    """
    if len(gpus) <= limit:
        return list(gpus)
    domains: dict[int, list[str]] = {}
    for g in gpus:
        domains.setdefault((key or _gpu_key)(g)[0], []).append(g)
    keys = sorted(domains)
    per = max(len(v) for v in domains.values())
    want = max(2, min(len(keys), limit // per))
    idx = sorted({round(i * (len(keys) - 1) / (want - 1)) for i in range(want)})
    return [g for i in idx for g in domains[keys[i]]]


NEIGHBOR_RE = re.compile(r"^ neighbor (\S+)( interface)? remote-as (\S+)\s*$")


def bgp_mismatches(r: Router, roles: dict[str, str], asns: dict[str, str]) -> list[str]:
    """What router ``r``'s configuration says about BGP that the plan does not: ASN, neighbours, their ASNs."""
    out = []
    local = [ln.split() for ln in r.config.splitlines() if ln.startswith("router bgp ")]
    if not local and r.ports:
        out.append(f"{r.name}: no 'router bgp' section; the plan gives AS {r.asn}")
    elif local and local[0][2] != r.asn:
        out.append(f"{r.name}: router bgp {local[0][2]}, the plan gives AS {r.asn}")
    said = {}
    for ln in r.config.splitlines():
        m = NEIGHBOR_RE.match(ln)
        if m:
            said[m.group(1)] = m.group(3)
    wanted = {}
    for p in r.ports:
        if roles.get(p.peer, "gpu") == "gpu":
            continue
        key = p.peer_address.split("/")[0] if p.peer_address else p.name
        wanted[key] = (p, asns.get(p.peer, "?"))
    for key, (p, asn) in wanted.items():
        if key not in said:
            out.append(f"{r.name}: no BGP neighbour {key} on {p.name} (to {p.peer}:{p.peer_port}, AS {asn})")
        elif said[key] != asn:
            out.append(f"{r.name}: neighbour {key} on {p.name} has remote-as {said[key]}, but {p.peer} is AS {asn}")
    for key in said:
        if key not in wanted:
            out.append(f"{r.name}: BGP neighbour {key} is on no cabled port of the plan")
    return out
