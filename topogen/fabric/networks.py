"""Generators of the cluster's other networks: storage, in-band management and out-of-band (OOB).

:func:`generate` takes a :class:`NetworkPlan` (the spec's ``networks:`` section with the
switch radixes the catalog gave) and returns :class:`Networks`: every switch, and every
cable as numpy columns, so 16,384 nodes cost a few arrays. Like the compute fabric's
generators it is pure and deterministic; :func:`closed_form` gives the same counts from
arithmetic alone, and the tests hold the two equal over grids of node counts and radixes.

Design rules (NVIDIA's DGX SuperPOD reference architectures describe the networks; the
rules below are topogen's reading of them):

Storage (``design: separate``), a two-tier Clos.
    * Node leaves: one per (scalable unit, node storage port); an SU larger than a leaf's
      down ports takes several. Without SUs, nodes are grouped by a leaf's down ports.
      With ``node_groups`` (the layout's, in a large hall: SUs, split by row where one
      wraps between far rows), one per (group, port) likewise, named after the group's SU.
      Each leaf's uplinks are ``ceil(down x u / d)`` at the node ratio ``d:u`` (4:3: 32
      nodes, 24 uplinks). Storage fabric managers take the last leaves' free slots.
    * Target leaves: ``per_su`` gives one per SU with the target ports split evenly,
      ``pair`` two; more when the ports do not fit. Uplinks at the target ratio (1:1).
      Management servers' storage ports land here and add no uplinks, and so do the
      fabric managers that find no free slot on the last SU's node leaves.
    * Spines: ``max(storage.spines, ceil(uplinks / radix))``; uplink ``c`` of the
      fabric (leaves in order) goes to spine ``c mod S``: balanced striping, every
      node leaf on every spine (a target leaf with fewer uplinks on some). A spine count beyond the smallest leaf's uplinks needs a
      third tier, which topogen does not build: an input error.

In-band, leaf pairs and spines.
    * Port units: a bonded pair of ports (both leaves of a pair, same port number) or,
      unbonded, one port. Units in order: nodes, management servers, NFS, converged
      storage ports and targets, OOB uplinks. ``down = radix - leaf_uplinks - isl``
      units per leaf; ``2 x ceil(units / down)`` leaves when bonded.
    * With ``node_groups`` (leaves standing with their nodes), each group's node units
      (in-band, and converged storage, ports of its nodes) take ``ceil(group units / down)``
      leaves (pairs) of their own, split evenly, node by node (``inband_blocks`` joins
      consecutive small groups on one pair); the other units follow on leaves of their
      own. No leaf serves part of a group and more (:func:`node_leaves` lists them).
    * ``isl`` links join the two leaves of each pair; leaf uplinks stripe over
      ``max(inband.spines, ceil(leaves x leaf_uplinks / (radix - core_uplinks)))``
      spines; each spine has ``core_uplinks`` to the data-centre core. ``spines: 0`` is a
      single tier (the Enterprise RAs' converged leaf pair): the leaves' uplinks go to the
      core, and more than one pair is an input error.
    * Collapsed core (``inband.collapsed_core``, NVIDIA's Enterprise RAs): while a compute
      leaf pair's cages hold its GPU and inter-switch ports and the converged units together
      (port arithmetic on the one switch model, cages split at each speed: SN5600 2 x 400G
      or 4 x 200G), the in-band leaves are that pair (``NetworkPlan.collapsed``): no box of
      their own, their ports on the cages after the compute ports' (``inband_reserved``),
      named ``p<cage>s<sub>``, no ISLs of their own (the compute pair's join them). Else a
      converged pair of its own (:func:`topogen.bom.networks.plan_for` decides).

OOB, access switches per scalable unit.
    * Per SU (per node group with ``node_groups``): the BMCs of its nodes and the PDUs
      of its compute racks, on ``ceil(ports / access ports)`` switches. Every other managed device (every
      switch of every network, management servers, fabric managers, management-rack
      PDUs) takes the spare ports in order, then switches of its own. With ``oob_home``
      (:class:`OobHomes`, the layout's in a large hall) each such device takes its home
      group's switches instead, sized to hold it, or (home -1) switches of its own.
    * Each OOB switch has ``oob.uplinks`` to the in-band leaves (one pair's two leaves
      when bonded); fabric managers of a fabric are HA pairs joined back to back.
    * Management racks: the compute layout's network racks (else ``ceil(compute switches /
      switches_per_rack)``), plus ``ceil((storage + in-band switches) / switches_per_rack)``
      (less the leaves that stand with their nodes in a large hall: ``leaves_with_su``),
      plus ``ceil(servers / switches_per_rack)`` for the management servers and fabric
      managers (:mod:`topogen.layout.networks` places them).

Names: see :data:`KIND_NAMES` and :meth:`Networks.device_name`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import ceil
from typing import Any

import numpy as np

from topogen.fabric.naming import NodeNames, width
from topogen.spec.naming import check_limits, first_duplicate
from topogen.spec.networks import ROLE_NAMES, NetworksSpec
from topogen.util.errors import InputError, Problem, show

NETWORK_NAMES = ("storage", "inband", "oob")
STORAGE, INBAND, OOB = range(3)
# kinds of device at a cable end
KIND_NAMES = ("node", "switch", "mgmt", "ufm", "targets", "nfs", "pdu", "dc-core", "compute-switch", "rack-device")
NODE, SWITCH, MGMT, UFM, TARGETS, NFS, PDU, CORE, FABRIC, RACKDEV = range(len(KIND_NAMES))  # rack-device: a rack-scale system's NVLink switch tray or power shelf
# what a cable does (its role in its network)
R_NODE, R_UP, R_TARGET, R_UFM, R_MGMT, R_NFS, R_ISL, R_CORE, R_MPORT, R_OOBUP, R_B2B, R_NSTOR, R_SUPER = range(len(ROLE_NAMES))
CABLE_COLUMNS = ("net", "role", "a_kind", "a_idx", "a_port", "z_kind", "z_idx", "z_port", "speed")
_DT = {"net": np.int8, "role": np.int8, "a_kind": np.int8, "a_idx": np.int64, "a_port": np.int32, "z_kind": np.int8, "z_idx": np.int64, "z_port": np.int32, "speed": np.int32}


@dataclass(frozen=True, slots=True)
class OobHomes:
    """The OOB group whose access switches take each shared device's management port (-1: the management row's).

    Only devices outside the management row have a home of their own: the compute
    switches, the storage node leaves and in-band node leaves standing with their nodes (in
    switch order; one per leaf, past the given ones -1), the PDUs of the compute layout's
    switch racks. Every other shared device (target leaves, spines, the other in-band
    leaves, servers, the added management racks' PDUs) stands in the management row: -1.
    """

    fabric: tuple[int, ...] = ()
    storage_leaves: tuple[int, ...] = ()
    inband_leaves: tuple[int, ...] = ()
    switch_rack_pdus: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class NetworkPlan:
    """Everything the generators need: the cluster's shape, the section, the catalog's radixes.

    ``nodes_per_rack`` comes from the layout; ``compute_switches`` (and their names) from
    the compute fabric of one architecture; ``*_radix`` from the catalog's SKUs at the
    port speeds; ``target_ports`` resolved (given, or sized from the required bandwidth).
    """

    nodes: int
    gpus: int
    hb_domain: int
    gpus_per_node: int
    su_nodes: int  # nodes per scalable unit (0: none)
    nodes_per_rack: int
    switches_per_rack: int
    compute_switches: int
    net: NetworksSpec
    storage_radix: int = 0
    inband_radix: int = 0
    oob_radix: int = 0
    target_ports: int = 0
    skus: tuple[str, str, str] = ("", "", "")  # storage, in-band, OOB switch SKUs
    compute_switch_racks: int = -1  # racks the compute layout gives the compute switches (-1: ceil(compute_switches / switches_per_rack))
    oob_home: OobHomes | None = None  # the OOB group of each shared device (the layout's, in a large hall); None: the spare ports in order
    leaves_with_su: int = 0  # storage node leaves and in-band leaves standing with their nodes (not in the management racks); the layout decides
    inband_blocks: tuple[int, ...] = ()  # node groups on each block of in-band leaves, in order (several small SUs on one pair); () one group each
    target_ports_from: str = ""  # how target_ports was sized when the spec did not give it (a note), "" when given
    collapsed: tuple[int, ...] = ()  # compute switches (a leaf pair) the in-band leaves are (inband.collapsed_core, when the ports fit); () a pair of their own
    collapsed_names: tuple[str, ...] = ()  # their names in the compute fabric
    inband_reserved: int = 0  # ports of each collapsed leaf, at the in-band speed, that the compute fabric's cages take (its lowest)
    inband_per_cage: int = 1  # in-band ports per cage of a collapsed leaf (named p<cage>s<sub>)
    naming: Any = None  # the spec's naming: section (topogen.spec.naming.NamingSpec; None: topogen's names)
    mgmt_radix: int = 0  # access ports of an in-band management leaf (inband.management_switch at management_speed); 0: no management leaves
    mgmt_sku: str = ""
    collapsed_note: str = ""  # why a collapsed core split into a converged pair of its own ("" when it did not)
    oob_uplink_ports: int = 0  # the OOB switch's uplink ports beside its access ports (the catalog's uplink_ports; 0: not stated, oob.uplinks assumed)
    node_groups: tuple[int, ...] = ()  # nodes of each group (in node order) that has storage node leaves, in-band leaves and OOB switches of its own: an SU, or an SU's nodes in one row; () the SUs for storage and OOB, and in-band in node order. The layout sets it when the leaves stand with their nodes


@dataclass(frozen=True, slots=True)
class NetSwitch:
    """One switch of a network: ``role`` leaf, target-leaf, spine or access; ``pair`` its MLAG pair (-1: none)."""

    name: str
    network: int
    role: str
    radix: int
    speed: int
    sku: str
    group: int = -1  # the scalable unit (or node group) it serves; -1 for shared switches
    pair: int = -1
    compute: int = -1  # the compute switch it is (a collapsed core's leaf: one box, counted and placed with the compute fabric); -1 its own box


@dataclass(slots=True)
class CableTable:
    """Cables as columns (see :data:`CABLE_COLUMNS`): ``a`` the lower or managed end, ``z`` the switch end."""

    net: np.ndarray
    role: np.ndarray
    a_kind: np.ndarray
    a_idx: np.ndarray
    a_port: np.ndarray
    z_kind: np.ndarray
    z_idx: np.ndarray
    z_port: np.ndarray
    speed: np.ndarray

    def __len__(self) -> int:
        return int(self.net.shape[0])

    def take(self, index) -> "CableTable":
        return CableTable(**{c: getattr(self, c)[index] for c in CABLE_COLUMNS})


class _Cables:
    """Accumulates cable columns as numpy chunks (scalars broadcast)."""

    def __init__(self) -> None:
        self.parts: list[dict[str, np.ndarray]] = []

    def add(self, n: int, **cols) -> None:
        if n:
            part = {}
            for c in CABLE_COLUMNS:
                v = np.asarray(cols[c], _DT[c])
                part[c] = np.full(n, v, _DT[c]) if v.ndim == 0 else v
            self.parts.append(part)

    def table(self) -> CableTable:
        if not self.parts:
            return CableTable(**{c: np.zeros(0, _DT[c]) for c in CABLE_COLUMNS})
        return CableTable(**{c: np.concatenate([p[c] for p in self.parts]) for c in CABLE_COLUMNS})


@dataclass(slots=True)
class Networks:
    """The generated storage, in-band and OOB networks of one architecture (see the module docstring).

    Attributes:
        plan: the inputs.
        switches: every switch; cable ends of kind ``switch`` index this list.
        cables: every cable (:class:`CableTable`).
        endpoints: devices other than switches and nodes, by kind: counts (``mgmt``,
            ``ufm``, ``pdu``...); ``targets``, ``nfs`` and ``dc-core`` are one device
            each whose ports are numbered.
        racks: ``(compute racks, management racks)``.
        notes: plain-language statements about the choices made.
        assumptions: what was assumed where the spec or the catalog says nothing
            (target ports sized from a bandwidth, OOB uplink ports not stated); the
            build prints them and ``summary.json`` lists them in the networks' notes.
    """

    plan: NetworkPlan
    switches: list[NetSwitch]
    cables: CableTable
    endpoints: dict[str, int]
    racks: tuple[int, int]
    notes: list[str] = field(default_factory=list)
    compute_names: list[str] | None = None  # the compute fabric's switch names (kind ``compute-switch``), when known
    assumptions: list[str] = field(default_factory=list)  # what was assumed where the spec or catalog is silent (the build prints them)

    def switches_of(self, network: int) -> list[NetSwitch]:
        return [s for s in self.switches if s.network == network]

    def cables_of(self, network: int) -> CableTable:
        return self.cables.take(self.cables.net == network)

    def counts(self) -> dict[str, dict[str, dict[str, int]]]:
        """Switches by role and cables by role of each network, counted from the wiring."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for k, name in enumerate(NETWORK_NAMES):
            sw: dict[str, int] = {}
            for s in self.switches_of(k):
                role = s.role if s.compute < 0 else "compute-leaf"  # a collapsed core's leaf: the compute fabric's box
                sw[role] = sw.get(role, 0) + 1
            roles = np.bincount(self.cables.role[self.cables.net == k], minlength=len(ROLE_NAMES))
            out[name] = {"switches": sw, "cables": {ROLE_NAMES[r]: int(c) for r, c in enumerate(roles) if c}}
        return out

    # --- names ----------------------------------------------------------------------

    def device_name(self, kind: int, idx: int, compute_names: list[str] | None = None) -> str:
        """Name of the device ``(kind, idx)``: nodes as the compute fabric names them, switches theirs."""
        p = self.plan
        if kind == NODE:
            return NodeNames(p.gpus, p.hb_domain, p.gpus_per_node, p.naming, p.su_nodes * p.gpus_per_node // p.hb_domain).name(idx)
        if kind == SWITCH:
            return self.switches[idx].name
        if kind == MGMT:
            return f"mgmt-{idx:0{max(2, width(self.endpoints['mgmt']))}d}"
        if kind == UFM:
            nc = p.net.compute_fabric_managers
            return f"ufm-compute-{idx}" if idx < nc else f"ufm-storage-{idx - nc}"
        if kind == PDU:
            return self._pdu_name(idx)
        if kind == RACKDEV:
            return self._rack_device_name(idx)
        if kind == FABRIC:
            return compute_names[idx] if compute_names else f"compute-switch-{idx}"
        return KIND_NAMES[kind]  # targets, nfs, dc-core: one device each

    def names(self, kind: int, compute_names: list[str] | None = None) -> list[str]:
        """Every device name of ``kind``, by index (the one-device kinds: one name)."""
        p = self.plan
        if kind == NODE:
            return NodeNames(p.gpus, p.hb_domain, p.gpus_per_node, p.naming, p.su_nodes * p.gpus_per_node // p.hb_domain).names()
        if kind == SWITCH:
            return [s.name for s in self.switches]
        if kind == FABRIC:
            return list(compute_names) if compute_names is not None else [f"compute-switch-{i}" for i in range(p.compute_switches)]
        n = {MGMT: self.endpoints["mgmt"], UFM: self.endpoints["ufm"], PDU: self.endpoints["pdu"], RACKDEV: self.endpoints["rack-device"]}.get(kind, 1)
        return [self.device_name(kind, i) for i in range(n)]

    def _rack_device_name(self, idx: int) -> str:
        """``nvsw-c<rack>-<i>`` (an NVLink switch tray) or ``pshelf-c<rack>-<i>`` (a power shelf) of compute rack ``rack``."""
        o = self.plan.net.oob
        r, i = divmod(idx, o.hb_switch_trays + o.power_shelves)
        w = max(2, width(self.racks[0]))
        return f"nvsw-c{r:0{w}d}-{i}" if i < o.hb_switch_trays else f"pshelf-c{r:0{w}d}-{i - o.hb_switch_trays}"

    def _pdu_name(self, idx: int) -> str:
        """``pdu-c<rack>-<i>`` of a compute rack, ``pdu-m<rack>-<i>`` of a management rack (or the spec's ``naming.pdu``, ``naming.management_pdu``)."""
        cr, mr = self.racks
        pc, pm = self.plan.net.oob.pdus_per_compute_rack, self.plan.net.oob.pdus_per_management_rack
        nm = self.plan.naming
        if idx < cr * pc:
            r, i = divmod(idx, pc)
            t = nm.other("pdu") if nm is not None else None
            return t.format(rack=r, index=i) if t is not None else f"pdu-c{r:0{max(2, width(cr))}d}-{i}"
        r, i = divmod(idx - cr * pc, pm)
        t = nm.other("management_pdu") if nm is not None else None
        return t.format(rack=r, index=i) if t is not None else f"pdu-m{r:0{max(2, width(mr))}d}-{i}"

    def oob_ports(self, kind: int) -> int:
        """OOB (BMC) ports of each device of ``kind`` (nodes: ``node_ports.bmc.count``; management servers: ``oob.management_server_ports``)."""
        return self.plan.net.bmc_ports.count if kind == NODE else self.plan.net.oob.management_server_ports if kind == MGMT else 1

    def port_name(self, kind: int, port: int, network: int, role: int, idx: int = -1) -> str:
        """Port name at a device of ``kind``: switch ports ``p<n>``; node ports ``stor<i>``, ``inb<i>``, ``bmc``; ``mgmt0`` elsewhere.

        A device with several OOB ports numbers them ``bmc0``, ``bmc1``... (one interface
        and one address each); with one, it is ``bmc``. The in-band ports of a collapsed
        core's leaf (``idx``, a switch index) are its split cages ``p<cage>s<sub>`` (the
        compute fabric names the same box's ports ``p<n>``).
        """
        if kind == SWITCH and role == R_MPORT and port == 0:  # a managed switch's own management port (its ports count from 1)
            return "mgmt0"
        if kind == SWITCH and idx >= 0 and self.switches[idx].compute >= 0:  # a collapsed core's split cage: p<cage>s<sub>, apart from the compute ports' names
            cage, sub = divmod(port - 1, self.plan.inband_per_cage)
            return f"p{cage + 1}s{sub}"
        if kind in (SWITCH, TARGETS, NFS, CORE):
            return f"p{port}"
        if kind in (NODE, MGMT):
            if role == R_NSTOR or network == STORAGE:
                return f"stor{port}"
            if network == OOB:
                return f"bmc{port}" if self.oob_ports(kind) > 1 else "bmc"
            return f"inb{port}"
        if role == R_B2B:
            return "ha0"
        return "mgmt0" if network == OOB else f"p{port}"


# --- the rules, as arithmetic (shared by the generators and the closed form) ------------


def max_down(radix: int, d: int, u: int) -> int:
    """Most down ports a leaf of ``radix`` ports can take with ``ceil(down x u / d)`` uplinks."""
    down = radix * d // (d + u)
    while down > 0 and down + ceil(down * u / d) > radix:
        down -= 1
    return down


def _groups(nodes: int, su: int, cap: int) -> list[int]:
    """Nodes of each group (SU, or a leaf's worth when there are no SUs), in order."""
    size = su or cap
    return [min(size, nodes - g) for g in range(0, nodes, size)]


def node_groups(p: NetworkPlan, size: int) -> list[int]:
    """Nodes of each group, in order: the plan's ``node_groups``, else the SUs (``size``-node groups without SUs)."""
    if p.node_groups:
        if sum(p.node_groups) != p.nodes or min(p.node_groups) < 1:
            raise ValueError(f"node_groups {p.node_groups[:4]}... do not split the {p.nodes} nodes")
        return list(p.node_groups)
    return _groups(p.nodes, p.su_nodes, size)


def group_units(p: NetworkPlan, groups: list[int]) -> list[int]:
    """The scalable unit of each group (its first node's); the group's index without SUs."""
    if not p.su_nodes:
        return list(range(len(groups)))
    first = np.concatenate([[0], np.cumsum(groups)[:-1]]).astype(np.int64)
    return (first // p.su_nodes).tolist()


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


@dataclass(frozen=True, slots=True)
class Upper:
    """The switches above the leaves: one spine tier, or pods of spines under super-spines.

    Two tiers: one pod spanning every leaf, ``spines`` switches, uplink ``c`` of the
    fabric on spine ``c mod S``. Three tiers (the spines a two-tier fabric needs exceed a
    node leaf's uplinks): pods of ``radix / 2`` leaves, each with as many spines as its
    leaves have uplinks (leaf uplink ``j`` on pod spine ``j``); each pod spine has as many
    uplinks as down links (1:1), and the pod spines at position ``j`` form plane ``j``,
    striped over ``planes[j]`` super-spines the same way (a whole pod's spines reach every
    super-spine of their plane; the last, partial pod's reach some, and so do those of a pod
    that also holds target leaves, past the node leaves).
    """

    spines: int
    pods: tuple[tuple[int, int, int], ...] = ()  # (first leaf, leaves, spines) per pod; () with two tiers
    planes: tuple[int, ...] = ()  # super-spines of each plane

    @property
    def supers(self) -> int:
        return sum(self.planes)

    def spine_ups(self, up: tuple[int, ...]) -> list[int]:
        """Uplinks of each spine (pod-major), three tiers: its down links (1:1)."""
        out = []
        for f, n, sp in self.pods:
            out += [sum(1 for u in up[f : f + n] if u > j) for j in range(sp)]
        return out


def upper_shape(up: list[int], radix: int, min_spines: int, reserve: int, reach_leaves: int, where: str, what: str) -> Upper:
    """The tiers above leaves with uplinks ``up``; ``reserve`` ports of every top switch go elsewhere (core uplinks).

    ``reach_leaves``: the first leaves that must reach every spine (the node leaves); an
    InputError naming ``where`` when even three tiers do not fit.
    """
    if not up:
        return Upper(0)
    room = radix - reserve
    spines = max(min_spines, ceil(sum(up) / room))
    reach = min(up[:reach_leaves], default=spines)
    if spines <= reach:
        return Upper(spines)
    per = max(2, (radix // 2) - (radix // 2) % 2)  # leaves per pod, even: an MLAG pair stays in one pod
    pods = tuple((f, min(per, len(up) - f), max(up[f : f + per])) for f in range(0, len(up), per))
    if any(sp > radix // 2 for _, _, sp in pods):
        raise InputError([Problem(where, f"a leaf's uplinks exceed the {radix // 2} a pod spine's down ports pair with", "use a larger switch or fewer uplinks per leaf")])
    shape = Upper(sum(sp for _, _, sp in pods), pods, ())
    ups = shape.spine_ups(tuple(up))
    planes, at = [], 0
    members: dict[int, list[int]] = {}
    whole: dict[int, list[int]] = {}  # spines of whole pods: they reach every super-spine of their plane (a partial pod's reach some)
    full: dict[int, list[int]] = {}  # the same, of whole pods of reach_leaves alone (a pod that also holds target leaves is partial for them)
    for f, n, sp in pods:
        for j in range(sp):
            members.setdefault(j, []).append(ups[at])
            if n == per:
                whole.setdefault(j, []).append(ups[at])
                if f + n <= reach_leaves:
                    full.setdefault(j, []).append(ups[at])
            at += 1
    for j in sorted(members):
        sj = max(1, ceil(sum(members[j]) / room))
        if sj > min(full.get(j) or whole.get(j) or members[j]):
            raise InputError([Problem(where, f"{what} would need a fourth tier of {radix}-port switches", "use a switch with more ports (a director)")])
        planes.append(sj)
    return Upper(shape.spines, pods, tuple(planes))


@dataclass(frozen=True, slots=True)
class StorageShape:
    """The storage fabric's leaves and spines before wiring: what the closed form and the generator share."""

    leaf_down: tuple[int, ...]  # node leaves, in order: (group, port, chunk)
    leaf_group: tuple[int, ...]
    leaf_port: tuple[int, ...]
    leaf_first: tuple[int, ...]  # first node of each node leaf
    leaf_nodes: tuple[int, ...]
    leaf_ufm: tuple[int, ...]  # storage fabric managers on each node leaf
    target_down: tuple[int, ...]  # target ports of each target leaf
    target_mgmt: tuple[int, ...]  # management-server ports on each target leaf
    up: tuple[int, ...]  # uplinks of every leaf: node leaves then target leaves
    upper: Upper
    target_ufm: tuple[int, ...] = ()  # fabric managers on each target leaf (the last SU's node leaves were full)
    leaf_targets: tuple[int, ...] = ()  # target ports on each node leaf (target_leaves: node_leaves); () none
    leaf_mgmt: tuple[int, ...] = ()  # management-server storage ports on each node leaf (node_leaves); () none


def storage_shape(p: NetworkPlan) -> StorageShape:
    """Leaves and spines of a separate storage fabric (the module docstring's rules); InputError when it does not fit."""
    st, ports = p.net.storage, p.net.storage_ports.count
    r = p.storage_radix
    d, u = st.ratio("node")
    cap = max_down(r, d, u)
    where = "networks.storage.switch"
    if cap < 1:
        raise InputError([Problem(where, f"a {r}-port storage switch cannot take a node at {st.node_oversubscription}", "use a larger switch or a lower node_oversubscription")])
    groups = node_groups(p, cap)
    unit_of = group_units(p, groups)
    down, grp, prt, first, cnt, of_last = [], [], [], [], [], []
    start = 0
    for g, n in enumerate(groups):
        chunks = _split(n, ceil(n / cap))
        for q in range(ports):
            f = start
            for c in chunks:
                down.append(c), grp.append(unit_of[g]), prt.append(q), first.append(f), cnt.append(c), of_last.append(g == len(groups) - 1)
                f += c
        start += n
    ufm = [0] * len(down)
    last = [i for i, x in enumerate(of_last) if x]
    spill = 0  # fabric managers that find no free slot on the last SU's node leaves go to the target leaves
    for j in range(st.fabric_managers):
        i = last[j % len(last)] if last else 0
        if not last or down[i] + 1 > cap:
            spill += 1
            continue
        down[i] += 1
        ufm[i] += 1
    td, tu = st.ratio("target")
    tcap = max_down(r, td, tu)
    if st.target_leaves == "node_leaves":
        return _targets_on_node_leaves(p, down, grp, prt, first, cnt, ufm, spill, cap)
    rule = {"per_su": len(_groups(p.nodes, p.su_nodes, cap)), "pair": 2, "by_ports": 1}[st.target_leaves]
    nt = min(max(rule, ceil(p.target_ports / tcap)), p.target_ports)  # no target leaf without a target port
    mports = p.net.management_servers * st.management_ports
    if st.target_leaves == "by_ports":  # sized by the ports they take: one more leaf while the servers' and managers' ports do not fit
        while 0 < nt < p.target_ports and any(t + m + f + ceil(t * tu / td) > r for t, m, f in zip(_split(p.target_ports, nt), _split(mports, nt), _split(spill, nt))):
            nt += 1
    tdown = _split(p.target_ports, nt) if nt else []
    tm = _split(mports, nt) if nt else []
    tf = _split(spill, nt) if nt else []
    if spill and not nt:
        raise InputError([Problem("networks.storage.fabric_managers", f"{spill} storage fabric manager(s) find no free leaf port: the last scalable unit's storage leaves are full ({cap} down ports at {st.node_oversubscription}) and there is no target leaf", "leave a node slot free in the last SU (as NVIDIA's 127-node SuperPOD does), give target_ports, or fewer fabric_managers")])
    for k in range(nt):
        if tdown[k] + tm[k] + tf[k] + ceil(tdown[k] * tu / td) > r:
            raise InputError([Problem("networks.storage.management_ports", f"the target leaves have no room for {mports} management-server and {spill} fabric-manager storage port(s)", "fewer management_ports, or more target_ports spread over more leaves")])
    up = [ceil(x * u / d) for x in down] + [ceil(x * tu / td) for x in tdown]
    if mports and not nt:
        raise InputError([Problem("networks.storage.target_ports", "management servers have storage ports but the storage fabric has no target leaves", "give target_ports (or a required bandwidth to size them), or storage.management_ports: 0")])
    # every node leaf reaches every spine of its pod; a target leaf reaches some, and through them every node leaf
    upper = upper_shape(up, r, st.spines or 1, 0, len(down), where, f"{p.nodes:,} nodes x {ports} storage port(s)")
    return StorageShape(tuple(down), tuple(grp), tuple(prt), tuple(first), tuple(cnt), tuple(ufm), tuple(tdown), tuple(tm), tuple(up), upper, tuple(tf))


def _targets_on_node_leaves(p: NetworkPlan, down: list[int], grp: list[int], prt: list[int], first: list[int], cnt: list[int], ufm: list[int], spill: int, cap: int) -> StorageShape:
    """``target_leaves: node_leaves``: the target ports (and the management servers' storage ports) split evenly over the node leaves.

    Each node leaf keeps its node ports' uplinks at the node ratio and adds its targets'
    at the target ratio; the management servers' ports add none (as on target leaves).
    """
    st, r = p.net.storage, p.storage_radix
    d, u = st.ratio("node")
    td, tu = st.ratio("target")
    nl = len(down)
    if spill:
        raise InputError([Problem("networks.storage.fabric_managers", f"{spill} storage fabric manager(s) find no free leaf port and there are no target leaves (target_leaves: node_leaves)", "fewer fabric_managers, or leave a node slot free in the last SU")])
    tl = _split(p.target_ports, nl) if nl else []
    ml = _split(p.net.management_servers * st.management_ports, nl) if nl else []
    up = [ceil(x * u / d) + ceil(t * tu / td) for x, t in zip(down, tl)]
    for i in range(nl):
        if down[i] + tl[i] + ml[i] + up[i] > r:
            key = "target_ports_per_su" if st.target_ports_per_su else "target_ports"
            raise InputError([Problem(f"networks.storage.{key}", f"{p.target_ports} target port(s) over {nl} node leaves: a {r}-port leaf with {down[i]} node port(s) has no room for {tl[i]} target and {ml[i]} management port(s) beside the {up[i]} uplinks they and its nodes need", f"fewer {key}, target_leaves: by_ports (leaves of their own), or a larger switch")])
    upper = upper_shape(up, r, st.spines or 1, 0, nl, "networks.storage.switch", f"{p.nodes:,} nodes x {p.net.storage_ports.count} storage port(s)")
    return StorageShape(tuple(down), tuple(grp), tuple(prt), tuple(first), tuple(cnt), tuple(ufm), (), (), tuple(up), upper, (), tuple(tl), tuple(ml))


def mgmt_leaves(p: NetworkPlan) -> int:
    """In-band management leaves (``inband.management_switch``): the servers' in-band ports over their access ports."""
    if not p.mgmt_radix:
        return 0
    return ceil(p.net.management_servers * p.net.inband.management_ports / p.mgmt_radix)


@dataclass(frozen=True, slots=True)
class InbandShape:
    units: int  # port units (bonded pairs or single ports) on the leaves
    per_leaf: int  # units a leaf (or leaf pair) takes
    leaves: int
    upper: Upper
    bonded: bool
    group_leaves: tuple[int, ...] = ()
    mleaves: int = 0  # management leaves (inband.management_switch), after the leaves  # leaves (pairs when bonded) of each block of node groups (:func:`inband_blocks`), before the shared ones; () nodes in order

    @property
    def spines(self) -> int:
        return self.upper.spines

    @property
    def top(self) -> int:
        """Switches with core uplinks: the super-spines with three tiers, else the spines."""
        return self.upper.supers or self.upper.spines


def inband_units(p: NetworkPlan, oob_switches: int) -> list[tuple[int, int, int, int, int]]:
    """Endpoint runs on the in-band leaves, in order: ``(kind, first idx, devices, ports each, role)``."""
    n = p.net
    servers = 0 if p.mgmt_radix else n.management_servers  # with management leaves the servers' ports are theirs
    runs = [(NODE, 0, p.nodes, n.inband_ports.count, R_NODE), (MGMT, 0, servers, n.inband.management_ports, R_MGMT), (NFS, 0, 1 if n.inband.nfs_ports else 0, n.inband.nfs_ports, R_NFS)]
    if n.storage.design == "converged":
        runs += [(NODE, 0, p.nodes, n.storage_ports.count, R_NSTOR), (TARGETS, 0, 1 if p.target_ports else 0, p.target_ports, R_TARGET)]
    runs.append((SWITCH, -1, oob_switches, n.oob.uplinks, R_OOBUP))  # first idx filled in by the generator
    return [r for r in runs if r[2] and r[3]]


def inband_blocks(p: NetworkPlan) -> list[int]:
    """Nodes of each block of in-band leaves (``node_groups``, consecutive ones joined by ``inband_blocks``)."""
    groups = node_groups(p, 1)
    if not p.inband_blocks:
        return groups
    if sum(p.inband_blocks) != len(groups) or min(p.inband_blocks) < 1:
        raise ValueError(f"inband_blocks {p.inband_blocks[:4]}... do not join the {len(groups)} node groups")
    ends = np.cumsum(p.inband_blocks)
    return [sum(groups[e - k : e]) for e, k in zip(ends.tolist(), p.inband_blocks)]


def inband_isl(p: NetworkPlan) -> int:
    """Inter-switch links of each in-band leaf pair: none on a collapsed core (the compute pair's ISLs join it), none unbonded."""
    return p.net.inband.isl if p.net.inband_ports.bonded and not p.collapsed else 0


def inband_down(p: NetworkPlan) -> int:
    """Port units an in-band leaf (pair) takes: its ports less the uplinks, inter-switch links and a collapsed core's compute ports."""
    n = p.net
    return p.inband_radix - n.inband.leaf_uplinks - inband_isl(p) - p.inband_reserved


def units_per_node(p: NetworkPlan) -> int:
    """Port units each node puts on the in-band leaves (its in-band ports, and its storage ports when converged)."""
    step = 2 if p.net.inband_ports.bonded else 1
    return sum(ports // step + ports % step for kind, _, _, ports, _ in inband_units(p, 0) if kind == NODE)


def node_leaves(p: NetworkPlan) -> tuple[np.ndarray, np.ndarray]:
    """``(first node, nodes)`` of every leaf that serves nodes of one group, in switch order: the storage node leaves, then the in-band group leaves.

    The in-band ones exist with ``node_groups`` only (each leaf of a pair listed); a leaf
    serves a contiguous run of nodes. The layout stands these leaves with their nodes, and
    decides where before the model is wired.
    """
    first: list[int] = []
    count: list[int] = []
    if p.net.storage.design == "separate":
        st = storage_shape(p)
        first, count = list(st.leaf_first), list(st.leaf_nodes)
    if p.node_groups:
        n = p.net
        step = 2 if n.inband_ports.bonded else 1
        per = inband_down(p)
        pn = units_per_node(p)
        start = 0
        for g in inband_blocks(p):
            at = 0
            for c in _split(g * pn, ceil(g * pn / per)):
                a, z = start + at // pn, start + (at + c - 1) // pn
                first += [a] * step
                count += [z - a + 1] * step
                at += c
            start += g
    return np.asarray(first, np.int64), np.asarray(count, np.int64)


def inband_shape(p: NetworkPlan, oob_switches: int) -> InbandShape:
    n = p.net
    bonded = n.inband_ports.bonded
    isl = inband_isl(p)
    per = inband_down(p)
    if per < 1:
        if p.collapsed:
            raise InputError([Problem("networks.inband.collapsed_core", f"the compute ports leave a collapsed core's {p.inband_radix}-port leaves no in-band port after {n.inband.leaf_uplinks} uplinks", "collapsed_core: false (a converged pair of its own)")])
        raise InputError([Problem("networks.inband.leaf_uplinks", f"a {p.inband_radix}-port in-band leaf keeps no down port after {n.inband.leaf_uplinks} uplinks and {isl} inter-switch links", "fewer leaf_uplinks or isl, or a larger switch")])
    step = 2 if bonded else 1
    runs = inband_units(p, oob_switches)
    units = sum(devs * (ports // step + (ports % step)) for _, _, devs, ports, _ in runs)
    gl: tuple[int, ...] = ()
    if p.node_groups:  # each group's nodes on leaves of their own, the shared units on the leaves after
        per_node = units_per_node(p)
        gl = tuple(ceil(g * per_node / per) for g in inband_blocks(p))
        leaves = step * (sum(gl) + ceil((units - p.nodes * per_node) / per))
    else:
        leaves = step * ceil(units / per)
    if n.inband.spines == 0:  # single tier: one leaf pair (or leaf), its uplinks to the data-centre core
        if leaves > step and p.collapsed:
            raise InputError([Problem("networks.inband.collapsed_core", f"the compute fabric's leaf pair keeps {per} port(s) at {n.inband_ports.speed}G beside its compute ports, and the converged units need {units:,}", "a converged pair of its own (the pipeline falls back to it)")])
        if leaves > step:
            raise InputError([Problem("networks.inband.spines", f"a single-tier in-band network (spines: 0) is one {'leaf pair' if bonded else 'leaf'}, but its {units:,} port units need {leaves} leaves of {per} down ports: past the single-tier limit", "set spines: 2 (a spine layer appears), or use a switch with more ports")])
        return InbandShape(units, per, leaves, Upper(0), bonded, gl)
    ml = mgmt_leaves(p)
    upper = upper_shape([n.inband.leaf_uplinks] * leaves + [n.inband.management_uplinks] * ml, p.inband_radix, n.inband.spines, n.inband.core_uplinks, leaves, "networks.inband.leaf_uplinks", f"{leaves} in-band leaves x {n.inband.leaf_uplinks} uplinks")
    if ml and upper.pods:
        raise InputError([Problem("networks.inband.management_switch", f"{leaves} in-band leaves need a third tier, where topogen does not place management leaves", "drop management_switch (the servers' ports on the leaves), or a larger in-band switch")])
    return InbandShape(units, per, leaves, upper, bonded, gl, ml)


def _racks(p: NetworkPlan, storage_switches: int, inband_switches: int) -> tuple[int, int]:
    """Compute racks (nodes_per_rack each) and management racks (the module docstring's rule).

    ``p.leaves_with_su`` leaves stand in compute racks, not in the management racks.
    """
    compute = ceil(p.nodes / p.nodes_per_rack)
    if not (p.net.management_servers or p.net.compute_fabric_managers or p.net.storage.fabric_managers or storage_switches or inband_switches):
        return compute, 0
    servers = p.net.management_servers + p.net.compute_fabric_managers + p.net.storage.fabric_managers
    spr = p.switches_per_rack
    fabric = p.compute_switch_racks if p.compute_switch_racks >= 0 else ceil(p.compute_switches / spr)
    return compute, fabric + ceil((storage_switches + inband_switches - p.leaves_with_su) / spr) + ceil(servers / spr)


@dataclass(frozen=True, slots=True)
class OobShape:
    group_ports: tuple[int, ...]  # managed ports of each SU (BMCs and compute-rack PDUs)
    group_racks: tuple[int, ...]
    group_switches: tuple[int, ...]
    shared: int  # managed ports of everything else
    extra: int  # OOB switches for the shared devices that found no spare port
    racks: tuple[int, int]

    @property
    def switches(self) -> int:
        return sum(self.group_switches) + self.extra


def rack_ports(p: NetworkPlan) -> int:
    """Managed ports of each compute rack besides its nodes': its PDUs, NVLink switch trays and power shelves (one each)."""
    o = p.net.oob
    return o.pdus_per_compute_rack + o.hb_switch_trays + o.power_shelves


def oob_shape(p: NetworkPlan, storage_switches: int, inband_switches: int) -> OobShape:
    n, a = p.net, p.oob_radix
    groups = node_groups(p, max(1, a // max(1, n.bmc_ports.count)))
    racks = _racks(p, storage_switches, inband_switches)
    first, gp, gr = 0, [], []
    for cnt in groups:
        rk = ceil((first + cnt) / p.nodes_per_rack) - ceil(first / p.nodes_per_rack)  # racks whose first node is in the group
        gr.append(rk)
        gp.append(cnt * n.bmc_ports.count + rk * rack_ports(p))
        first += cnt
    ufms = n.compute_fabric_managers + n.storage.fabric_managers
    shared = p.compute_switches + storage_switches + inband_switches + n.management_servers * n.oob.management_server_ports + ufms + racks[1] * n.oob.pdus_per_management_rack
    homed = _homed(p, shared, len(groups), storage_switches, inband_switches)
    if homed is None:
        gs = [ceil(x / a) for x in gp]
        spare = sum(s * a for s in gs) - sum(gp)
        extra = ceil(max(0, shared - spare) / a)
    else:
        gs = [ceil((x + h) / a) for x, h in zip(gp, homed[:-1])]
        extra = ceil(homed[-1] / a)
    extra = max(extra, n.oob.min_switches - sum(gs))  # never fewer than min_switches: the rest are shared ones
    return OobShape(tuple(gp), tuple(gr), tuple(gs), shared, extra, racks)


def _homed(p: NetworkPlan, shared: int, groups: int, storage_switches: int, inband_switches: int) -> list[int] | None:
    """Shared devices per OOB group (and last, for the management row's OOB switches) under ``p.oob_home``; None without homes."""
    if p.oob_home is None:
        return None
    h = np.asarray(homes(p, shared, storage_switches, inband_switches), np.int64)
    out = np.bincount(np.where(h < 0, groups, np.minimum(h, groups - 1)), minlength=groups + 1)
    return out.tolist()


def homes(p: NetworkPlan, shared: int, storage_switches: int, inband_switches: int) -> list[int]:
    """The home of every shared device in the OOB wiring's order (:class:`OobHomes` spread over the model's sections)."""
    h = p.oob_home or OobHomes()
    n = p.net
    if len(h.fabric) > p.compute_switches or len(h.storage_leaves) > storage_switches or len(h.inband_leaves) > inband_switches:
        raise ValueError("OOB homes given for more devices than the model has")
    servers = n.management_servers * n.oob.management_server_ports + n.compute_fabric_managers + n.storage.fabric_managers
    out = list(h.fabric) + [-1] * (p.compute_switches - len(h.fabric))
    out += list(h.storage_leaves) + [-1] * (storage_switches - len(h.storage_leaves))
    out += list(h.inband_leaves) + [-1] * (inband_switches - len(h.inband_leaves) + servers)
    out += list(h.switch_rack_pdus)
    return out[:shared] + [-1] * (shared - len(out))


def solve(p: NetworkPlan) -> tuple[StorageShape | None, InbandShape, OobShape]:
    """The three shapes, in-band and OOB sized together (each manages or carries the other)."""
    st = storage_shape(p) if p.net.storage.design == "separate" else None
    ns = (len(st.up) + st.upper.spines + st.upper.supers) if st else 0
    oob = 0
    for _ in range(64):
        ib = inband_shape(p, oob)
        o = oob_shape(p, ns, ib.leaves + ib.mleaves + ib.spines + ib.upper.supers - len(p.collapsed))  # a collapsed core's leaves are managed as compute switches
        if o.switches == oob:
            return st, ib, o
        oob = o.switches
    raise AssertionError("in-band and OOB sizes do not settle")  # each step only grows; 64 steps never run out


def closed_form(p: NetworkPlan) -> dict[str, dict[str, dict[str, int]]]:
    """Switches and cables of each network by role, from the shapes alone (no wiring): the generator must match."""
    st, ib, o = solve(p)
    n = p.net
    out: dict[str, dict[str, dict[str, int]]] = {k: {"switches": {}, "cables": {}} for k in NETWORK_NAMES}
    if st is not None:
        nl, tl = len(st.leaf_down), len(st.target_down)
        out["storage"]["switches"] = {k: v for k, v in (("leaf", nl), ("target-leaf", tl), ("spine", st.upper.spines), ("super-spine", st.upper.supers)) if v}
        mports = sum(st.target_mgmt) + sum(st.leaf_mgmt)
        sup = sum(st.upper.spine_ups(st.up)) if st.upper.pods else 0
        out["storage"]["cables"] = {k: v for k, v in (("node", p.nodes * n.storage_ports.count), ("leaf-spine", sum(st.up)), ("target", p.target_ports), ("fabric-manager", n.storage.fabric_managers), ("management-server", mports), ("spine-super", sup)) if v}
    runs = inband_units(p, o.switches)
    ports_by = {}
    for _, _, devs, ports, role in runs:
        ports_by[ROLE_NAMES[role]] = ports_by.get(ROLE_NAMES[role], 0) + devs * ports
    oob_up = ports_by.pop("oob-uplink", 0)
    isl = (ib.leaves // 2) * inband_isl(p)
    out["inband"]["switches"] = {k: v for k, v in (("compute-leaf" if p.collapsed else "leaf", ib.leaves), ("management-leaf", ib.mleaves), ("spine", ib.spines), ("super-spine", ib.upper.supers)) if v}
    if ib.mleaves:
        ports_by["management-server"] = n.management_servers * n.inband.management_ports
    core = ib.top * n.inband.core_uplinks if ib.spines else ib.leaves * n.inband.leaf_uplinks
    sup = sum(ib.upper.spine_ups(tuple([n.inband.leaf_uplinks] * ib.leaves))) if ib.upper.pods else 0
    out["inband"]["cables"] = {k: v for k, v in (*ports_by.items(), ("isl", isl), ("core-uplink", core), ("leaf-spine", (ib.leaves * n.inband.leaf_uplinks + ib.mleaves * n.inband.management_uplinks) if ib.spines else 0), ("spine-super", sup)) if v}
    out["oob"]["switches"] = {"access": o.switches} if o.switches else {}
    b2b = n.compute_fabric_managers // 2 + n.storage.fabric_managers // 2
    out["oob"]["cables"] = {k: v for k, v in (("management-port", sum(o.group_ports) + o.shared), ("oob-uplink", oob_up), ("back-to-back", b2b)) if v}
    return out


# --- wiring ------------------------------------------------------------------------------


def generate(p: NetworkPlan) -> Networks:
    """Wire the storage, in-band and OOB networks of plan ``p`` (the module docstring's rules)."""
    st, ib, o = solve(p)
    switches: list[NetSwitch] = []
    cables = _Cables()
    if st is not None:
        _wire_storage(p, st, switches, cables)
    ib_first = len(switches)
    oob_first = ib_first + ib.leaves + ib.mleaves + ib.spines + ib.upper.supers
    _wire_inband(p, ib, oob_first, o.switches, switches, cables)
    _wire_oob(p, o, ib_first, switches, cables)
    ufms = p.net.compute_fabric_managers + p.net.storage.fabric_managers
    endpoints = {"mgmt": p.net.management_servers, "ufm": ufms, "pdu": o.racks[0] * p.net.oob.pdus_per_compute_rack + o.racks[1] * p.net.oob.pdus_per_management_rack, "rack-device": o.racks[0] * (p.net.oob.hb_switch_trays + p.net.oob.power_shelves), "targets": p.target_ports, "nfs": p.net.inband.nfs_ports, "dc-core": ib.top * p.net.inband.core_uplinks if ib.spines else ib.leaves * p.net.inband.leaf_uplinks}
    notes: list[str] = []
    assumed = [x for x in (p.target_ports_from, p.collapsed_note) if x]
    if o.switches and p.net.oob.uplinks and not p.oob_uplink_ports:
        assumed.append(f"oob: the catalog states no uplink ports for {p.skus[2] or 'the OOB switch'}; assumed {p.net.oob.uplinks} of their own beside its {p.oob_radix} access ports (catalog uplink_ports)")
    if st is not None:
        notes.append(f"storage: {len(st.leaf_down)} node leaves at {p.net.storage.node_oversubscription}, {len(st.target_down)} target leaves ({p.net.storage.target_leaves}) at {p.net.storage.target_oversubscription}, {st.upper.spines} spines" + (f" in {len(st.upper.pods)} pods under {st.upper.supers} super-spines" if st.upper.pods else ""))
    nets = Networks(p, _site_names(p, switches), cables.table(), endpoints, o.racks, notes, assumptions=assumed)
    _check_pdus(nets)
    return nets


def _check_pdus(nets: "Networks") -> None:
    """The PDU names of ``naming.pdu`` / ``naming.management_pdu``: DNS labels, unique, apart from the switches'."""
    nm = nets.plan.naming
    if nm is None or (nm.other("pdu") is None and nm.other("management_pdu") is None):
        return
    problems: list[Problem] = []
    pdus = np.asarray(nets.names(PDU), dtype=str)
    first_m = nets.racks[0] * nets.plan.net.oob.pdus_per_compute_rack
    for key, part in (("pdu", pdus[:first_m]), ("management_pdu", pdus[first_m:])):
        t = nm.other(key)
        if t is not None and len(part):
            check_limits(t, part, "switch", problems)
    both = np.concatenate([pdus, np.asarray([s.name for s in nets.switches], dtype=str)])
    d = first_duplicate(both)
    if d is not None and not problems:
        i, j = d
        t = nm.other("pdu" if i < first_m else "management_pdu") or nm.other("pdu") or nm.other("management_pdu")
        problems.append(Problem(t.key, f"template {show(t.text)} gives {_pdu_or_switch(i, both, len(pdus))} and {_pdu_or_switch(j, both, len(pdus))} the same name {show(str(both[i]))}", "add fields that tell them apart; valid fields: {site}, {rack}, {index}"))
    if problems:
        raise InputError(problems)


def _pdu_or_switch(x: int, names: np.ndarray, pdus: int) -> str:
    return f"PDU {x}" if x < pdus else f"switch {names[x]}"


def _site_names(p: NetworkPlan, switches: list[NetSwitch]) -> list[NetSwitch]:
    """The switches renamed by the spec's ``naming:`` templates (``storage_leaf``, ``oob_access``...), checked.

    ``{index}`` counts the switches of one template from 0, ``{group}`` is the SU or
    node group a switch serves (0 for shared ones), ``{pair}``/``{side}`` an MLAG
    pair and its leaf. A collapsed core's leaves keep the compute fabric's names.
    Raises :class:`InputError` naming the template when two switches get one name
    or a name is no DNS label.
    """
    nm = p.naming
    if nm is None or not nm.others:
        return switches
    seen: dict[str, int] = {}
    out: list[NetSwitch] = []
    whose: list = []
    nums: list[int] = []
    for s in switches:
        t = nm.other(f"{NETWORK_NAMES[s.network]}_{s.role.replace('-', '_')}") if s.compute < 0 else None
        if t is None:
            out.append(s)
            whose.append(None)
            nums.append(-1)
            continue
        k = seen[t.key] = seen.get(t.key, -1) + 1
        nums.append(k)
        paired = s.pair >= 0
        out.append(replace(s, name=t.format(index=k, group=max(s.group, 0), pair=s.pair if paired else k, side=k % 2 if paired else 0)))
        whose.append(t)
    problems: list[Problem] = []
    for t in dict.fromkeys(w for w in whose if w is not None):
        check_limits(t, np.asarray([s.name for s, w in zip(out, whose) if w is t]), "switch", problems)
    d = first_duplicate(np.asarray([s.name for s in out]))
    if d is not None and not problems:
        i, j = d
        t = whose[j] or whose[i]
        what = [f"{NETWORK_NAMES[out[x].network]} {out[x].role} switch {nums[x] if nums[x] >= 0 else out[x].name} (group {max(out[x].group, 0)})" for x in (i, j)]
        problems.append(Problem(t.key, f"template {show(t.text)} gives the {what[0]} and the {what[1]} the same name {show(out[i].name)}", "add fields that tell them apart; valid fields: {site}, {index}, {group}, {pair}, {side}"))
    if problems:
        raise InputError(problems)
    return out


def _stripe(up: list[int], spines: int, first_spine: int, leaf_ids: list[int], up_start: list[int], speed, net: int, cables: _Cables, role: int = R_UP) -> None:
    """Uplink ``c`` of the fabric (leaves in order) to spine ``c mod S``, on the spine's port ``c div S + 1``; ``speed`` one, or one per leaf."""
    ups = np.asarray(up, np.int64)
    if not len(ups) or not spines:
        return
    c = np.arange(int(ups.sum()), dtype=np.int64)
    leaf = np.repeat(np.arange(len(ups)), ups)
    offset = np.concatenate([[0], np.cumsum(ups)[:-1]])
    j = c - offset[leaf]
    sp = np.asarray(speed, np.int64)
    cables.add(len(c), net=net, role=role, a_kind=SWITCH, a_idx=np.asarray(leaf_ids, np.int64)[leaf], a_port=np.asarray(up_start, np.int64)[leaf] + j, z_kind=SWITCH, z_idx=first_spine + c % spines, z_port=c // spines + 1, speed=sp[leaf] if sp.ndim else sp)


def _wire_upper(u: Upper, up: list[int], radix: int, leaf_ids: list[int], up_start: list[int], name: str, network: int, sku: str, speed, switches: list[NetSwitch], cables: _Cables) -> int:
    """Add the spines (and super-spines) of ``u`` and cable them; returns the index of the first top switch.

    ``speed``: one, or one per leaf (a management leaf's uplinks at their own speed); the
    spines and super-spines run at the fastest.
    """
    first = len(switches)
    leaf_speed = np.broadcast_to(np.asarray(speed, np.int64), (len(up),))
    speed = int(leaf_speed.max()) if len(up) else int(np.max(speed))
    if not u.pods:
        for k in range(u.spines):
            switches.append(NetSwitch(f"{name}-spine-{k:02d}", network, "spine", radix, speed, sku))
        _stripe(up, u.spines, first, leaf_ids, up_start, leaf_speed, network, cables)
        return first
    pw = max(2, width(len(u.pods)))
    spine_of: dict[tuple[int, int], int] = {}
    for p, (f, n, sp) in enumerate(u.pods):
        for j in range(sp):
            spine_of[(p, j)] = len(switches)
            switches.append(NetSwitch(f"{name}-spine-p{p:0{pw}d}-{j:02d}", network, "spine", radix, speed, sku, p))
        ups = np.asarray(up[f : f + n], np.int64)
        q = np.repeat(np.arange(n), ups)  # the leaf's place in the pod: its port on every pod spine
        j = np.arange(int(ups.sum())) - np.repeat(np.cumsum(ups) - ups, ups)  # the leaf's uplink j goes to pod spine j
        cables.add(len(q), net=network, role=R_UP, a_kind=SWITCH, a_idx=np.asarray(leaf_ids[f : f + n], np.int64)[q], a_port=np.asarray(up_start[f : f + n], np.int64)[q] + j, z_kind=SWITCH, z_idx=spine_of[(p, 0)] + j, z_port=q + 1, speed=leaf_speed[f : f + n][q])
    top = len(switches)
    ups = u.spine_ups(tuple(up))
    by_plane: dict[int, list[tuple[int, int]]] = {}
    at = 0
    for p, (_, _, sp) in enumerate(u.pods):
        for j in range(sp):
            by_plane.setdefault(j, []).append((spine_of[(p, j)], ups[at]))
            at += 1
    for j in sorted(by_plane):
        base = len(switches)
        for k in range(u.planes[j]):
            switches.append(NetSwitch(f"{name}-super-{j:02d}-{k:02d}", network, "super-spine", radix, speed, sku))
        members = by_plane[j]
        _stripe([m[1] for m in members], u.planes[j], base, [m[0] for m in members], [radix // 2 + 1] * len(members), speed, network, cables, R_SUPER)
    return top


def _up_start(radix: int, down: int, up: int) -> int:
    """First uplink port: above the lower half when the down ports fit there, else right after them."""
    return min(max(radix // 2, down), radix - up) + 1


def _wire_storage(p: NetworkPlan, st: StorageShape, switches: list[NetSwitch], cables: _Cables) -> None:
    r, speed, sku = p.storage_radix, p.net.storage_ports.speed, p.skus[0]
    tspeed = p.net.storage.target_speed or speed
    base = len(switches)
    nl, tl = len(st.leaf_down), len(st.target_down)
    gw = max(2, width(max(st.leaf_group, default=0) + 1))
    for i in range(nl):
        switches.append(NetSwitch(f"stor-leaf-su{st.leaf_group[i]:0{gw}d}-p{st.leaf_port[i]}", STORAGE, "leaf", r, speed, sku, st.leaf_group[i]))
    for k in range(tl):
        switches.append(NetSwitch(f"stor-tleaf-{k:02d}", STORAGE, "target-leaf", r, speed, sku))
    names = [s.name for s in switches[base:]]
    if len(set(names)) != len(names):  # several leaves per SU and port: number them by their first node
        for i in range(nl):
            sw = switches[base + i]
            switches[base + i] = NetSwitch(f"{sw.name}-n{st.leaf_first[i]}", sw.network, sw.role, sw.radix, sw.speed, sw.sku, sw.group)
    # nodes to node leaves: node port q of node x on leaf (group, q, chunk), port = slot in the chunk
    for i in range(nl):
        n = st.leaf_nodes[i]
        cables.add(n, net=STORAGE, role=R_NODE, a_kind=NODE, a_idx=np.arange(st.leaf_first[i], st.leaf_first[i] + n), a_port=st.leaf_port[i], z_kind=SWITCH, z_idx=base + i, z_port=np.arange(1, n + 1), speed=speed)
    ufm = p.net.compute_fabric_managers
    for i in range(nl):
        for k in range(st.leaf_ufm[i]):
            cables.add(1, net=STORAGE, role=R_UFM, a_kind=UFM, a_idx=ufm, a_port=0, z_kind=SWITCH, z_idx=base + i, z_port=st.leaf_nodes[i] + k + 1, speed=speed)
            ufm += 1
    tport, mgmt = 0, 0
    ms = p.net.management_servers
    for i in range(len(st.leaf_targets)):  # target_leaves: node_leaves, the targets (then management servers) after the leaf's nodes
        t, m, at = st.leaf_targets[i], st.leaf_mgmt[i], st.leaf_nodes[i] + st.leaf_ufm[i]
        cables.add(t, net=STORAGE, role=R_TARGET, a_kind=TARGETS, a_idx=0, a_port=np.arange(tport + 1, tport + t + 1), z_kind=SWITCH, z_idx=base + i, z_port=np.arange(at + 1, at + t + 1), speed=tspeed)
        tport += t
        idx = np.arange(mgmt, mgmt + m)
        cables.add(m, net=STORAGE, role=R_MGMT, a_kind=MGMT, a_idx=idx % ms if ms else idx, a_port=idx // ms if ms else 0, z_kind=SWITCH, z_idx=base + i, z_port=np.arange(at + t + 1, at + t + m + 1), speed=speed)
        mgmt += m
    for k in range(tl):
        t = st.target_down[k]
        cables.add(t, net=STORAGE, role=R_TARGET, a_kind=TARGETS, a_idx=0, a_port=np.arange(tport + 1, tport + t + 1), z_kind=SWITCH, z_idx=base + nl + k, z_port=np.arange(1, t + 1), speed=tspeed)
        tport += t
        m = st.target_mgmt[k]
        ms = p.net.management_servers
        idx = np.arange(mgmt, mgmt + m)
        cables.add(m, net=STORAGE, role=R_MGMT, a_kind=MGMT, a_idx=idx % ms if ms else idx, a_port=idx // ms if ms else 0, z_kind=SWITCH, z_idx=base + nl + k, z_port=np.arange(t + 1, t + m + 1), speed=speed)
        mgmt += m
        for j in range(st.target_ufm[k] if st.target_ufm else 0):
            cables.add(1, net=STORAGE, role=R_UFM, a_kind=UFM, a_idx=ufm, a_port=0, z_kind=SWITCH, z_idx=base + nl + k, z_port=t + m + j + 1, speed=speed)
            ufm += 1
    downs = [x + (st.leaf_targets[i] + st.leaf_mgmt[i] if st.leaf_targets else 0) for i, x in enumerate(st.leaf_down)] + [st.target_down[k] + st.target_mgmt[k] + (st.target_ufm[k] if st.target_ufm else 0) for k in range(tl)]
    _wire_upper(st.upper, list(st.up), r, list(range(base, base + nl + tl)), [_up_start(r, d, u) for d, u in zip(downs, st.up)], "stor", STORAGE, sku, speed, switches, cables)


def _wire_inband(p: NetworkPlan, ib: InbandShape, oob_first: int, oob_switches: int, switches: list[NetSwitch], cables: _Cables) -> None:
    n, r, speed, sku = p.net, p.inband_radix, p.net.inband_ports.speed, p.skus[1]
    base = len(switches)
    pw = max(2, width(ib.leaves // 2 if ib.bonded else ib.leaves))
    step = 2 if ib.bonded else 1
    runs = inband_units(p, oob_switches)
    unit_of = np.repeat(group_units(p, inband_blocks(p)), ib.group_leaves) if ib.group_leaves else np.zeros(0, np.int64)  # the SU of each group leaf (pair): its block's first
    for i in range(ib.leaves):
        name = f"inb-leaf-{i // 2:0{pw}d}{'ab'[i % 2]}" if ib.bonded else f"inb-leaf-{i:0{pw}d}"
        su = int(unit_of[i // step]) if i // step < len(unit_of) else -1
        box = p.collapsed[i] if p.collapsed else -1
        switches.append(NetSwitch(p.collapsed_names[i] if p.collapsed else name, INBAND, "leaf", r, speed, sku, su, pair=i // 2 if ib.bonded else -1, compute=box))
    low = p.inband_reserved  # a collapsed core's in-band ports follow the compute fabric's cages
    unit = 0
    node_unit = 0  # units of the node runs before this one (grouped: a node's units of every node run are in its group's block)
    per_node = units_per_node(p)
    for kind, first, devs, ports, role in runs:
        if kind == SWITCH:
            first = oob_first
        per_dev = ports // step + ports % step
        u = unit + np.arange(devs * per_dev, dtype=np.int64)  # a unit per bonded pair (or port)
        dev = first + np.arange(devs, dtype=np.int64).repeat(per_dev)
        k = np.tile(np.arange(per_dev, dtype=np.int64), devs)
        if not ib.group_leaves:
            leaf, port = (u // ib.per_leaf) * step, u % ib.per_leaf + 1
        elif kind == NODE:
            leaf, port = _group_slots(p, ib, dev, node_unit + k, per_node)
            leaf = leaf * step
            node_unit += per_dev
        else:  # shared units: the leaves after the groups'
            s = u - p.nodes * per_node
            leaf, port = (sum(ib.group_leaves) + s // ib.per_leaf) * step, s % ib.per_leaf + 1
        base_port = 0
        sp = p.net.oob.uplink_speed if role == R_OOBUP else (n.storage.target_speed or speed) if role == R_TARGET else speed
        for side in range(step):
            keep = step * k + side < ports
            ap = step * k + side + base_port
            if kind == SWITCH:
                ap = p.oob_radix + step * k + side + 1  # an OOB switch's uplink ports follow its access ports
            cables.add(int(keep.sum()), net=OOB if role == R_OOBUP else INBAND, role=role, a_kind=kind, a_idx=dev[keep], a_port=np.broadcast_to(ap, u.shape)[keep], z_kind=SWITCH, z_idx=base + leaf[keep] + side, z_port=port[keep] + low, speed=sp)
        unit += devs * per_dev
    if ib.bonded and inband_isl(p):
        for pr in range(ib.leaves // 2):
            a, b = base + 2 * pr, base + 2 * pr + 1
            q = r - n.inband.leaf_uplinks - np.arange(n.inband.isl)
            cables.add(n.inband.isl, net=INBAND, role=R_ISL, a_kind=SWITCH, a_idx=a, a_port=q, z_kind=SWITCH, z_idx=b, z_port=q, speed=speed)
    lu = n.inband.leaf_uplinks
    if not ib.spines:  # single tier: each leaf's uplinks go to the data-centre core
        for i in range(ib.leaves):
            cables.add(lu, net=INBAND, role=R_CORE, a_kind=SWITCH, a_idx=base + i, a_port=np.arange(r - lu + 1, r + 1), z_kind=CORE, z_idx=0, z_port=np.arange(i * lu + 1, i * lu + lu + 1), speed=speed)
        return
    ml, mu = ib.mleaves, n.inband.management_uplinks
    mbase = len(switches)
    mspeed = n.inband.management_speed or speed
    for i in range(ml):
        switches.append(NetSwitch(f"inb-mleaf-{i:02d}", INBAND, "management-leaf", p.mgmt_radix, mspeed, p.mgmt_sku))
    mports = n.management_servers * n.inband.management_ports if ml else 0  # without management leaves the servers are units of the leaves
    k = np.arange(mports, dtype=np.int64)  # server s's port j is the servers' port s x ports + j, in order over the leaves
    cables.add(mports, net=INBAND, role=R_MGMT, a_kind=MGMT, a_idx=k // max(1, n.inband.management_ports), a_port=k % max(1, n.inband.management_ports), z_kind=SWITCH, z_idx=mbase + k // p.mgmt_radix if p.mgmt_radix else 0, z_port=k % p.mgmt_radix + 1 if p.mgmt_radix else 0, speed=mspeed)
    up_speed = [speed] * ib.leaves + [n.inband.management_uplink_speed] * ml  # a management leaf's uplinks at their own speed, on the ports after its access ports
    top = _wire_upper(ib.upper, [lu] * ib.leaves + [mu] * ml, r, list(range(base, base + ib.leaves)) + list(range(mbase, mbase + ml)), [r - lu + 1] * ib.leaves + [p.mgmt_radix + 1] * ml, "inb", INBAND, sku, up_speed, switches, cables)
    cu = n.inband.core_uplinks
    for s in range(ib.top):
        cables.add(cu, net=INBAND, role=R_CORE, a_kind=SWITCH, a_idx=top + s, a_port=np.arange(r - cu + 1, r + 1), z_kind=CORE, z_idx=0, z_port=np.arange(s * cu + 1, s * cu + cu + 1), speed=speed)


def _group_slots(p: NetworkPlan, ib: InbandShape, node: np.ndarray, j: np.ndarray, per_node: int) -> tuple[np.ndarray, np.ndarray]:
    """Leaf (pair) and port of unit ``j`` of each ``node``: its group's units split evenly over the group's leaves, node by node."""
    groups = np.asarray(inband_blocks(p), np.int64)
    gl = np.asarray(ib.group_leaves, np.int64)
    ends = np.cumsum(groups)
    g = np.searchsorted(ends, node, side="right")
    x = (node - (ends - groups)[g]) * per_node + j  # the unit's place in its group
    units = groups[g] * per_node
    q, rem = units // gl[g], units % gl[g]
    big = rem * (q + 1)  # the first ``rem`` leaves take one unit more
    chunk = np.where(x < big, x // (q + 1), rem + (x - big) // np.maximum(q, 1))
    start = np.where(chunk < rem, chunk * (q + 1), big + (chunk - rem) * q)
    return (np.cumsum(gl) - gl)[g] + chunk, x - start + 1


def _wire_oob(p: NetworkPlan, o: OobShape, ib_first: int, switches: list[NetSwitch], cables: _Cables) -> None:
    """Access switches per group: the group's BMCs and rack PDUs first, then the shared devices in the spare ports."""
    n, a, sku = p.net, p.oob_radix, p.skus[2]
    base = len(switches)
    unit_of = group_units(p, node_groups(p, max(1, a // max(1, n.bmc_ports.count))))  # an SU's groups (its rows) number its switches on
    gw = max(2, width(max(unit_of, default=0) + 1))
    seen: dict[int, int] = {}
    for g, s in enumerate(o.group_switches):
        for i in range(s):
            k = seen[unit_of[g]] = seen.get(unit_of[g], -1) + 1
            switches.append(NetSwitch(f"oob-su{unit_of[g]:0{gw}d}-{k}", OOB, "access", a, n.bmc_ports.speed, sku, g))
    for i in range(o.extra):
        switches.append(NetSwitch(f"oob-mgmt-{i}", OOB, "access", a, n.bmc_ports.speed, sku))
    first_node, first_rack, sw = 0, 0, base
    free: list[tuple[int, int, int]] = []  # (switch, first free port, free ports) of every group switch
    by_group: dict[int, list[tuple[int, int, int]]] = {}  # the same, per group (-1: the management row's switches)
    bmc = n.bmc_ports.count
    pc = n.oob.pdus_per_compute_rack
    spread = n.oob.spread == "round-robin" and p.oob_home is None  # the nodes' ports dealt over every switch: _wire_oob_spread
    rd = n.oob.hb_switch_trays + n.oob.power_shelves  # a rack-scale system's managed devices in each compute rack
    for g, nsw in enumerate(o.group_switches if not spread else ()):
        cnt = (o.group_ports[g] - o.group_racks[g] * rack_ports(p)) // bmc if bmc else 0
        kinds = [(NODE, np.arange(first_node, first_node + cnt).repeat(bmc), np.tile(np.arange(bmc), cnt)), (PDU, np.arange(first_rack * pc, (first_rack + o.group_racks[g]) * pc), 0), (RACKDEV, np.arange(first_rack * rd, (first_rack + o.group_racks[g]) * rd), 0)]
        slot = 0
        for kind, idx, port in kinds:
            m = len(idx)
            k = slot + np.arange(m)
            cables.add(m, net=OOB, role=R_MPORT, a_kind=kind, a_idx=idx, a_port=port, z_kind=SWITCH, z_idx=sw + k // a, z_port=k % a + 1, speed=n.bmc_ports.speed)
            slot += m
        for i in range(nsw):
            used = min(a, max(0, slot - i * a))
            if used < a:
                free.append((sw + i, used + 1, a - used))
                by_group.setdefault(g, []).append((sw + i, used + 1, a - used))
        first_node += cnt
        first_rack += o.group_racks[g]
        sw += nsw
    for i in range(o.extra):
        free.append((sw + i, 1, a))
        by_group.setdefault(-1, []).append((sw + i, 1, a))
    # the shared devices, in order: compute-fabric switches, storage and in-band switches, servers, management-rack PDUs
    mp = n.oob.management_server_ports
    own = np.asarray([i for i in range(base) if switches[i].compute < 0], np.int64)  # a collapsed core's leaves are managed as compute switches
    shared = [(FABRIC, np.arange(p.compute_switches)), (SWITCH, own), (MGMT, np.arange(n.management_servers).repeat(mp)), (UFM, np.arange(n.compute_fabric_managers + n.storage.fabric_managers)), (PDU, o.racks[0] * pc + np.arange(o.racks[1] * n.oob.pdus_per_management_rack))]
    kind = np.concatenate([np.full(len(i), k, np.int8) for k, i in shared])
    idx = np.concatenate([i for _, i in shared]).astype(np.int64)
    aport = np.zeros(len(idx), np.int64)
    at = p.compute_switches + len(own)
    aport[at : at + n.management_servers * mp] = np.tile(np.arange(mp), n.management_servers)  # a server's OOB ports bmc0, bmc1...
    m = len(idx)
    if spread:
        _wire_oob_spread(p, o, base, kind, idx, aport, cables)
        return
    zs = np.concatenate([np.full(c, s, np.int64) for s, _, c in free]) if free else np.zeros(0, np.int64)
    zp = np.concatenate([np.arange(f, f + c) for _, f, c in free]) if free else np.zeros(0, np.int64)
    if p.oob_home is not None:  # each device on its home group's free ports, the devices of a group in order
        home = np.asarray(homes(p, m, ib_first, base - ib_first - len(p.collapsed)), np.int64)
        home = np.where(home < 0, -1, np.minimum(home, len(o.group_switches) - 1))
        zs, zp = np.zeros(m, np.int64), np.zeros(m, np.int64)
        for g in np.unique(home).tolist():
            sel = np.flatnonzero(home == g)
            ports = by_group.get(g, [])
            gz = np.concatenate([np.full(c, s, np.int64) for s, _, c in ports]) if ports else np.zeros(0, np.int64)
            gp = np.concatenate([np.arange(f, f + c) for _, f, c in ports]) if ports else np.zeros(0, np.int64)
            zs[sel], zp[sel] = gz[: len(sel)], gp[: len(sel)]  # the shape gives every group room for its homed devices
    cables.add(m, net=OOB, role=R_MPORT, a_kind=kind, a_idx=idx, a_port=aport, z_kind=SWITCH, z_idx=zs[:m], z_port=zp[:m], speed=n.bmc_ports.speed)
    _wire_b2b(p, cables)


def _wire_b2b(p: NetworkPlan, cables: _Cables) -> None:
    """The fabric managers of each fabric, HA pairs joined back to back."""
    n = p.net
    nf = n.compute_fabric_managers
    for first, cnt in ((0, nf), (nf, n.storage.fabric_managers)):
        pairs = cnt // 2
        cables.add(pairs, net=OOB, role=R_B2B, a_kind=UFM, a_idx=first + 2 * np.arange(pairs), a_port=1, z_kind=UFM, z_idx=first + 2 * np.arange(pairs) + 1, z_port=1, speed=n.bmc_ports.speed)


def _wire_oob_spread(p: NetworkPlan, o: OobShape, base: int, kind: np.ndarray, idx: np.ndarray, aport: np.ndarray, cables: _Cables) -> None:
    """``oob.spread: round-robin``: the nodes' OOB ports dealt over every access switch in turn, then the PDUs and shared devices in the free ports.

    Port ``j`` of node ``x`` is OOB port ``g = x x ports + j`` of the cluster, on switch ``g mod S``
    at port ``g div S + 1``: a node's ports land on distinct switches while it has no more
    ports than there are switches, and every switch takes its share. The compute racks'
    PDUs, then the shared devices (in the order of :func:`_wire_oob`), take the free
    ports switch by switch. The shape's switch count holds them all (it is sized per SU).
    """
    n, a = p.net, p.oob_radix
    S = o.switches
    bmc, pc = n.bmc_ports.count, n.oob.pdus_per_compute_rack
    g = np.arange(p.nodes * bmc, dtype=np.int64)
    cables.add(len(g), net=OOB, role=R_MPORT, a_kind=NODE, a_idx=g // bmc if bmc else g, a_port=g % bmc if bmc else 0, z_kind=SWITCH, z_idx=base + g % S, z_port=g // S + 1, speed=n.bmc_ports.speed)
    used = np.bincount(g % S, minlength=S) if S else np.zeros(0, np.int64)
    zs = np.concatenate([np.full(a - int(u), base + s, np.int64) for s, u in enumerate(used.tolist())]) if S else np.zeros(0, np.int64)
    zp = np.concatenate([np.arange(int(u) + 1, a + 1) for u in used.tolist()]) if S else np.zeros(0, np.int64)
    pdus = np.arange(o.racks[0] * pc, dtype=np.int64)
    devs = np.arange(o.racks[0] * (n.oob.hb_switch_trays + n.oob.power_shelves), dtype=np.int64)
    kinds = np.concatenate([np.full(len(pdus), PDU, np.int8), np.full(len(devs), RACKDEV, np.int8), kind])
    idxs = np.concatenate([pdus, devs, idx])
    ports = np.concatenate([np.zeros(len(pdus) + len(devs), np.int64), aport])
    m = len(idxs)
    if m > len(zs):
        raise AssertionError("OOB switches sized per SU hold every port")  # oob_shape sizes S for them all
    cables.add(m, net=OOB, role=R_MPORT, a_kind=kinds, a_idx=idxs, a_port=ports, z_kind=SWITCH, z_idx=zs[:m], z_port=zp[:m], speed=n.bmc_ports.speed)
    _wire_b2b(p, cables)
