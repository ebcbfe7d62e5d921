"""The spec's optional ``networks:`` section: the storage, in-band management and out-of-band networks.

Without the section topogen designs the compute fabric alone, as before. With it, every
compute node also has storage, in-band and BMC ports (``node_ports``), and
:mod:`topogen.fabric.networks` wires the other three networks port by port. Every
key, its meaning and its default is in the field tables below (also printed by
``topogen schema spec`` and the spec reference); the parser returns a frozen
:class:`NetworksSpec` whose sub-sections always exist (defaults filled in).

Switch SKUs are catalog names; the parser only checks that they are text. The
pipeline resolves them against the catalog (radix at the port speed), because the
catalog is read after the spec.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from topogen.spec.fields import Field, as_int, names
from topogen.util.errors import Problem, check_section, show

STORAGE_DESIGNS = ("separate", "converged", "none")
TARGET_LEAF_RULES = ("per_su", "pair", "by_ports", "node_leaves")
OOB_SPREADS = ("su", "round-robin")
REQUIRED_FROM = ("checkpoint",)
RATIO_RE = re.compile(r"\s*([0-9]{1,4})\s*:\s*([0-9]{1,4})\s*", re.ASCII)
MAX_COUNT = 1 << 20  # any count of ports, servers, PDUs: generous, small enough that no input hangs
MAX_SPEED = 102_400  # Gb/s

ROLE_NAMES = ("node", "leaf-spine", "target", "fabric-manager", "management-server", "nfs", "isl", "core-uplink", "management-port", "oob-uplink", "back-to-back", "node-storage", "spine-super")  # the cable roles of the storage, in-band and OOB networks, in code order (topogen.fabric.networks numbers them; catalog media rules name them)


@dataclass(frozen=True, slots=True)
class NodePorts:
    """One kind of node port: ``count`` ports of ``speed`` Gb/s; ``bonded`` pairs land on two switches."""

    count: int
    speed: int
    bonded: bool = False

    @property
    def gbps(self) -> int:
        return self.count * self.speed


@dataclass(frozen=True, slots=True)
class Required:
    """Storage bandwidth the fabric must carry, GB/s: each node's, and all nodes' together towards the targets.

    ``source`` says where the figure comes from (``per_node_GBps``, ``per_gpu_GBps``,
    ``aggregate_GBps`` or ``checkpoint``); ``from: checkpoint`` is resolved by the
    pipeline with topogen's checkpoint analysis, so both figures start as None there.
    """

    source: str
    per_node_GBps: float | None = None
    per_gpu_GBps: float | None = None
    aggregate_GBps: float | None = None


@dataclass(frozen=True, slots=True)
class StorageSpec:
    design: str = "separate"
    switch: str | None = None
    node_oversubscription: str = "4:3"
    target_oversubscription: str = "1:1"
    target_ports: int | None = None
    target_ports_per_su: int | None = None
    target_speed: int | None = None
    target_leaves: str = "per_su"
    spines: int | None = None
    fabric_managers: int = 0
    management_ports: int = 1
    required: Required | None = None

    def ratio(self, which: str) -> tuple[int, int]:
        d, u = getattr(self, f"{which}_oversubscription").split(":")
        return int(d), int(u)


@dataclass(frozen=True, slots=True)
class InbandSpec:
    switch: str | None = None
    management_ports: int = 2
    nfs_ports: int = 0
    leaf_uplinks: int = 4
    isl: int = 2
    spines: int = 2
    core_uplinks: int = 2
    collapsed_core: bool = False
    management_switch: str | None = None
    management_speed: int | None = None
    management_uplinks: int = 2
    management_uplink_speed: int = 100


@dataclass(frozen=True, slots=True)
class OobSpec:
    switch: str | None = None
    uplinks: int = 2
    uplink_speed: int = 100
    pdus_per_compute_rack: int = 3
    pdus_per_management_rack: int = 2
    min_switches: int = 1
    spread: str = "su"
    management_server_ports: int = 1
    hb_switch_trays: int = 0
    power_shelves: int = 0


@dataclass(frozen=True, slots=True)
class NetworksSpec:
    """The resolved ``networks:`` section; every sub-section present, defaults filled in."""

    inband_ports: NodePorts = NodePorts(2, 100, True)
    storage_ports: NodePorts = NodePorts(2, 400, False)
    bmc_ports: NodePorts = NodePorts(1, 1, False)
    scalable_unit: int | None = None
    management_servers: int = 0
    compute_fabric_managers: int = 0
    storage: StorageSpec = field(default_factory=StorageSpec)
    inband: InbandSpec = field(default_factory=InbandSpec)
    oob: OobSpec = field(default_factory=OobSpec)

    def to_dict(self) -> dict[str, Any]:
        """The input schema (so the dict parses back to this section): summary.json and the spec hash."""
        d = asdict(self)
        out: dict[str, Any] = {
            "node_ports": {"inband": d.pop("inband_ports"), "storage": d.pop("storage_ports"), "bmc": d.pop("bmc_ports")},
            "management_servers": d.pop("management_servers"),
            "compute_fabric_managers": d.pop("compute_fabric_managers"),
        }
        su = d.pop("scalable_unit")
        if su is not None:
            out["scalable_unit"] = su
        st = d["storage"]
        req = st.pop("required")
        if req is not None:
            src = req.pop("source")
            st["required"] = {"from": "checkpoint"} if src == "checkpoint" else {src: req[src]}
        for k, v in NEWER_DEFAULTS.items():  # fields added later leave the spec (and its hash) as before when at their default
            for key, default in v.items():
                if d[k].get(key) == default:
                    del d[k][key]
        out.update({k: {a: b for a, b in v.items() if b is not None} for k, v in d.items()})
        return out


NEWER_DEFAULTS: dict[str, dict[str, Any]] = {"oob": {"min_switches": 1, "spread": "su", "management_server_ports": 1, "hb_switch_trays": 0, "power_shelves": 0}, "inband": {"collapsed_core": False, "management_uplinks": 2, "management_uplink_speed": 100}}

NODE_PORT_FIELDS: tuple[Field, ...] = (
    Field("count", "int", "Ports of this kind on each compute node.", minimum=0, example=2),
    Field("speed", "int", "Gb/s of each port.", minimum=1, example=400),
    Field("bonded", "bool", "The ports are bonded in pairs, each pair on two switches (an MLAG pair).", default=False),
)
NODE_PORTS_FIELDS: tuple[Field, ...] = (
    Field("inband", "section", "In-band management ports of each node (DGX H100: 2 x 100G, bonded).", default_doc="count 2, speed 100, bonded", sub="node_port"),
    Field("storage", "section", "Storage ports of each node (DGX H100: 2 x 400G NDR); count 0 with a converged design: the in-band ports carry storage.", default_doc="count 2, speed 400", sub="node_port"),
    Field("bmc", "section", "BMC (out-of-band) ports of each node.", default_doc="count 1, speed 1", sub="node_port"),
)
REQUIRED_FIELDS: tuple[Field, ...] = (
    Field("per_node_GBps", "number", "GB/s each node must reach storage at (its storage ports must carry it).", minimum=0, example=40),
    Field("per_gpu_GBps", "number", "GB/s per GPU, read or write: each node needs this x its GPUs, and the targets all nodes' together.", minimum=0, example=4),
    Field("aggregate_GBps", "number", "GB/s all nodes together must reach the storage targets at (the bisection towards them).", minimum=0, example=2000),
    Field("from", "choice", "checkpoint: the write bandwidth of topogen's checkpoint analysis of the spec's workload, all nodes writing at once.", choices=REQUIRED_FROM),
)
STORAGE_FIELDS: tuple[Field, ...] = (
    Field("design", "choice", "separate: a storage fabric of its own; converged: storage ports and targets join the in-band fabric; none: no storage network.", default="separate", choices=STORAGE_DESIGNS),
    Field("switch", "text", "Catalog SKU of the storage switches.", default_doc="the catalog's first switch at the node storage port speed", example="MQM9700-NS2F"),
    Field("node_oversubscription", "text", "Down:up ratio of the leaves the nodes' storage ports land on (NVIDIA: 'near 4:3').", default="4:3", example="4:3"),
    Field("target_oversubscription", "text", "Down:up ratio of the leaves the storage targets land on (NVIDIA: 1:1).", default="1:1", example="1:1"),
    Field("target_ports", "int", "Switch ports to the storage targets (appliances, servers; a port may be split at the target).", default_doc="sized from required at target_speed: its aggregate, or per_node_GBps x nodes (every node at once)", minimum=1, example=48),
    Field("target_ports_per_su", "int", "Switch ports to the storage targets for each scalable unit: target_ports is this x the SUs the nodes fill (the last SU counts whole), so the storage grows with the cluster; instead of target_ports.", default_doc="target_ports, or sized from required", minimum=1, example=6),
    Field("target_speed", "int", "Gb/s of each switch port to a target.", default_doc="the node storage port speed", minimum=1, example=400),
    Field("target_leaves", "choice", "per_su: one target leaf per scalable unit, the target ports split evenly (NVIDIA's DGX H100 SuperPOD); pair: two target leaves; by_ports: as many target leaves as the target ports fill; node_leaves: no target leaves, the targets on the node leaves' free ports, split evenly (NVIDIA's DGX B200 SuperPOD).", default="per_su", choices=TARGET_LEAF_RULES),
    Field("spines", "int", "At least this many storage spines.", default_doc="as many as the uplinks fill", minimum=1, example=4),
    Field("fabric_managers", "int", "Fabric-manager appliances (UFM) on the storage fabric, one storage port each, in the last leaves' free slots.", default=0, minimum=0, example=2),
    Field("management_ports", "int", "Storage ports of each management server (on the target leaves; they add no uplinks).", default=1, minimum=0, example=1),
    Field("required", "section", "Storage bandwidth the fabric must deliver; give one key.", default_doc="none: only the ports' own figures are reported", sub="storage_required"),
)
INBAND_FIELDS: tuple[Field, ...] = (
    Field("switch", "text", "Catalog SKU of the in-band leaves and spines.", default_doc="the catalog's first switch at the node in-band port speed", example="SN4600C"),
    Field("management_ports", "int", "In-band ports of each management server.", default=2, minimum=0),
    Field("nfs_ports", "int", "In-band ports of the NFS (home directory) storage.", default=0, minimum=0, example=8),
    Field("leaf_uplinks", "int", "Uplinks of each in-band leaf, striped over the spines.", default=4, minimum=1),
    Field("isl", "int", "Inter-switch links of each leaf pair (MLAG peer links) when node ports are bonded.", default=2, minimum=0),
    Field("spines", "int", "At least this many in-band spines (the in-band network's core pair); 0: a single tier, one leaf pair whose uplinks go to the data-centre core (the Enterprise RAs' converged leaves).", default=2, minimum=0),
    Field("core_uplinks", "int", "Uplinks of each in-band spine to the data-centre core.", default=2, minimum=0),
    Field("management_switch", "text", "Catalog SKU of in-band management leaves of their own for the management servers' in-band ports (NVIDIA's DGX B200 SuperPOD: SN2201 in-band leaves at 1/10G beside the SN5600 pair), uplinked to the in-band spines.", default_doc="none: the servers' ports on the in-band leaves", example="MSN2201-CB2F"),
    Field("management_speed", "int", "Gb/s of the management servers' in-band ports, on the management leaves.", default_doc="the node in-band port speed", minimum=1, example=1),
    Field("management_uplinks", "int", "Uplinks of each in-band management leaf to the in-band spines.", default=2, minimum=1),
    Field("management_uplink_speed", "int", "Gb/s of a management leaf's uplink.", default=100, minimum=1),
    Field("collapsed_core", "bool", "NVIDIA's Enterprise RA collapsed core: the converged leaf pair is the compute fabric's leaf pair (design: leaf-pair, spines: 0) while the switch's cages hold the GPU, inter-switch and north-south ports together, decided by port arithmetic on the switch model; when they do not, a converged pair of its own beside the GPU leaves (the RA's CSL and GSL).", default=False),
)
OOB_FIELDS: tuple[Field, ...] = (
    Field("switch", "text", "Catalog SKU of the OOB access switches.", default_doc="the catalog's first switch at the BMC port speed", example="SN2201"),
    Field("uplinks", "int", "Uplinks of each OOB switch to the in-band leaves (NVIDIA: two).", default=2, minimum=0),
    Field("uplink_speed", "int", "Gb/s of an OOB uplink.", default=100, minimum=1),
    Field("pdus_per_compute_rack", "int", "Managed PDUs in each compute rack.", default=3, minimum=0),
    Field("pdus_per_management_rack", "int", "Managed PDUs in each management rack.", default=2, minimum=0),
    Field("min_switches", "int", "Never fewer OOB access switches than this (NVIDIA's Enterprise RAs: 2, so one switch down leaves every node reachable).", default=1, minimum=1, example=2),
    Field("spread", "choice", "su: a node's OOB ports on its scalable unit's access switches, in order; round-robin: the nodes' OOB ports dealt over every access switch in turn (port j of node x on switch (x x ports + j) mod switches: CX P1 on oob-01, P2 on oob-02, the BMC on oob-03...), so a node with as many OOB ports as there are switches reaches each.", default="su", choices=OOB_SPREADS),
    Field("hb_switch_trays", "int", "Managed HB-domain (NVLink) switch trays in each compute rack of a rack-scale system, an OOB port each (GB200/GB300 NVL72: 9).", default=0, minimum=0, example=9),
    Field("power_shelves", "int", "Managed power shelves in each compute rack of a rack-scale system, an OOB port each.", default=0, minimum=0, example=8),
    Field("management_server_ports", "int", "OOB (BMC and management) ports of each management server, each cabled (NVIDIA's Enterprise RA support servers: 3-4).", default=1, minimum=1, example=4),
)
NETWORKS_FIELDS: tuple[Field, ...] = (
    Field("node_ports", "section", "Each compute node's ports beyond its GPU NICs.", default_doc="DGX H100: 2 x 100G in-band bonded, 2 x 400G storage, 1 x 1G BMC", sub="node_ports"),
    Field("scalable_unit", "int", "Nodes per scalable unit of these networks: storage leaves and OOB switches are built per SU.", default_doc="the spec's scalable_unit; none: nodes grouped by a leaf's ports", minimum=1, example=32),
    Field("management_servers", "int", "Management (head, login) servers: in-band, storage and OOB ports each (oob.management_server_ports).", default=0, minimum=0, example=4),
    Field("compute_fabric_managers", "int", "Fabric-manager appliances (UFM) of the compute fabric: an OOB port each.", default=0, minimum=0, example=2),
    Field("storage", "section", "The storage network.", sub="storage"),
    Field("inband", "section", "The in-band management network: leaf pairs and spines.", sub="inband"),
    Field("oob", "section", "The out-of-band network: access switches per scalable unit, uplinks to in-band.", sub="oob"),
)
SCHEMA_DEFS: dict[str, tuple[Field, ...]] = {
    "networks": NETWORKS_FIELDS,
    "node_ports": NODE_PORTS_FIELDS,
    "node_port": NODE_PORT_FIELDS,
    "storage": STORAGE_FIELDS,
    "storage_required": REQUIRED_FIELDS,
    "inband": INBAND_FIELDS,
    "oob": OOB_FIELDS,
}


class _Reader:
    """Reads one section's fields into a dict, reporting each bad value with its path."""

    def __init__(self, raw: dict, path: str, problems: list[Problem]):
        self.raw, self.path, self.problems = raw, path, problems

    def whole(self, key: str, lo: int, hi: int = MAX_COUNT, hint: str = "") -> int | None:
        v = self.raw.get(key)
        if v is None:
            return None
        n = as_int(v)
        if n is None or n < lo or n > hi:
            self.problems.append(Problem(f"{self.path}.{key}", f"{key} must be a whole number from {lo} to {hi:,}, got {show(v)}", hint or f"e.g. {key}: {max(lo, 2)}"))
            return None
        return n

    def number(self, key: str) -> float | None:
        v = self.raw.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v <= 0 or v > 1e12:
            self.problems.append(Problem(f"{self.path}.{key}", f"{key} must be a positive number, got {show(v)}", f"e.g. {key}: 40"))
            return None
        return float(v)

    def choice(self, key: str, choices: tuple[str, ...]) -> str | None:
        v = self.raw.get(key)
        if v is None:
            return None
        if v not in choices:
            self.problems.append(Problem(f"{self.path}.{key}", f"unknown {key} {show(v)}", f"valid values: {', '.join(choices)}"))
            return None
        return v

    def text(self, key: str) -> str | None:
        v = self.raw.get(key)
        if v is None:
            return None
        if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/+()-]{0,79}", v):
            self.problems.append(Problem(f"{self.path}.{key}", f"{key} must be a catalog SKU, got {show(v)}", "a switch SKU of the spec's catalog (`topogen catalogs`)"))
            return None
        return v

    def ratio(self, key: str) -> str | None:
        v = self.raw.get(key)
        if v is None:
            return None
        m = RATIO_RE.fullmatch(v) if isinstance(v, str) else None
        if m is None or int(m.group(2)) == 0 or int(m.group(1)) < int(m.group(2)):
            self.problems.append(Problem(f"{self.path}.{key}", f"{key} must be a ratio down:up of at least 1:1, got {show(v)}", "e.g. '4:3' or '1:1'"))
            return None
        return f"{int(m.group(1))}:{int(m.group(2))}"

    def flag(self, key: str) -> bool | None:
        v = self.raw.get(key)
        if v is None:
            return None
        if not isinstance(v, bool):
            self.problems.append(Problem(f"{self.path}.{key}", f"{key} must be true or false, got {show(v)}", f"e.g. {key}: true"))
            return None
        return v


