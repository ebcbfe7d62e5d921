"""Deterministic device and port names.

Devices
    GPU ``hb<domain>-gpu<rank>``, e.g. ``hb0003-gpu7``: rank ``rank`` of HB
    domain ``domain`` (both 0-based, zero-padded to the width of the largest).

    Rail-optimized switches
        ``leaf-g<group>-r<rail>``: the rail switch of one rail in one group of
        HB domains; ``leaf-g<group>-r<first>-<last>`` when rails share it.
        ``<role>-b<block>-<pos>`` for tiers between leaf and top (role spine,
        core, tier4...), ``<role>-<pos>`` for the top tier.
    Rail-only switches
        the same names behind a rail prefix ``rail<r>-`` (``rail3-leaf-02``,
        ``rail3-spine-07``); a single-switch rail is ``rail<r>-leaf``; several
        whole rails on one switch: ``rail<first>-<last>-leaf``.
    With several planes every switch name starts with ``pl<plane>-``.

Nodes (NetBox devices, Slurm nodes; see :class:`NodeNames`)
    Compute nodes (hosts) of ``gpus_per_node`` GPUs (spec field, default: the
    HB domain). One node per HB domain: ``hb<domain>``, e.g. ``hb03``. Several
    nodes per domain: ``hb<domain>-n<node>``, ``node`` 0-based within the
    domain and zero-padded to the width of the largest (``hb003-n17``: the
    18th compute tray of NVL72 rack 3). NIC interfaces are always
    ``gpu<rank>-nic<plane>`` with ``rank`` the GPU's rank in its HB domain
    (= its rail), not its index on the node, so a GPU's interface name does not
    depend on the host size, names its rail, and node + interface still
    identify one GPU NIC: ``hb003-n17`` + ``gpu70-nic0`` is GPU ``hb003-gpu70``.

Site names
    A spec's ``naming:`` section (:mod:`topogen.spec.naming`) replaces any of
    these by the site's templates: :class:`GpuNames`, :class:`NodeNames` and the
    switch names of :mod:`topogen.fabric.clos` format and parse through them, so
    every export and every reader uses the same names.

Ports
    GPU NIC ports ``nic<plane>``; switch ports ``p<n>``, 1-based. Below the top
    tier ports ``p1 .. p<radix/2>`` face down and the rest up.
"""

from __future__ import annotations

import re

import numpy as np

from topogen.spec.naming import GPU_LIMIT, check_limits, first_duplicate, gpu_id, gpu_values, host_values, interface_values, node_id
from topogen.util.errors import InputError, Problem, show
from topogen.util.figures import plural

ISL_LINK = "leaf-leaf"  # the link name of an inter-switch link between the two leaves of a pair (design: leaf-pair)

# ASCII digits only ("p１" is no port), at most 9 of them (no 5,000-digit int()); used with fullmatch
GPU_RE = re.compile(r"hb([0-9]{1,9})-gpu([0-9]{1,9})", re.ASCII)
NIC_RE = re.compile(r"nic([0-9]{1,9})", re.ASCII)
PORT_RE = re.compile(r"p([0-9]{1,9})", re.ASCII)
PLAIN_RE = re.compile(r"[A-Za-z0-9._-]*")


def plain_switch_text(fabric) -> bool:
    """Every switch name and role is plain text: ASCII letters, digits, ``.``, ``_``, ``-``.

    Such text needs no escaping in a JSON string, an XML attribute or element,
    or a CSV field, so the template writers (topology.json, GraphML) paste it
    as is. GPU names (``hb<d>-gpu<r>``) and port names (``nic<n>``, ``p<n>``)
    are plain by construction. Names topogen generates always pass; a fabric
    whose names come from elsewhere and fail goes through the escaping writers.
    """
    return all(PLAIN_RE.fullmatch(s.name) and PLAIN_RE.fullmatch(s.role) for s in fabric.switches)


def width(count: int) -> int:
    """Digits needed to write ``0 .. count-1``."""
    return len(str(max(count - 1, 0)))


