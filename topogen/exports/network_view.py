"""One view of the other networks' devices and cable ends, for every exporter that renders them.

Names, roles and port names of the storage, in-band and OOB networks are formatted here
once (per device kind, then gathered per cable end), and ``networks-cabling.csv``, NetBox,
topology.json, GraphML and the diagrams render them.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property

import numpy as np

from topogen.fabric import networks as nw


class NetworkView:
    """Device names and roles by kind, and every cable's end names, roles and ports, of one architecture.

    ``compute`` is the architecture's compute fabric: its switches' names and roles name the
    compute switches whose management ports the OOB network takes. Device roles: nodes
    ``node``, the networks' switches ``<network>-<role>`` (``storage-leaf``, ``inband-spine``,
    ``oob-access``), compute switches their compute role, and the other kinds their kind
    (``mgmt``, ``ufm``, ``pdu``, ``targets``, ``nfs``, ``dc-core``).
    """

    def __init__(self, n: nw.Networks, compute) -> None:
        self.n = n
        cnames = [s.name for s in compute.switches]
        self.names = {k: np.asarray(n.names(k, cnames), dtype=object) for k in range(len(nw.KIND_NAMES))}
        roles = {k: np.full(max(len(self.names[k]), 1), nw.KIND_NAMES[k], dtype=object) for k in range(len(nw.KIND_NAMES))}
        if n.switches:
            roles[nw.SWITCH] = np.asarray([f"{nw.NETWORK_NAMES[s.network]}-{s.role}" for s in n.switches], dtype=object)
        if compute.switches:
            roles[nw.FABRIC] = np.asarray([s.role for s in compute.switches], dtype=object)
        self.roles = roles

    def _ends(self, kind: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dev, role = np.empty(len(kind), dtype=object), np.empty(len(kind), dtype=object)
        for k in np.unique(kind):
            m = kind == k
            dev[m], role[m] = self.names[int(k)][idx[m]], self.roles[int(k)][idx[m]]
        return dev, role

    def _ports(self, kind: np.ndarray, idx: np.ndarray, port: np.ndarray) -> list[str]:
        c = self.n.cables
        return [self.n.port_name(k, p, net, r, i if k == nw.SWITCH else -1) for k, i, p, net, r in zip(kind.tolist(), idx.tolist(), port.tolist(), c.net.tolist(), c.role.tolist())]

    @cached_property
    def a(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """``(device, role, port)`` of every cable's ``a`` end."""
        c = self.n.cables
        return (*self._ends(c.a_kind, c.a_idx), self._ports(c.a_kind, c.a_idx, c.a_port))

    @cached_property
    def z(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """``(device, role, port)`` of every cable's ``z`` end."""
        c = self.n.cables
        return (*self._ends(c.z_kind, c.z_idx), self._ports(c.z_kind, c.z_idx, c.z_port))

    # --- the graph view (topology.json, GraphML) ------------------------------------------

    def graph_nodes(self) -> list[tuple[str, dict]]:
        """``(id, attributes)`` of every device of the networks the compute fabric's graph does not hold.

        Attributes: ``role`` (as in :class:`NetworkView`), ``network`` (the switch's network;
        ``storage`` for the targets, ``inband`` for NFS and the core, ``oob`` for PDUs, ``host``
        for nodes, management servers and fabric managers, which sit on several), and for
        switches ``radix`` and ``group`` (its scalable unit, -1 when shared). Compute switches
        are already in the compute graph and are not repeated.
        """
        n = self.n
        out: list[tuple[str, dict]] = [(x, {"role": "node", "network": "host"}) for x in self.names[nw.NODE].tolist()]
        for s in n.switches:
            if s.compute >= 0:  # a collapsed core's leaf is a compute switch: in the compute graph
                continue
            out.append((s.name, {"role": f"{nw.NETWORK_NAMES[s.network]}-{s.role}", "network": nw.NETWORK_NAMES[s.network], "radix": s.radix, "group": s.group}))
        homes = {nw.MGMT: "host", nw.UFM: "host", nw.PDU: "oob", nw.RACKDEV: "oob", nw.TARGETS: "storage", nw.NFS: "inband", nw.CORE: "inband"}
        c = n.cables
        for kind, net in homes.items():
            count = n.endpoints[nw.KIND_NAMES[kind]] if kind in (nw.MGMT, nw.UFM, nw.PDU, nw.RACKDEV) else int(bool((c.a_kind == kind).any() or (c.z_kind == kind).any()))
            out += [(x, {"role": nw.KIND_NAMES[kind], "network": net}) for x in self.names[kind].tolist()[:count]]
        return out

    def graph_edges(self) -> list[tuple[str, str, str, dict]]:
        """``(source, target, key, attributes)`` of every cable: key ``<network>-<cable id>`` (the id of
        ``networks-cabling.csv``); attributes ``network``, ``role`` (the cable's), ``a_port``, ``z_port``,
        ``speed`` (Gb/s). ``source`` is the ``a`` end."""
        c = self.n.cables
        (ad, _, ap), (zd, _, zp) = self.a, self.z
        nets, roles, speeds = c.net.tolist(), c.role.tolist(), c.speed.tolist()
        return [
            (ad[i], zd[i], f"{nw.NETWORK_NAMES[nets[i]]}-{i + 1}", {"network": nw.NETWORK_NAMES[nets[i]], "role": nw.ROLE_NAMES[roles[i]], "a_port": ap[i], "z_port": zp[i], "speed": speeds[i]})
            for i in range(len(c))
        ]

    # --- the diagram view: devices grouped by role, cables bundled by network and groups ------

    def bundles(self, compute) -> tuple[dict[str, tuple[str, int]], list[tuple[str, str, str, int, tuple[int, ...]]]]:
        """Boxes and bundles of the four networks' overview diagram.

        Returns ``(boxes, bundles)``: ``boxes`` maps a box id to ``(network, devices)`` (network
        ``host`` for the nodes, servers and fabric managers every network reaches); ``bundles``
        are ``(network, from box, to box, cables, speeds)``, the compute fabric's cables by
        tier (nodes to leaves, then each tier to the next) and every other cable by its
        ends' boxes. Box ids: ``nodes``, ``compute-<role>``, ``<network>-<role>`` for the
        networks' switches, and the other kinds (``mgmt``, ``ufm``, ``pdu``, ``targets``,
        ``nfs``, ``dc-core``).
        """
        n = self.n
        boxes: dict[str, tuple[str, int]] = {"nodes": ("host", n.plan.nodes)}
        croles = [f"compute-{s.role}" for s in compute.switches]
        for r in croles:
            boxes[r] = ("compute", boxes.get(r, ("compute", 0))[1] + 1)
        sw_box = [f"{nw.NETWORK_NAMES[s.network]}-{s.role}" for s in n.switches]
        for s, b in zip(n.switches, sw_box):
            boxes[b] = (nw.NETWORK_NAMES[s.network], boxes.get(b, ("", 0))[1] + 1)
        homes = {nw.MGMT: "host", nw.UFM: "host", nw.PDU: "oob", nw.RACKDEV: "oob", nw.TARGETS: "storage", nw.NFS: "inband", nw.CORE: "inband"}
        for kind, net in homes.items():
            count = n.endpoints[nw.KIND_NAMES[kind]]
            if kind in (nw.TARGETS, nw.NFS, nw.CORE):
                count = int(count > 0)
            if count:
                boxes[nw.KIND_NAMES[kind]] = (net, count if kind in (nw.MGMT, nw.UFM, nw.PDU, nw.RACKDEV) else n.endpoints[nw.KIND_NAMES[kind]])
        acc: dict[tuple[str, str, str], tuple[int, set[int]]] = {}

        def add(key: tuple[str, str, str], count: int, speeds) -> None:
            c0, s0 = acc.get(key, (0, set()))
            acc[key] = (c0 + count, s0 | set(speeds))

        L = compute.links
        g = compute.gpus
        if len(L):
            zr = np.asarray(croles, dtype=object)[L.z_dev - g]
            ar = np.where(L.a_dev < g, "nodes", np.asarray(croles + ["nodes"], dtype=object)[np.where(L.a_dev >= g, L.a_dev - g, len(croles))])
            pairs = Counter(zip(ar.tolist(), zr.tolist(), L.tier.tolist()))
            for (a, z, t), cnt in sorted(pairs.items()):
                add(("compute", a, z), cnt, [compute.spec.speed_at(t)])
        c = n.cables
        kinds_box = {k: nw.KIND_NAMES[k] for k in homes}
        kinds_box[nw.NODE] = "nodes"

        def box_of(kind: int, idx: int) -> str:
            if kind == nw.SWITCH:
                return sw_box[idx]
            if kind == nw.FABRIC:
                return croles[idx]
            return kinds_box[kind]

        keys = Counter()
        sp: dict[tuple[str, str, str], set[int]] = {}
        for net, ak, ai, zk, zi, s in zip(c.net.tolist(), c.a_kind.tolist(), c.a_idx.tolist(), c.z_kind.tolist(), c.z_idx.tolist(), c.speed.tolist()):
            key = (nw.NETWORK_NAMES[net], box_of(ak, ai), box_of(zk, zi))
            keys[key] += 1
            sp.setdefault(key, set()).add(s)
        for key in sorted(keys):
            add(key, keys[key], sp[key])
        return boxes, [(net, a, z, cnt, tuple(sorted(s))) for (net, a, z), (cnt, s) in acc.items()]