def _section(raw: Any, table: tuple[Field, ...], path: str, problems: list[Problem]) -> _Reader | None:
    if raw is None:
        return None
    if not check_section(raw, names(table), path, problems):
        return None
    return _Reader(raw, path, problems)


def _set(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _node_port(raw: Any, path: str, default: NodePorts, problems: list[Problem]) -> NodePorts:
    r = _section(raw, NODE_PORT_FIELDS, path, problems)
    if r is None:
        return default
    out: dict[str, Any] = {"count": default.count, "speed": default.speed, "bonded": default.bonded}
    _set(out, "count", r.whole("count", 0, 64, "ports per node, e.g. count: 2"))
    _set(out, "speed", r.whole("speed", 1, MAX_SPEED, "Gb/s, e.g. speed: 400"))
    _set(out, "bonded", r.flag("bonded"))
    if out["bonded"] and out["count"] % 2:
        problems.append(Problem(f"{path}.count", f"{out['count']} bonded port(s) do not make pairs: a bond puts its ports on two switches", f"use an even count, e.g. {out['count'] + 1}, or bonded: false"))
    return NodePorts(**out)


def _required(raw: Any, path: str, problems: list[Problem]) -> Required | None:
    r = _section(raw, REQUIRED_FIELDS, path, problems)
    if r is None:
        return None
    given = [k for k in names(REQUIRED_FIELDS) if raw.get(k) is not None]
    if len(given) != 1:
        problems.append(Problem(path, f"required gives {len(given)} keys ({', '.join(given) or 'none'}); it takes exactly one", "one of per_node_GBps: 40, per_gpu_GBps: 4, aggregate_GBps: 2000, from: checkpoint"))
        return None
    key = given[0]
    if key == "from":
        return Required("checkpoint") if r.choice("from", REQUIRED_FROM) else None
    v = r.number(key)
    return None if v is None else Required(key, **{key: v})


def parse_networks(raw: Any, problems: list[Problem], path: str = "networks") -> NetworksSpec | None:
    """The ``networks:`` mapping -> :class:`NetworksSpec` (defaults filled in); None when absent or bad."""
    if raw is None:
        return None
    n0 = len(problems)
    r = _section(raw, NETWORKS_FIELDS, path, problems)
    if r is None:
        return None
    d = NetworksSpec()
    top: dict[str, Any] = {}
    _set(top, "scalable_unit", r.whole("scalable_unit", 1))
    _set(top, "management_servers", r.whole("management_servers", 0))
    _set(top, "compute_fabric_managers", r.whole("compute_fabric_managers", 0))
    np_r = _section(raw.get("node_ports"), NODE_PORTS_FIELDS, f"{path}.node_ports", problems)
    ports = raw.get("node_ports") if np_r is not None else {}
    top["inband_ports"] = _node_port(ports.get("inband"), f"{path}.node_ports.inband", d.inband_ports, problems)
    top["storage_ports"] = _node_port(ports.get("storage"), f"{path}.node_ports.storage", d.storage_ports, problems)
    top["bmc_ports"] = _node_port(ports.get("bmc"), f"{path}.node_ports.bmc", d.bmc_ports, problems)

    st: dict[str, Any] = {}
    s = _section(raw.get("storage"), STORAGE_FIELDS, f"{path}.storage", problems)
    if s is not None:
        _set(st, "design", s.choice("design", STORAGE_DESIGNS))
        _set(st, "switch", s.text("switch"))
        _set(st, "node_oversubscription", s.ratio("node_oversubscription"))
        _set(st, "target_oversubscription", s.ratio("target_oversubscription"))
        _set(st, "target_ports", s.whole("target_ports", 1))
        _set(st, "target_ports_per_su", s.whole("target_ports_per_su", 1))
        _set(st, "target_speed", s.whole("target_speed", 1, MAX_SPEED))
        _set(st, "target_leaves", s.choice("target_leaves", TARGET_LEAF_RULES))
        _set(st, "spines", s.whole("spines", 1, 4096))
        _set(st, "fabric_managers", s.whole("fabric_managers", 0))
        _set(st, "management_ports", s.whole("management_ports", 0, 64))
        _set(st, "required", _required(raw["storage"].get("required"), f"{path}.storage.required", problems))
    ib: dict[str, Any] = {}
    i = _section(raw.get("inband"), INBAND_FIELDS, f"{path}.inband", problems)
    if i is not None:
        _set(ib, "switch", i.text("switch"))
        for key, lo in (("management_ports", 0), ("nfs_ports", 0), ("leaf_uplinks", 1), ("isl", 0), ("spines", 0), ("core_uplinks", 0)):
            _set(ib, key, i.whole(key, lo, 4096))
        _set(ib, "collapsed_core", i.flag("collapsed_core"))
        _set(ib, "management_switch", i.text("management_switch"))
        _set(ib, "management_speed", i.whole("management_speed", 1, MAX_SPEED))
        _set(ib, "management_uplinks", i.whole("management_uplinks", 1, 64))
        _set(ib, "management_uplink_speed", i.whole("management_uplink_speed", 1, MAX_SPEED))
    ob: dict[str, Any] = {}
    o = _section(raw.get("oob"), OOB_FIELDS, f"{path}.oob", problems)
    if o is not None:
        _set(ob, "switch", o.text("switch"))
        _set(ob, "uplinks", o.whole("uplinks", 0, 64))
        _set(ob, "uplink_speed", o.whole("uplink_speed", 1, MAX_SPEED))
        _set(ob, "pdus_per_compute_rack", o.whole("pdus_per_compute_rack", 0, 64))
        _set(ob, "pdus_per_management_rack", o.whole("pdus_per_management_rack", 0, 64))
        _set(ob, "min_switches", o.whole("min_switches", 1, 4096))
        _set(ob, "spread", o.choice("spread", OOB_SPREADS))
        _set(ob, "management_server_ports", o.whole("management_server_ports", 1, 64))
        _set(ob, "hb_switch_trays", o.whole("hb_switch_trays", 0, 64))
        _set(ob, "power_shelves", o.whole("power_shelves", 0, 64))
    if len(problems) > n0:
        return None
    spec = NetworksSpec(storage=StorageSpec(**st), inband=InbandSpec(**ib), oob=OobSpec(**ob), **top)
    _consistent(spec, path, problems)
    return None if len(problems) > n0 else spec


def _consistent(n: NetworksSpec, path: str, problems: list[Problem]) -> None:
    """Cross-field rules of the section: what a storage design needs, what a bond needs."""
    st = n.storage
    if st.design == "separate" and n.storage_ports.count == 0:
        problems.append(Problem(f"{path}.node_ports.storage.count", "a separate storage fabric, but the nodes have 0 storage ports", "give node_ports.storage.count (DGX H100: 2), storage.design: converged (the in-band ports carry storage), or none"))
    if st.design == "converged" and n.storage_ports.count and n.storage_ports.speed != n.inband_ports.speed:
        problems.append(Problem(f"{path}.node_ports.storage.speed", f"a converged storage and in-band fabric runs one port speed, but storage ports are {n.storage_ports.speed}G and in-band ports {n.inband_ports.speed}G", f"set both speeds alike (e.g. {n.inband_ports.speed}), or storage.design: separate"))
    if st.target_ports is not None and st.target_ports_per_su is not None:
        problems.append(Problem(f"{path}.storage.target_ports_per_su", f"both target_ports ({st.target_ports}) and target_ports_per_su ({st.target_ports_per_su}) are given", "give one: target_ports for a fixed count, target_ports_per_su to grow with the scalable units"))
    if n.inband_ports.count == 0:
        problems.append(Problem(f"{path}.node_ports.inband.count", "the nodes have no in-band ports, but the in-band network carries the OOB uplinks and management", "give node_ports.inband.count (DGX H100: 2, bonded)"))
    if n.inband.management_switch is None and n.inband.management_speed is not None:
        problems.append(Problem(f"{path}.inband.management_speed", "management_speed is the speed of the management leaves' ports, but no inband.management_switch is given", "give inband.management_switch (e.g. MSN2201-CB2F), or drop management_speed"))
    if n.inband.management_switch is not None and n.inband.spines == 0:
        problems.append(Problem(f"{path}.inband.management_switch", "in-band management leaves uplink to the in-band spines, but inband.spines is 0", "set inband.spines (e.g. 2), or drop management_switch (the servers' ports on the leaf pair)"))
    if n.inband.collapsed_core and n.inband.spines:
        problems.append(Problem(f"{path}.inband.collapsed_core", f"a collapsed core is one switch pair, but inband.spines is {n.inband.spines}", "set inband.spines: 0 (the pair's uplinks go to the data-centre core), or collapsed_core: false"))
    if n.inband.collapsed_core and not n.inband_ports.bonded:
        problems.append(Problem(f"{path}.inband.collapsed_core", "a collapsed core is a leaf pair: the nodes' in-band ports must be bonded over it", "set node_ports.inband.bonded: true, or collapsed_core: false"))
    if n.inband_ports.bonded and n.inband.management_ports % 2:
        problems.append(Problem(f"{path}.inband.management_ports", f"{n.inband.management_ports} in-band port(s) per management server do not make bonded pairs", "use an even count, like the nodes' bonded ports"))