class GpuNames:
    """Names of the GPUs of a cluster; formats on demand so 1M GPUs cost no memory.

    With a ``naming.gpu`` template (``naming``, a :class:`topogen.spec.naming.NamingSpec`)
    the names are the template's; :meth:`of` builds the names of a spec.
    """

    def __init__(self, gpus: int, hb_domain: int, naming=None, gpus_per_node: int | None = None, su_domains: int = 0):
        self.gpus = gpus
        self.hb = hb_domain
        self.dw = max(2, width(gpus // hb_domain))
        self.rw = width(hb_domain)
        self.template = naming.gpu if naming is not None else None
        self.per_node = gpus_per_node or hb_domain
        self.su_domains = su_domains

    @classmethod
    def of(cls, spec) -> "GpuNames":
        """The GPU names of ``spec`` (its ``naming:`` template, else topogen's)."""
        return cls(spec.gpus, spec.hb_domain, spec.naming, spec.gpus_per_node, spec.units.domains)

    @property
    def extra_bytes(self) -> int:
        """Bytes a templated name may take beyond the default's (a bound for preallocating writers)."""
        return 0 if self.template is None else GPU_LIMIT

    def _values(self, ids) -> dict:
        return gpu_values(ids, self.hb, self.per_node, self.su_domains)

    def name(self, gpu: int) -> str:
        if self.template is not None:
            return self.template.format(**{k: int(v[0]) for k, v in self._values(np.asarray([gpu])).items()})
        d, r = divmod(int(gpu), self.hb)
        return f"hb{d:0{self.dw}d}-gpu{r:0{self.rw}d}"

    def many(self, gpus: np.ndarray) -> np.ndarray:
        """Vectorised names for an array of GPU ids (numpy unicode array)."""
        if self.template is not None:
            ids = np.asarray(gpus, dtype=np.int64)
            return self.template.many(self._values(ids), len(ids))
        d, r = np.divmod(np.asarray(gpus, dtype=np.int64), self.hb)
        dpart = np.char.zfill(d.astype(str), self.dw)
        rpart = np.char.zfill(r.astype(str), self.rw)
        return np.char.add(np.char.add(np.char.add("hb", dpart), "-gpu"), rpart)

    def parse(self, name: str) -> int | None:
        """GPU id of a GPU name (the template's, or canonical), or None."""
        if self.template is not None:
            v = self.template.parse(name)
            g = gpu_id(v, self.hb, self.per_node) if v is not None else None
            return g if g is not None and g < self.gpus and self.name(g) == name else None
        m = GPU_RE.fullmatch(name)
        if not m:
            return None
        d, r = int(m.group(1)), int(m.group(2))
        if d >= self.gpus // self.hb or r >= self.hb or name != f"hb{d:0{self.dw}d}-gpu{r:0{self.rw}d}":
            return None
        return d * self.hb + r

    def rank(self, name: str) -> int | None:
        """The rank in its HB domain (its rail) of the GPU named ``name``, or None."""
        g = self.parse(name)
        return None if g is None else g % self.hb


def nic_port(plane: int) -> str:
    return f"nic{plane}"


def switch_port(port: int) -> str:
    return f"p{port}"


def parse_port(text: str) -> tuple[str, int] | None:
    """``("nic", n)`` or ``("p", n)`` for a port name, else None."""
    m = NIC_RE.fullmatch(text)
    if m:
        return "nic", int(m.group(1))
    m = PORT_RE.fullmatch(text)
    if m:
        return "p", int(m.group(1))
    return None


class NodeNames:
    """Host names for inventory and scheduler files (NetBox devices, Slurm nodes).

    A node holds ``gpus_per_node`` consecutive GPUs of one HB domain (default:
    the whole domain), so node ``i`` (0-based over the cluster) holds GPUs
    ``i*g .. i*g+g-1`` and is node ``i mod (K/g)`` of domain ``i div (K/g)``.
    One node per domain keeps the name ``hb<domain>`` (DGX/HGX: the server),
    with the GPU names' padding, so ``<node>-<interface>`` reads
    ``<gpu name>-nic<plane>``. Smaller nodes (GB200 NVL72: 18 trays of 4;
    GH200: one superchip each) are ``hb<domain>-n<node>``. Interfaces are
    ``gpu<rank>-nic<plane>`` with the rank in the HB domain (rail), padded as
    in the GPU name, whatever the node size (see the module docstring).
    A spec's ``naming.host`` and ``naming.interface`` templates replace both
    (:meth:`of`).
    """

    def __init__(self, gpus: int, hb_domain: int, gpus_per_node: int | None = None, naming=None, su_domains: int = 0, homes: int = 1):
        g = GpuNames(gpus, hb_domain)
        self.domains = gpus // hb_domain
        self.hb = hb_domain
        self.per_node = gpus_per_node or hb_domain
        self.per_domain = hb_domain // self.per_node
        self.nodes = self.domains * self.per_domain
        self.dw, self.rw = g.dw, g.rw
        self.nw = width(self.per_domain)
        self.naming = naming
        self.template = naming.host if naming is not None else None
        self.iface = naming.interface if naming is not None else None
        self.su_domains = su_domains
        self.homes = homes

    @classmethod
    def of(cls, spec) -> "NodeNames":
        """The node names of ``spec`` (its ``naming:`` templates, else topogen's)."""
        return cls(spec.gpus, spec.hb_domain, spec.gpus_per_node, spec.naming, spec.units.domains, spec.homes)

    def name(self, node: int) -> str:
        """Name of node ``node`` (0-based over the cluster; the domain when one node per domain)."""
        if self.template is not None:
            return str(self.template.many(host_values(np.asarray([node]), self.per_domain, self.su_domains), 1)[0])
        d, i = divmod(int(node), self.per_domain)
        if self.per_domain == 1:
            return f"hb{d:0{self.dw}d}"
        return f"hb{d:0{self.dw}d}-n{i:0{self.nw}d}"

    def names(self) -> list[str]:
        """Every node name, in node order (domain-major)."""
        if self.template is not None:
            return self.template.many(host_values(np.arange(self.nodes), self.per_domain, self.su_domains), self.nodes).tolist()
        if self.per_domain == 1:
            return [f"hb{d:0{self.dw}d}" for d in range(self.domains)]
        tails = [f"-n{i:0{self.nw}d}" for i in range(self.per_domain)]
        return [f"hb{d:0{self.dw}d}{t}" for d in range(self.domains) for t in tails]

    def domain_names(self, domain: int) -> list[str]:
        """Names of the nodes of HB domain ``domain``, in order."""
        first = int(domain) * self.per_domain
        return [self.name(i) for i in range(first, first + self.per_domain)]

    def parse(self, name: str) -> int | None:
        """Node index of a host name, or None."""
        if self.template is not None:
            v = self.template.parse(name)
            if v is None:
                return None
            i = node_id(v, self.per_domain)
            return i if i is not None and i < self.nodes and self.name(i) == name else None
        m = re.fullmatch(r"hb([0-9]{1,9})(?:-n([0-9]{1,9}))?", name, re.ASCII)
        if not m or (m.group(2) is None) != (self.per_domain == 1):
            return None
        i = int(m.group(1)) * self.per_domain + int(m.group(2) or 0)
        return i if i < self.nodes and self.name(i) == name else None

    def interface(self, rank: int, plane: int) -> str:
        """Interface of the NIC port ``plane`` of the GPU of rank ``rank`` in its HB domain."""
        if self.iface is not None:
            return self.iface.format(**{k: int(v) for k, v in interface_values(int(rank), int(plane), self.homes, self.per_node).items()})
        return f"gpu{int(rank):0{self.rw}d}-nic{int(plane)}"


def site_switch_names(naming, entries: list[tuple[str, int, int, int, int, int]], defaults: list[str], arch: str = "") -> list[str]:
    """The compute fabric's switch names under the spec's ``naming:`` templates, checked.

    ``entries``: per switch ``(role, plane, group, pos, rail, home)``; ``defaults``:
    topogen's names, kept for roles without a template. ``{index}`` counts the
    switches of one role in one plane, from 0. Raises :class:`InputError` (the
    template's key, two switches given one name, or a name past a hostname's
    limits) so a bad template stops the build before anything is written.
    """
    if naming is None or not naming.switches:
        return defaults
    seen: dict[tuple[str, int], int] = {}
    out = list(defaults)
    whose: list = [None] * len(entries)
    for i, (role, plane, group, pos, rail, home) in enumerate(entries):
        t = naming.switch(role)
        if t is None:
            continue
        k = seen[(role, plane)] = seen.get((role, plane), -1) + 1
        out[i] = t.format(plane=plane, group=group, pos=pos, index=k, rail=rail, home=home)
        whose[i] = t
    problems: list[Problem] = []
    for role, t in naming.switches:
        mine = np.asarray([n for n, w in zip(out, whose) if w is t])
        if len(mine):
            check_limits(t, mine, "switch", problems)
    got = np.asarray(out)
    d = first_duplicate(got)
    if d is not None and not problems:
        i, j = d
        t = whose[j] or whose[i]

        def what(x: int) -> str:
            role, plane, group, pos, rail, home = entries[x]
            return f"{role} (plane {plane}, group {group}, pos {pos}, rail {rail}{f', home {home}' if home else ''})"

        fields = ", ".join("{" + f + "}" for f in ("site", "plane", "group", "pos", "index", "rail", "home"))
        where = f" of the {arch} fabric" if arch else ""
        problems.append(Problem(t.key, f"template {show(t.text)} gives {what(i)} and {what(j)}{where} the same name {show(out[i])}", f"add fields that tell them apart; valid fields: {fields}"))
    if problems:
        raise InputError(problems)
    return out


def device_names(fabric, ids: np.ndarray, switch_names: np.ndarray, gpu_names: GpuNames) -> np.ndarray:
    """Names of devices ``ids`` (GPUs formatted on the fly, switches looked up)."""
    n = fabric.gpus
    out = np.empty(len(ids), dtype=object)
    g = ids < n
    if g.any():
        out[g] = gpu_names.many(ids[g])
    if (~g).any():
        out[~g] = switch_names[ids[~g] - n]
    return out


def device_roles(fabric, ids: np.ndarray, switch_roles: np.ndarray) -> np.ndarray:
    out = np.full(len(ids), "gpu", dtype=object)
    s = ids >= fabric.gpus
    out[s] = switch_roles[ids[s] - fabric.gpus]
    return out


def units_note(spec, names: list[str], first: int, last: int) -> str:
    """The build note listing the leaf ports kept free (``reserved_leaf_ports``)."""
    where = "every SU's" if spec.units.every else "the last SU's" if spec.scalable_unit else "the last group's"
    ports = f"p{first}" if first == last else f"p{first}-p{last}"
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"reserved_leaf_ports {spec.reserved_leaf_ports}: port(s) {ports} of {plural(len(names), 'switch')} ({where}: {shown}) kept free for management / fabric-manager (UFM) links, {len(names) * (last - first + 1)} port(s) in all"
