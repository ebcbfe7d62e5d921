"""The spec's optional ``addressing:`` section: address pools, link numbering and ASN scheme.

Every key has a default that follows RFC 7938 (BGP in large data centres) and the common
RoCE GPU-fabric practice (a /31 per GPU NIC port, Spectrum-X style); the section may be
left out entirely. Every key, its meaning and its default is in :data:`ADDRESSING_FIELDS`
(also printed by ``topogen schema spec``). The plan itself is
:mod:`topogen.config.addressing`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from topogen.spec.fields import Field, names
from topogen.util.errors import Problem, check_section, show

P2P_CHOICES = ("numbered", "unnumbered")
GPU_SUBNET_CHOICES = ("link", "rail")
ASN_SCHEMES = ("rfc7938", "per-switch")
POOLS = ("loopbacks", "fabric", "gpus")
NETWORK_POOLS = ("inband", "oob")  # the other networks' pools (used with a networks: section; topogen.config.netaddr)

# IPv4 ranges no pool may touch: this-network, loopback, link-local, multicast, reserved/broadcast
RESERVED_V4 = tuple(ipaddress.ip_network(n) for n in ("0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4"))
# ASNs no switch may take: 0 and 65535 (RFC 7607/7300), AS_TRANS 23456 (RFC 6793), documentation (RFC 5398), 4294967295
RESERVED_ASNS = ((0, 0), (23456, 23456), (64496, 64511), (65535, 65551), (4294967295, 4294967295))
MAX_ASN = 4294967295


@dataclass(frozen=True, slots=True)
class AddressingSpec:
    """The resolved ``addressing:`` section (see the module docstring); plain text and ints, so it hashes as JSON."""

    loopbacks: str = "10.0.0.0/16"
    fabric: str = "10.64.0.0/10"
    gpus: str = "10.128.0.0/9"
    p2p: str = "numbered"
    gpu_subnet: str = "link"
    asn_scheme: str = "rfc7938"
    asn_pool: str = "4200000000-4294967294"
    vlan_base: int = 1000
    vrf_table_base: int = 1000
    inband: str = "10.16.0.0/12"
    oob: str = "10.32.0.0/12"
    inband_vlan: int = 100

    def pool(self, name: str) -> ipaddress.IPv4Network:
        """The pool ``name`` (``loopbacks``, ``fabric``, ``gpus``, ``inband``, ``oob``) as a network."""
        return ipaddress.IPv4Network(getattr(self, name))

    @property
    def asn_range(self) -> tuple[int, int]:
        """``(first, last)`` of ``asn_pool``."""
        a, b = self.asn_pool.split("-")
        return int(a), int(b)


DEFAULT = AddressingSpec()
ADDRESSING_FIELDS: tuple[Field, ...] = (
    Field("loopbacks", "text", "IPv4 pool of the switches' loopbacks, a /32 each.", default=DEFAULT.loopbacks, example="10.0.0.0/16"),
    Field("fabric", "text", "IPv4 pool of the switch-to-switch /31s.", default=DEFAULT.fabric, example="10.64.0.0/10"),
    Field("gpus", "text", "IPv4 pool of the GPU NIC subnets: a block per plane and rail, a slot per leaf in it.", default=DEFAULT.gpus, example="10.128.0.0/9"),
    Field("p2p", "choice", "Switch-to-switch links: numbered (a /31 each) or unnumbered (BGP over IPv6 link-local, RFC 5549).", default=DEFAULT.p2p, choices=P2P_CHOICES),
    Field("gpu_subnet", "choice", "GPU NICs: a /31 per NIC-leaf link (link) or one subnet per rail per leaf, the gateway on the rail's VLAN (rail).", default=DEFAULT.gpu_subnet, choices=GPU_SUBNET_CHOICES),
    Field("asn_scheme", "choice", "rfc7938: an ASN per leaf, one per spine tier per pod and plane; per-switch: every switch its own.", default=DEFAULT.asn_scheme, choices=ASN_SCHEMES),
    Field("asn_pool", "text", "ASNs to number the switches from, 'first-last'.", default=DEFAULT.asn_pool, example="64512-65534"),
    Field("vlan_base", "int", "VLAN of rail r: vlan_base + r (rail subnets, rail-only switches shared by rails).", default=DEFAULT.vlan_base, minimum=1, example=1000),
    Field("vrf_table_base", "int", "Kernel routing table of rail r's VRF: vrf_table_base + r.", default=DEFAULT.vrf_table_base, minimum=1, example=1000),
    Field("inband", "text", "IPv4 pool of the in-band management network (with a networks: section): one subnet per in-band leaf pair, alike in size (its network address, the virtual gateway .1, each leaf's SVI, then the nodes' bond0, the management servers' bond0, the NFS and converged storage ports in wiring order).", default=DEFAULT.inband, example="10.16.0.0/12"),
    Field("oob", "text", "IPv4 pool of the out-of-band network (with a networks: section): one subnet per OOB access switch, alike in size (the switch's SVI .1 is the gateway, then every BMC and management port cabled to it, in port order).", default=DEFAULT.oob, example="10.32.0.0/12"),
    Field("inband_vlan", "int", "VLAN of the in-band subnets on every leaf pair (the leaves' SVI and the nodes' access ports).", default=DEFAULT.inband_vlan, minimum=1, example=100),
)
NETWORK_DEFAULTS = {k: getattr(DEFAULT, k) for k in (*NETWORK_POOLS, "inband_vlan")}  # left out of the spec's hash when unchanged
KEYS = names(ADDRESSING_FIELDS)  # the table is the one list of keys; a test checks it against AddressingSpec


def parse_addressing(raw: Any, problems: list[Problem], path: str = "addressing") -> AddressingSpec | None:
    """The ``addressing:`` mapping -> :class:`AddressingSpec`; None when absent or bad (problems reported)."""
    if raw is None:
        return None
    n0 = len(problems)
    if not check_section(raw, KEYS, path, problems):
        return None
    out: dict[str, Any] = {}
    nets = {}
    for key in POOLS + NETWORK_POOLS:
        if raw.get(key) is None:
            continue
        v = raw[key]
        try:
            net = ipaddress.IPv4Network(v, strict=True) if isinstance(v, str) else None
        except ValueError as exc:
            net = None
            why = str(exc)
        else:
            why = "not an IPv4 prefix"
        if net is None:
            problems.append(Problem(f"{path}.{key}", f"{key} must be an IPv4 prefix such as {getattr(DEFAULT, key)}, got {show(v)} ({why})", "write the network address and length, host bits zero"))
            continue
        nets[key] = net
        out[key] = str(net)
    for key, choices in (("p2p", P2P_CHOICES), ("gpu_subnet", GPU_SUBNET_CHOICES), ("asn_scheme", ASN_SCHEMES)):
        if raw.get(key) is not None:
            if raw[key] not in choices:
                problems.append(Problem(f"{path}.{key}", f"unknown {key} {show(raw[key])}", f"valid values: {', '.join(choices)}"))
            else:
                out[key] = raw[key]
    if raw.get("asn_pool") is not None:
        rng = _asn_range(raw["asn_pool"])
        if rng is None:
            problems.append(Problem(f"{path}.asn_pool", f"asn_pool must be 'first-last' with 1 <= first <= last <= {MAX_ASN}, got {show(raw['asn_pool'])}", "e.g. 4200000000-4294967294 (4-byte private) or 64512-65534 (2-byte private)"))
        else:
            out["asn_pool"] = f"{rng[0]}-{rng[1]}"
    for key, hi in (("vlan_base", 4094), ("vrf_table_base", 2**31 - 1), ("inband_vlan", 4094)):
        if raw.get(key) is not None:
            v = raw[key]
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= hi:
                problems.append(Problem(f"{path}.{key}", f"{key} must be a whole number from 1 to {hi}, got {show(v)}", f"e.g. {key}: 1000"))
            else:
                out[key] = v
    if len(problems) > n0:
        return None
    spec = AddressingSpec(**out)
    check_static(spec, problems, path)
    return None if len(problems) > n0 else spec


def _asn_range(v: Any) -> tuple[int, int] | None:
    if isinstance(v, str) and v.count("-") == 1 and all(p.strip().isascii() and p.strip().isdigit() and len(p.strip()) <= 10 for p in v.split("-")):  # an ASN has at most 10 digits (no 5,000-digit int())
        a, b = (int(p) for p in v.split("-"))
    else:
        return None
    return (a, b) if 1 <= a <= b <= MAX_ASN else None


def check_static(spec: AddressingSpec, problems: list[Problem], path: str = "addressing") -> None:
    """What needs no fabric: pools in reserved ranges or overlapping one another, ASN pool over reserved ASNs."""
    nets = {k: spec.pool(k) for k in POOLS}
    for key, net in nets.items():
        for bad in RESERVED_V4:
            if net.overlaps(bad):
                problems.append(Problem(f"{path}.{key}", f"pool {key} {net} overlaps the reserved range {bad}", "use private space (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16) or 100.64.0.0/10"))
    keys = list(nets)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if nets[a].overlaps(nets[b]):
                problems.append(Problem(f"{path}.{b}", f"pool {b} {nets[b]} overlaps pool {a} {nets[a]}", "give every pool its own range"))
    first, last = spec.asn_range
    for lo, hi in RESERVED_ASNS:
        if first <= hi and lo <= last:
            problems.append(Problem(f"{path}.asn_pool", f"asn_pool {spec.asn_pool} includes the reserved ASN(s) {lo}-{hi}" if lo != hi else f"asn_pool {spec.asn_pool} includes the reserved ASN {lo}", "use 64512-65534 (2-byte private) or 4200000000-4294967294 (4-byte private)"))


def check_networks(spec: AddressingSpec, problems: list[Problem], path: str = "addressing") -> None:
    """The in-band and OOB pools (a spec with a ``networks:`` section): outside the reserved ranges, apart from each other and the compute pools.

    Checked only when those networks exist, so a spec without them keeps every compute pool it could use before.
    """
    for key in NETWORK_POOLS:
        net = spec.pool(key)
        for bad in RESERVED_V4:
            if net.overlaps(bad):
                problems.append(Problem(f"{path}.{key}", f"pool {key} {net} overlaps the reserved range {bad}", "use private space (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16) or 100.64.0.0/10"))
        for other in POOLS + NETWORK_POOLS[: NETWORK_POOLS.index(key)]:
            if net.overlaps(spec.pool(other)):
                problems.append(Problem(f"{path}.{key}", f"pool {key} {net} overlaps pool {other} {spec.pool(other)}", f"give {key} a range of its own (defaults: inband {DEFAULT.inband}, oob {DEFAULT.oob})"))
