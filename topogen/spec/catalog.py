"""Hardware catalogs: switch, transceiver, cable and NIC SKUs, and the media rules.

A catalog is a YAML file under ``templates/catalogs/`` (selected by its stem,
e.g. ``paper``, ``ndr-400g``, ``xdr-800g``) or any path. It is checked like the
spec: every problem is collected, each names its field path
(``switches[1].price_usd``), and the lot is raised as one
:class:`~topogen.util.errors.InputError` (exit code 2). Unknown keys are rejected
with the list of allowed ones.

Top-level keys: ``name``, ``description``, ``switches``, ``transceivers``,
``cables``, ``nics``, ``media``.

* ``switches[]``: ``sku``, ``description``, ``ports`` (list of
  ``{speed, radix, per_cage}``: the radix at each port speed, ``radix: any`` for
  a per-port priced model, ``per_cage`` ports sharing one cage: 2 on twin-port
  OSFP switches, or a 400G cage broken out as 2 x 200G), ``price_usd`` (per box) *or* ``price_per_port_usd`` (box =
  radix × it), ``power_w`` (chassis, without optics), ``price_source``,
  ``power_source``, ``interface_type`` (optional NetBox interface type of its
  ports, e.g. ``infiniband-ndr``; default from the speed).
* ``transceivers[]``: ``sku``, ``description``, ``form_factor``, ``speed``
  (Gb/s per port), ``reach_m`` (omit: no limit), ``ports_per_module`` (2 for
  twin-port modules), ``fiber``, ``price_usd``, ``power_w``, sources.
  A switch tier takes the first switch with a mode at the tier's downlink speed
  and radix; when its uplinks are faster (``link_speed: [200, 400]``) the same box
  also needs a mode at the uplink speed on the same cages (:meth:`Catalog.switch_at`).
* ``cables[]``: ``sku``, ``description``, ``kind`` (``dac``, ``acc``, ``aec``
  copper; ``fiber``), ``length_m``, ``speed`` (optional), ``links_per_cable``
  (2 for a splitter or breakout cable from one cage: the BOM counts one per
  cage, its legs dividing the cage's ``per_cage`` ports), ``price_usd``, ``power_w``, sources.
* ``nics[]`` (optional): ``sku``, ``description``, ``speed``, ``ports``,
  ``price_usd``, ``power_w``, sources, ``interface_type`` (as for switches).
  The first NIC at the link speed is counted once per GPU (per ``ports`` planes).
* Every SKU may name its ``manufacturer`` (NetBox manufacturer of the device
  types; default ``generic``).
* ``media[]``: rules, first match wins. Filters (omit = any): ``tier`` (link
  tier name ``gpu-leaf``/``leaf-spine``/``spine-core``/... or number, or a list),
  ``length`` (length class or list), ``switch`` (switch SKU or list), ``speed``,
  ``gpus_per_node`` (the spec's, or a list: a DGX H100's 8-GPU node takes
  twin-port modules in its 4 NIC cages), ``role`` (cable roles of the other networks:
  ``node``, ``target``, ``management-server``...; a rule with a role never matches a
  compute-fabric link: the DGX's storage port is a QSFP112 cage, its compute ports OSFP).
  Choice: ``transceiver`` (at every switch end), ``gpu_transceiver`` (GPU end of
  gpu-leaf links; default: ``transceiver``), ``cable`` (one SKU or a list of the
  same kind at several lengths: the shortest long enough is used), ``name``.
  A copper cable alone is a copper link (no transceivers).

Length classes are a property of the layout, not of the catalog; see
:func:`length_class`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from topogen.spec.cluster import available_catalogs
from topogen.spec.counts import MAX_TIERS, link_tier_name, tier_role
from topogen.spec.fields import Field, names
from topogen.spec.networks import ROLE_NAMES as NETWORK_ROLES
from topogen.spec.schema import schema_for
from topogen.spec.yamlfile import read_yaml
from topogen.util import resources
from topogen.util.errors import InputError, Problem, show, unknown_key
from topogen.util.inputs import CONTROL_RE

# length class -> longest cable it stands for (m): typical reaches of DAC/AEC copper and of multimode and single-mode optics
LENGTH_CLASSES: dict[str, int] = {
    "in-rack": 3,
    "in-row": 15,
    "cross-row": 30,
    "cross-hall": 50,
    "building": 100,
}
NOS_CHOICES = ("sonic", "cumulus", "eos", "mlnx-os")
ETHERNET_NOS = ("sonic", "cumulus", "eos")
COPPER_KINDS = ("dac", "acc", "aec", "cat6")
CABLE_KINDS = (*COPPER_KINDS, "fiber")

SKU = Field("sku", "ref", "Unique SKU of the item (letters, digits and . _ / + ( ) -; at most 80 characters).", required=True, example="MQM9790-NS2F")
DESCRIPTION = Field("description", "text", "One line on the item (workbook, NetBox comments).")
PRICE = Field("price_usd", "number", "Unit price in USD.", minimum=0, required=True, example=1500)
POWER = Field("power_w", "number", "Typical power in W.", default=0, minimum=0, example=17)
MANUFACTURER = Field("manufacturer", "text", "Who makes it (NetBox manufacturer).", default_doc="generic", example="NVIDIA")
INTERFACE_TYPE = Field("interface_type", "text", "NetBox interface type slug of its ports (lower-case letters, digits, '.' and '-').", example="infiniband-ndr")
SOURCES = (
    Field("price_source", "text", "Where the price comes from (a quote, a list price, a paper)."),
    Field("power_source", "text", "Where the power figure comes from (a data sheet, a paper)."),
)
CATALOG_FIELDS: tuple[Field, ...] = (
    Field("name", "text", "Catalog name as outputs show it.", default_doc="the file name", example="ndr-400g"),
    Field("description", "text", "One line on the catalog (topogen catalogs lists it)."),
    Field("switches", "list-of", "Switch SKUs; a fabric's tiers use the first that fits their radix and speed.", required=True, sub="switch"),
    Field("transceivers", "list-of", "Transceiver SKUs that media rules name.", sub="transceiver"),
    Field("cables", "list-of", "Cable SKUs (copper DAC/ACC/AEC or fiber), by length, that media rules name.", sub="cable"),
    Field("nics", "list-of", "NIC SKUs; GPU ports are priced with the first whose speed matches.", sub="nic"),
    Field("media", "list-of", "Media rules, first match wins: which transceivers and cables a link uses, by tier, length class, switch and speed.", required=True, sub="media"),
    Field("failure_rates", "section", "Monthly failure rates of the fabric's components, with their source, for the decision's expected failures per month; a component not given keeps topogen's sourced default (Alibaba HPN, SIGCOMM 2024; Llama 3).", sub="failure_rates"),
)
SWITCH_FIELDS: tuple[Field, ...] = (
    SKU,
    DESCRIPTION,
    Field("ports", "list-of", "Port modes: speed, radix (ports at that speed, or 'any') and ports per cage (2 for twin-port cages).", required=True, sub="port"),
    Field("price_usd", "number", "Unit price in USD (give this or price_per_port_usd).", minimum=0, example=30000),
    Field("price_per_port_usd", "number", "Price per port at the mode used, in USD (for a switch of any radix).", minimum=0, example=748),
    POWER,
    INTERFACE_TYPE,
    MANUFACTURER,
    Field("role", "choice", "compute: it may serve the GPU fabric; management: only the storage, in-band and OOB networks (never picked for the compute fabric or a search).", default="compute", choices=("compute", "management")),
    Field("uplink_ports", "int", "Fixed uplink ports beside the ports of its port modes (SN2201: 4 x 100G QSFP28 beside its 48 x 1G); an OOB switch's uplinks use them, and no more can be cabled.", default_doc="not stated: an OOB switch's uplinks are then assumed to be ports of their own, and the build says so", minimum=1, example=4),
    Field("nos", "choice-list", "Network operating systems it runs: sonic, cumulus, eos (Ethernet; topogen writes SONiC config_db.json for sonic, NVUE and NVIDIA Air files for cumulus, frr.conf for any), mlnx-os (an InfiniBand switch's own OS: subnet-manager files only). An empty list: none that topogen configures.", default_doc="every Ethernet format for an Ethernet or unstated switch, none for an infiniband-* interface_type", choices=NOS_CHOICES, example=["sonic", "cumulus"]),
    *SOURCES,
)
PORT_FIELDS: tuple[Field, ...] = (
    Field("speed", "int", "Port speed in Gb/s.", required=True, minimum=1, example=400),
    Field("radix", "radix-or-any", "Ports at this speed; 'any' for a switch priced per port of any radix.", required=True, example=64),
    Field("per_cage", "int", "Ports per cage: 1, or 2 when a cage runs as two ports through a breakout cable.", default=1, minimum=1, example=2),
)
TRANSCEIVER_FIELDS: tuple[Field, ...] = (
    SKU,
    DESCRIPTION,
    Field("form_factor", "text", "OSFP, QSFP112, ... ('any' in a paper model).", example="OSFP"),
    Field("speed", "int", "Speed per port in Gb/s.", required=True, minimum=1, example=800),
    Field("reach_m", "number", "Longest link it reaches, metres.", minimum=0, example=50),
    Field("ports_per_module", "int", "Links one module carries (2 for a twin-port module).", default=1, minimum=1, example=2),
    Field("fiber", "text", "Fiber type: multimode or single-mode.", example="multimode"),
    PRICE,
    POWER,
    MANUFACTURER,
    *SOURCES,
)
CABLE_FIELDS: tuple[Field, ...] = (
    SKU,
    DESCRIPTION,
    Field("kind", "choice", "dac, acc or aec (copper, no transceiver), cat6 (twisted pair, RJ45 ports) or fiber.", required=True, choices=CABLE_KINDS),
    Field("length_m", "number", "Length in metres.", required=True, minimum=0, example=3),
    Field("speed", "int", "Speed per link in Gb/s (copper).", minimum=1, example=400),
    Field("links_per_cable", "int", "Links one cable carries (a breakout cable: its legs).", default=1, minimum=1, example=2),
    PRICE,
    POWER,
    MANUFACTURER,
    *SOURCES,
)
NIC_FIELDS: tuple[Field, ...] = (
    SKU,
    DESCRIPTION,
    Field("speed", "int", "Speed per port in Gb/s.", required=True, minimum=1, example=400),
    Field("ports", "int", "Ports per NIC.", default=1, minimum=1, example=1),
    PRICE,
    POWER,
    INTERFACE_TYPE,
    MANUFACTURER,
    *SOURCES,
)
MEDIA_FIELDS: tuple[Field, ...] = (
    Field("name", "text", "What the rule stands for (outputs show it).", example="DAC in the rack"),
    Field("tier", "filter", "Link tiers it matches: gpu-leaf, leaf-spine, spine-core, ... or 1 to 6; one, a list or 'any'.", default_doc="any", item="tier"),
    Field("length", "filter", "Length classes it matches: in-rack, in-row, cross-row, cross-hall, building; one, a list or 'any'.", default_doc="any", item="choice", choices=tuple(LENGTH_CLASSES)),
    Field("switch", "filter", "Switch SKUs it matches; one, a list or 'any'.", default_doc="any", item="ref"),
    Field("speed", "filter", "Link speeds (Gb/s) it matches; one, a list or 'any'.", default_doc="any", item="int"),
    Field("gpus_per_node", "filter", "GPUs per node it matches (e.g. 8 for a DGX); one, a list or 'any'.", default_doc="any", item="int"),
    Field("role", "filter", "Cable roles of the storage, in-band and OOB networks it matches (node, node-storage, target, management-server, fabric-manager, nfs, ...); one, a list or 'any'. A rule with a role never matches a compute-fabric link.", default_doc="any", item="choice", choices=NETWORK_ROLES),
    Field("transceiver", "ref", "Transceiver SKU at the switch ends (optics).", example="OSFP-800G-2xSR4"),
    Field("gpu_transceiver", "ref", "Transceiver SKU at the GPU (NIC) end of gpu-leaf links, when it differs.", example="OSFP-400G-SR4"),
    Field("cable", "filter", "Cable SKUs, one or a list; the shortest that fits the routed length is used.", item="ref"),
)
FAILURE_FIELDS: tuple[Field, ...] = (
    Field("source", "text", "Where the rates come from (a fleet's tickets, a paper); shown beside them on the report. Required with any rate.", required=True, example="our fleet, 2025 RMA tickets"),
    Field("gpu_leaf_link", "number", "Fraction of GPU-leaf (NIC-ToR) links that fail per month, 0 to 1.", default_doc="0.00057 (Alibaba HPN, SIGCOMM 2024)", minimum=0, example=0.0006),
    Field("leaf_switch", "number", "Fraction of leaf switches that fail per month, 0 to 1.", default_doc="0.00051 (Alibaba HPN, SIGCOMM 2024)", minimum=0, example=0.0005),
    Field("spine_switch", "number", "Fraction of spine and core switches that fail per month, 0 to 1.", default_doc="the leaf rate of Alibaba HPN [assumed]", minimum=0, example=0.0005),
    Field("switch_link", "number", "Fraction of switch-to-switch links that fail per month, 0 to 1.", default_doc="the NIC-ToR link rate of Alibaba HPN [assumed]", minimum=0, example=0.0006),
    Field("nic", "number", "Fraction of NICs that fail per month, 0 to 1.", default_doc="2.4e-4 (Llama 3, arXiv 2407.21783)", minimum=0, example=0.00024),
)
FAILURE_KEYS = names(FAILURE_FIELDS)
TOP_KEYS = names(CATALOG_FIELDS)
SOURCE_KEYS = names(SOURCES)
ITEM_KEYS = ("manufacturer",)  # optional on every SKU: who makes it (NetBox manufacturer; default "generic")
SWITCH_KEYS = names(SWITCH_FIELDS)
PORT_KEYS = names(PORT_FIELDS)
TRANSCEIVER_KEYS = names(TRANSCEIVER_FIELDS)
CABLE_KEYS = names(CABLE_FIELDS)
NIC_KEYS = names(NIC_FIELDS)
INTERFACE_TYPE_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
RULE_KEYS = names(MEDIA_FIELDS)
TIER_NAMES = {link_tier_name(t): t for t in range(1, MAX_TIERS + 1)}
SKU_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+()-]{0,79}", re.ASCII)  # with fullmatch
MAX_WHOLE = 1_000_000  # speeds (Gb/s), radixes, ports per cage/module/cable
MAX_NUMBER = 10**12  # prices (USD), power (W), lengths (m)


def length_class(tier: int, domains: int) -> str:
    """Length class of the links of one link tier: the layout rule every phase shares.

    The rule (typical reaches, as published cost models use them):

    * gpu-leaf: ``in-row`` (<= 15 m). Rail-aligned leaves serve one rank of many
      HB domains, so they sit in network racks in the row of those domains
      (DGX SuperPOD layout); a single-tier rail-only rail switch sits in-row too.
      Exception: a cluster of one HB domain keeps its switches in or beside
      that domain's rack, ``in-rack`` (<= 3 m, copper where the catalog says so).
    * leaf-spine: ``cross-row`` (<= 30 m); spine-core: ``cross-hall`` (<= 50 m).
    * tiers 4 and up: ``building`` (<= 100 m), an assumption with no published figure.

    It depends on the link tier only (the two architectures place a tier alike),
    so both architectures of one spec are priced on the same cable lengths.
    """
    if tier == 1:
        return "in-rack" if domains == 1 else "in-row"
    return {2: "cross-row", 3: "cross-hall"}.get(tier, "building")


# --- catalog model ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PortMode:
    """One way to run a switch's ports: ``radix`` ports of ``speed`` Gb/s (None = any radix)."""

    speed: int
    radix: int | None
    per_cage: int


@dataclass(frozen=True, slots=True)
class SwitchSku:
    sku: str
    description: str
    ports: tuple[PortMode, ...]
    price_usd: float | None
    price_per_port_usd: float | None
    power_w: float
    price_source: str
    power_source: str
    interface_type: str = ""  # NetBox interface type of its ports (e.g. infiniband-ndr); "" = from the speed
    manufacturer: str = ""
    role: str = "compute"  # "management": only the other networks take it (never the compute fabric)
    uplink_ports: int = 0  # fixed uplink ports beside the port modes' ports (0: not stated)
    nos: tuple[str, ...] | None = None  # network operating systems it runs; None: not stated

    @property
    def compute(self) -> bool:
        return self.role == "compute"

    @property
    def infiniband(self) -> bool:
        """Its ports speak InfiniBand (an ``infiniband-*`` interface type, or only ``mlnx-os`` among its operating systems)."""
        return self.interface_type.startswith("infiniband-") or (self.nos is not None and "mlnx-os" in self.nos and not set(self.nos) & set(ETHERNET_NOS))

    @property
    def runs(self) -> tuple[str, ...]:
        """The Ethernet operating systems topogen may configure it for: the stated ones, every one when unstated, none on InfiniBand."""
        if self.infiniband:
            return ()
        if self.nos is None:
            return ETHERNET_NOS
        return tuple(x for x in self.nos if x in ETHERNET_NOS)

    def mode(self, speed: int, radix: int) -> PortMode | None:
        for m in self.ports:
            if m.speed == speed and (m.radix is None or m.radix == radix):
                return m
        return None

    def cage_mode(self, speed: int, cages: int | None) -> PortMode | None:
        """A port mode at ``speed`` over ``cages`` cages (the same box run at another speed); any for a per-port model."""
        for m in self.ports:
            if m.speed == speed and (m.radix is None or cages is None or m.radix == cages * m.per_cage):
                return m
        return None

    def unit_price(self, radix: int) -> float:
        """Price of one box; a per-port priced model costs ``radix × price_per_port_usd``."""
        if self.price_per_port_usd is not None:
            return _num(radix * self.price_per_port_usd)
        return self.price_usd  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Transceiver:
    sku: str
    description: str
    form_factor: str
    speed: int
    reach_m: float | None
    ports_per_module: int
    fiber: str
    price_usd: float
    power_w: float
    price_source: str
    power_source: str
    manufacturer: str = ""


@dataclass(frozen=True, slots=True)
class Cable:
    sku: str
    description: str
    kind: str
    length_m: float
    speed: int | None
    links_per_cable: int
    price_usd: float
    power_w: float
    price_source: str
    power_source: str
    manufacturer: str = ""

    @property
    def copper(self) -> bool:
        return self.kind in COPPER_KINDS


@dataclass(frozen=True, slots=True)
class Nic:
    sku: str
    description: str
    speed: int
    ports: int
    price_usd: float
    power_w: float
    price_source: str
    power_source: str
    interface_type: str = ""  # NetBox interface type of its ports (e.g. infiniband-ndr); "" = from the speed
    manufacturer: str = ""
    role: str = "compute"  # "management": only the other networks take it (never the compute fabric)

    @property
    def compute(self) -> bool:
        return self.role == "compute"


@dataclass(frozen=True, slots=True)
class MediaRule:
    """One media rule; ``None`` filters match anything."""

    index: int
    name: str
    tiers: tuple[int, ...] | None
    lengths: tuple[str, ...] | None
    switches: tuple[str, ...] | None
    speeds: tuple[int, ...] | None
    transceiver: str | None
    gpu_transceiver: str | None
    cables: tuple[str, ...]
    nodes: tuple[int, ...] | None = None  # gpus_per_node filter: the host's NIC cages (a DGX H100's twin-port cages)
    roles: tuple[str, ...] | None = None  # the other networks' cable roles (topogen.fabric.networks.ROLE_NAMES); None: any, compute links included

    def matches(self, tier: int, length: str, switch: str, speed: int, gpus_per_node: int | None = None, role: str | None = None) -> bool:
        """Whether the rule's filters take this link; ``role`` is a network cable's role (None: a compute-fabric link)."""
        return (
            (self.roles is None or role in self.roles)
            and (self.tiers is None or tier in self.tiers)
            and (self.lengths is None or length in self.lengths)
            and (self.switches is None or switch in self.switches)
            and (self.speeds is None or speed in self.speeds)
            and (self.nodes is None or gpus_per_node in self.nodes)
        )


@dataclass(frozen=True, slots=True)
class Media:
    """What one link tier of a fabric is built from (see :func:`topogen.bom.bill.link_media`).

    ``transceiver`` sits at every switch end; ``gpu_transceiver`` at the GPU end
    of gpu-leaf links; ``cable`` is the cable or fiber of each link (None when the
    catalog does not price cables, as in the paper's model).
    """

    tier: int
    name: str
    kind: str  # "optical" or "copper"
    length_class: str
    length_m: int
    transceiver: Transceiver | None
    gpu_transceiver: Transceiver | None
    cable: Cable | None
    rule: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "link": link_tier_name(self.tier),
            "media": self.name,
            "kind": self.kind,
            "length_class": self.length_class,
            "length_m": self.length_m,
            "switch_transceiver": self.transceiver.sku if self.transceiver else None,
            "gpu_transceiver": self.gpu_transceiver.sku if self.gpu_transceiver else None,
            "cable": self.cable.sku if self.cable else None,
        }


@dataclass(frozen=True, slots=True)
class Catalog:
    name: str
    label: str  # how errors name it: the catalog name or the path given
    path: str
    description: str
    switches: tuple[SwitchSku, ...]
    transceivers: dict[str, Transceiver]
    cables: dict[str, Cable]
    nics: tuple[Nic, ...]
    rules: tuple[MediaRule, ...]
    sha256: str = ""  # of the catalog file's bytes: outputs name the exact catalog they were priced with
    failure_rates: tuple[tuple[str, float], ...] = ()  # (failure_rates key, fraction per month) the catalog states, in FAILURE_FIELDS' order
    failure_source: str = ""  # where the catalog's failure rates come from

    def switch_for(self, speed: int, radix: int) -> tuple[SwitchSku, PortMode] | None:
        """The first compute switch (catalog order) that runs ``radix`` ports at ``speed``."""
        for sw in self.switches:
            m = sw.mode(speed, radix) if sw.compute else None
            if m is not None:
                return sw, m
        return None

    def switch_at(self, spec, tier: int, top: int | None = None) -> tuple[SwitchSku, PortMode] | None:
        """The switch of ``spec``'s switch tier ``tier``: its radix at its downlink speed.

        Below the top (``tier < top``) uplinks ``f`` times faster than the
        downlinks need a port mode of the same box at the uplink speed, its
        cages the same (64 x 400G cages run as 128 x 200G broken out and as
        64 x 400G): the port modes decide which physical switch serves the tier.
        """
        speed_at = getattr(spec, "speed_at", lambda t: spec.link_speed)
        down, r = speed_at(tier), spec.radix_at(tier) if hasattr(spec, "radix_at") else spec.radix
        up = speed_at(tier + 1)
        if top is None or tier >= top or up == down:
            return self.switch_for(down, r)
        for sw in self.switches:
            m = sw.mode(down, r) if sw.compute else None
            if m is not None and sw.cage_mode(up, r // m.per_cage if m.radix is not None else None) is not None:
                return sw, m
        return None

    def nic_for(self, speed: int) -> Nic | None:
        return next((n for n in self.nics if n.speed == speed), None)

    def supply(self, management: bool = False) -> str:
        """What switches the catalog offers the compute fabric (``management``: every switch), for hints: ``400G: radix 64; 800G: radix 64, 144``."""
        by_speed: dict[int, list[str]] = {}
        for sw in self.switches:
            for m in sw.ports if management or sw.compute else ():
                by_speed.setdefault(m.speed, []).append("any" if m.radix is None else str(m.radix))
        parts = []
        for speed in sorted(by_speed):
            fixed = sorted({int(r) for r in by_speed[speed] if r != "any"})
            kinds = [f"radix {', '.join(map(str, fixed))}"] if fixed else []
            if "any" in by_speed[speed]:
                kinds.append("any radix")
            parts.append(f"{speed}G: {' or '.join(kinds)}")
        return "; ".join(parts)


# --- loading ------------------------------------------------------------------------


def resolve_catalog_path(ref: str):
    """A catalog reference is the name of a bundled catalog (``topogen catalogs``) or a path to a YAML file."""
    return resources.template_path("catalogs", ref) or Path(ref)


def load_catalog(ref: str) -> Catalog:
    """Read and check a catalog (name or path); raise InputError listing every problem."""
    path = resolve_catalog_path(ref)
    label = ref
    missing = Problem("catalog", f"catalog {show(ref)} does not exist{resources.did_you_mean(ref, available_catalogs())}", f"use one of: {', '.join(available_catalogs())}, or a path to a catalog .yaml file")
    data = read_yaml(path, "catalog", f"catalog {str(path)!r}", missing)
    cat = parse_catalog(data, label=label, path=str(path), default_name=Path(path.name).stem)
    return replace(cat, sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def parse_catalog(data: Any, label: str, path: str = "", default_name: str = "catalog") -> Catalog:
    """Check a catalog mapping (already parsed from YAML) and build a :class:`Catalog`."""
    r = _Reader(label)
    if not isinstance(data, dict):
        r.add("", f"the catalog holds a {type(data).__name__}, not a mapping", f"write keys from: {', '.join(TOP_KEYS)}")
        raise InputError(r.problems)
    r.unknown(data, TOP_KEYS, "")
    name = r.text(data, "name", "", default=default_name)
    description = r.text(data, "description", "", default="")

    switches = tuple(sw for i, item in enumerate(r.items(data, "switches", required=True)) if (sw := _switch(r, item, f"switches[{i}]")))
    transceivers = [t for i, item in enumerate(r.items(data, "transceivers")) if (t := _transceiver(r, item, f"transceivers[{i}]"))]
    cables = [c for i, item in enumerate(r.items(data, "cables")) if (c := _cable(r, item, f"cables[{i}]"))]
    nics = tuple(n for i, item in enumerate(r.items(data, "nics")) if (n := _nic(r, item, f"nics[{i}]")))

    seen: dict[str, str] = {}
    for kind, objs in (("switches", switches), ("transceivers", transceivers), ("cables", cables), ("nics", nics)):
        for i, o in enumerate(objs):
            if o.sku in seen:
                r.add(f"{kind}[{i}].sku", f"sku {show(o.sku)} is already used by {seen[o.sku]}", "give every SKU a unique name")
            else:
                seen[o.sku] = f"{kind}[{i}]"
    tx = {t.sku: t for t in transceivers}
    cb = {c.sku: c for c in cables}
    sw_skus = {s.sku for s in switches}
    declared = {str(item.get("sku")) for key in ("switches", "transceivers", "cables") for item in _raw_items(data, key)}
    rules = tuple(x for i, item in enumerate(r.items(data, "media", required=True)) if (x := _rule(r, item, f"media[{i}]", i, tx, cb, sw_skus, declared)))
    rates, rates_source = _failure_rates(r, data.get("failure_rates"))
    if r.problems:
        raise InputError(r.problems)
    catalog = Catalog(name, label, path, description, switches, tx, cb, nics, rules, failure_rates=rates, failure_source=rates_source)
    problems = coverage_problems(catalog)
    if problems:
        raise InputError(problems)
    return catalog


def coverage_problems(catalog: Catalog) -> list[Problem]:
    """A problem for each switch port mode whose speed no media rule can build at any length.

    A port mode offers links at its speed, so some rule must build them: one
    that matches the switch and speed on some link tier, with transceivers at
    that speed and cables whose legs fit the cage. Without this check a catalog
    offering, say, a 200G mode with only 400G optics fails only when a build at
    200G reaches the BOM. Gaps at some lengths only (no media for runs beyond
    50 m) are not refused here: a build whose runs fall in them is refused with
    the run named (:mod:`topogen.bom.media`); :func:`coverage_gaps` lists them.
    """
    problems: list[Problem] = []
    for (i, j), missing in coverage_gaps(catalog).items():
        if len(missing) < len(LENGTH_CLASSES):
            continue
        sw, mode = catalog.switches[i], catalog.switches[i].ports[j]
        problems.append(
            Problem(
                f"catalog {catalog.label}: switches[{i}].ports[{j}]",
                f"{sw.sku} offers {mode.speed}G ports, but no media rule builds {mode.speed}G links on it at any length ({_why_not(catalog, sw, mode)})",
                f"add a media rule with speed: {mode.speed} (transceivers at {mode.speed}G, or a {mode.speed}G copper cable), or remove this port mode",
            )
        )
    return problems


def coverage_gaps(catalog: Catalog) -> dict[tuple[int, int], list[str]]:
    """For each switch port mode (``(switch index, mode index)``), the length classes no rule builds its links in.

    A class is covered when a rule matching the switch and the mode's speed on
    some link tier builds links up to the class's longest cable: transceivers at
    that speed reaching it, a cable at least that long, legs that fit the cage.
    ``gpus_per_node`` rules are left aside (a rule for any node must exist
    anyway). Modes with no gap are left out.
    """
    out: dict[tuple[int, int], list[str]] = {}
    for i, sw in enumerate(catalog.switches):
        for j, mode in enumerate(sw.ports):
            missing = [c for c, need_m in LENGTH_CLASSES.items() if not _covered(catalog, sw, mode, c, need_m)]
            if missing:
                out[(i, j)] = missing
    return out


def _why_not(catalog: Catalog, sw: SwitchSku, mode: PortMode) -> str:
    """Why no rule builds ``mode``'s links: the first matching rule's first problem, or that none matches."""
    for rule in catalog.rules:
        for tier in rule.tiers or range(1, MAX_TIERS + 1):
            for c, need_m in LENGTH_CLASSES.items():
                if rule.nodes is None and rule.matches(tier, c, sw.sku, mode.speed):
                    problems = _rule_media(catalog, rule, tier, c, need_m, sw, mode, mode.speed)[1]
                    return f"{problems[0].path.removeprefix(f'catalog {catalog.label}: ')}: {problems[0].message}"
    return f"no rule matches {sw.sku} at {mode.speed}G"


def _covered(catalog: Catalog, sw: SwitchSku, mode: PortMode, length: str, need_m: int) -> bool:
    """Whether some rule builds ``mode``'s links of class ``length`` on ``sw`` on some link tier."""
    for rule in catalog.rules:
        if rule.nodes is not None:
            continue  # only for some hosts' NIC cages: another rule must serve the rest
        for tier in rule.tiers or range(1, MAX_TIERS + 1):
            if rule.matches(tier, length, sw.sku, mode.speed):
                if not _rule_media(catalog, rule, tier, length, need_m, sw, mode, mode.speed)[1]:
                    return True
    return False



# A valid example per whole-number catalog field, for the hint of a bad value.
_INT_EXAMPLES = {
    "speed": "e.g. 400 (Gb/s)",
    "radix": "e.g. 64 (ports at that speed), or any",
    "per_cage": "e.g. 1, or 2 when a cage runs as two ports through a breakout cable",
    "ports_per_module": "e.g. 1, or 2 for a twin-port module",
    "links_per_cable": "e.g. 1, or 2 for a breakout cable with two legs",
    "ports": "e.g. 1, or 2 for a dual-port NIC",
    "uplink_ports": "e.g. 4 (an SN2201's 4 x 100G QSFP28 uplinks)",
}

class _Reader:
    """Typed field access that records a Problem (with its path) instead of raising."""

    def __init__(self, label: str):
        self.label = label
        self.problems: list[Problem] = []

    def _where(self, path: str) -> str:
        return f"catalog {self.label}" + (f": {path}" if path else "")

    def add(self, path: str, message: str, hint: str = "") -> None:
        self.problems.append(Problem(self._where(path), message, hint))

    def unknown(self, d: dict, allowed: tuple[str, ...], path: str) -> None:
        for key in sorted(str(k) for k in d if k not in allowed):
            p = unknown_key(key, allowed, "")
            self.problems.append(Problem(self._where(_join(path, key)), p.message, p.hint, suggests=self._where(_join(path, p.suggests)) if p.suggests else ""))

    def items(self, d: dict, key: str, required: bool = False) -> list[dict]:
        raw = d.get(key)
        if raw is None:
            if required:
                self.add(key, f"{key} is required", f"give a list of {key} entries")
            return []
        if not isinstance(raw, list) or (required and not raw):
            self.add(key, f"{key} must be a non-empty list, got {show(raw)}" if required else f"{key} must be a list, got {show(raw)}", f"write '{key}:' followed by '- ...' entries")
            return []
        out = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                self.add(f"{key}[{i}]", f"entry must be a mapping, got {show(item)}", "write 'key: value' fields under the '- '")
                out.append(None)
            else:
                out.append(item)
        return out

    def text(self, d: dict, key: str, path: str, default: str | None = None) -> str | None:
        raw = d.get(key)
        if raw is None:
            if default is None:
                self.add(_join(path, key), f"{key} is required", "give a text value")
            return default
        if not isinstance(raw, str) or not raw.strip():
            self.add(_join(path, key), f"{key} must be non-empty text, got {show(raw)}", "give a text value")
            return default
        bad = CONTROL_RE.search(raw)
        if bad:
            self.add(_join(path, key), f"{key} contains the control character U+{ord(bad.group()):04X} at position {bad.start() + 1}: {show(raw)}", "write it on one line, without tabs or control characters (it goes into CSV, XML, DOT and Slurm files)")
            return default
        return raw

    def sku(self, d: dict, path: str) -> str | None:
        raw = self.text(d, "sku", path)
        if raw is not None and not SKU_RE.fullmatch(raw):
            self.add(_join(path, "sku"), f"sku {show(raw)} is not a valid SKU", "use letters, digits and . _ / + ( ) -, starting with a letter or digit, at most 80 characters")
            return None
        return raw

    def number(self, d: dict, key: str, path: str, default: float | None = None, required: bool = False, positive: bool = False) -> float | None:
        """A number >= 0 (> 0 when ``positive``); ``None`` (with a Problem) when bad."""
        raw = d.get(key)
        if raw is None:
            if required:
                self.add(_join(path, key), f"{key} is required", "give a number")
            return default
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw != raw or raw in (float("inf"), float("-inf")):
            self.add(_join(path, key), f"{key} must be a number, got {show(raw)}", "write a plain number such as 1500 or 17.5")
            return None
        if raw > MAX_NUMBER:
            self.add(_join(path, key), f"{key} must be at most {MAX_NUMBER:,}, got {show(raw)}", "prices in USD, power in W, lengths in m")
            return None
        if raw < 0 or (positive and raw == 0):
            what = "positive" if positive else "0 or more"
            self.add(_join(path, key), f"{key} must be {what}, got {show(raw)}", "prices, power and lengths cannot be negative")
            return None
        return _num(raw)

    def integer(self, d: dict, key: str, path: str, default: int | None = None, required: bool = False) -> int | None:
        raw = d.get(key)
        if raw is None:
            if required:
                self.add(_join(path, key), f"{key} is required", "give a positive whole number")
            return default
        if isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
            self.add(_join(path, key), f"{key} must be a positive whole number, got {show(raw)}", _INT_EXAMPLES.get(key, "e.g. 1"))
            return None
        if raw > MAX_WHOLE:
            self.add(_join(path, key), f"{key} must be at most {MAX_WHOLE:,}, got {show(raw)}", "speeds in Gb/s, radixes and port counts")
            return None
        return raw


def _failure_rates(r: _Reader, d: Any) -> tuple[tuple[tuple[str, float], ...], str]:
    """The ``failure_rates`` section: rates (fractions per month, 0 to 1) the catalog states, and their source."""
    if d is None:
        return (), ""
    if not isinstance(d, dict):
        r.add("failure_rates", f"failure_rates must be a mapping, got {show(d)}", f"keys: {', '.join(FAILURE_KEYS)}, e.g. {{source: 'our fleet, 2025', leaf_switch: 0.0005}}")
        return (), ""
    r.unknown(d, FAILURE_KEYS, "failure_rates")
    rates = []
    for key in FAILURE_KEYS[1:]:
        if key not in d:
            continue
        x = r.number(d, key, "failure_rates")
        if x is not None and x > 1:
            r.add(f"failure_rates.{key}", f"{key} is a fraction of the components failing per month, 0 to 1, got {show(d[key])}", "e.g. 0.00051 for 0.051 % a month")
        elif x is not None:
            rates.append((key, x))
    source = r.text(d, "source", "failure_rates", default="")
    if "source" not in d:
        r.add("failure_rates.source", "source is required: the report shows where each rate comes from", "e.g. source: 'our fleet, 2025 RMA tickets'")
    if not rates and "source" in d and not any(k in d for k in FAILURE_KEYS[1:]):
        r.add("failure_rates", "failure_rates gives a source but no rate", f"give one or more of {', '.join(FAILURE_KEYS[1:])}")
    return tuple(rates), source or ""


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _num(x: float) -> float:
    """Whole numbers as int (exact JSON, no ``.0``), others as float."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def _sources(r: _Reader, d: dict, path: str) -> tuple[str, str]:
    return r.text(d, "price_source", path, default="") or "", r.text(d, "power_source", path, default="") or ""


def _interface_type(r: _Reader, d: dict, path: str) -> str:
    """An optional NetBox interface type slug (``infiniband-ndr``, ``400gbase-x-osfp``...)."""
    value = r.text(d, "interface_type", path, default="") or ""
    if value and not INTERFACE_TYPE_RE.match(value):
        r.add(_join(path, "interface_type"), f"{value!r} is not a NetBox interface type slug", "lower-case letters, digits, '.' and '-', e.g. infiniband-ndr or 400gbase-x-osfp")
    return value


def _manufacturer(r: _Reader, d: dict, path: str) -> str:
    return r.text(d, "manufacturer", path, default="") or ""


def _switch(r: _Reader, d: dict | None, path: str) -> SwitchSku | None:
    if d is None:
        return None
    n0 = len(r.problems)
    r.unknown(d, SWITCH_KEYS, path)
    sku = r.sku(d, path)
    modes: list[PortMode] = []
    raw_ports = d.get("ports")
    if not isinstance(raw_ports, list) or not raw_ports:
        r.add(_join(path, "ports"), f"ports must be a non-empty list, got {show(raw_ports)}", "e.g. ports: [{speed: 400, radix: 64, per_cage: 2}]")
    else:
        for i, pm in enumerate(raw_ports):
            pp = f"{path}.ports[{i}]"
            if not isinstance(pm, dict):
                r.add(pp, f"entry must be a mapping, got {show(pm)}", "e.g. {speed: 400, radix: 64, per_cage: 2}")
                continue
            r.unknown(pm, PORT_KEYS, pp)
            speed = r.integer(pm, "speed", pp, required=True)
            radix: int | None
            if pm.get("radix") == "any":
                radix = None
            else:
                radix = r.integer(pm, "radix", pp, required=True)
                if radix is None:
                    continue
            per_cage = r.integer(pm, "per_cage", pp, default=1)
            if speed is None or per_cage is None:
                continue
            if radix is not None and radix % per_cage:
                r.add(_join(pp, "per_cage"), f"radix {radix} is not a whole number of cages of {per_cage} ports", "per_cage must divide radix")
                continue
            modes.append(PortMode(speed, radix, per_cage))
    has_box, has_port = "price_usd" in d, "price_per_port_usd" in d
    if has_box == has_port:
        r.add(_join(path, "price_usd"), "give exactly one of price_usd (per box) and price_per_port_usd", "price_per_port_usd prices a box as radix × it (the paper's model)")
    price = r.number(d, "price_usd", path)
    per_port = r.number(d, "price_per_port_usd", path)
    if any(m.radix is None for m in modes) and has_box and not has_port:
        r.add(_join(path, "price_usd"), "a switch with 'radix: any' must be priced per port", "use price_per_port_usd")
    power = r.number(d, "power_w", path, default=0)
    description = r.text(d, "description", path, default="") or ""
    src = _sources(r, d, path)
    if len(r.problems) > n0:
        return None
    itype, maker = _interface_type(r, d, path), _manufacturer(r, d, path)
    role = d.get("role", "compute")
    if role not in ("compute", "management"):
        r.add(_join(path, "role"), f"unknown switch role {show(role)}", "valid roles: compute (the GPU fabric may use it), management (only the storage, in-band and OOB networks)")
    uplinks = r.integer(d, "uplink_ports", path, default=0)
    nos = _nos(r, d, path)
    if len(r.problems) > n0:
        return None
    return SwitchSku(sku, description, tuple(modes), price, per_port, power, *src, itype, maker, role, uplinks or 0, nos)  # type: ignore[arg-type]


def _nos(r: _Reader, d: dict, path: str) -> tuple[str, ...] | None:
    """The optional ``nos`` list: known operating systems, each once."""
    if "nos" not in d:
        return None
    raw = d["nos"]
    hint = f"a list of {', '.join(NOS_CHOICES)} (or [] for none topogen configures), e.g. nos: [sonic, cumulus]"
    if not isinstance(raw, list):
        r.add(_join(path, "nos"), f"nos must be a list, got {show(raw)}", hint)
        return None
    bad = [x for x in raw if x not in NOS_CHOICES]
    if bad:
        r.add(_join(path, "nos"), f"unknown network operating system {show(bad[0])}", hint)
        return None
    if len(set(raw)) != len(raw):
        r.add(_join(path, "nos"), f"nos lists an operating system twice: {show(raw)}", hint)
        return None
    return tuple(raw)


def _transceiver(r: _Reader, d: dict | None, path: str) -> Transceiver | None:
    if d is None:
        return None
    n0 = len(r.problems)
    r.unknown(d, TRANSCEIVER_KEYS, path)
    sku = r.sku(d, path)
    speed = r.integer(d, "speed", path, required=True)
    reach = r.number(d, "reach_m", path, positive=True)
    ppm = r.integer(d, "ports_per_module", path, default=1)
    price = r.number(d, "price_usd", path, required=True)
    power = r.number(d, "power_w", path, default=0)
    description = r.text(d, "description", path, default="") or ""
    form = r.text(d, "form_factor", path, default="") or ""
    fiber = r.text(d, "fiber", path, default="") or ""
    src = _sources(r, d, path)
    if len(r.problems) > n0:
        return None
    return Transceiver(sku, description, form, speed, reach, ppm, fiber, price, power, *src, _manufacturer(r, d, path))  # type: ignore[arg-type]


def _cable(r: _Reader, d: dict | None, path: str) -> Cable | None:
    if d is None:
        return None
    n0 = len(r.problems)
    r.unknown(d, CABLE_KEYS, path)
    sku = r.sku(d, path)
    kind = d.get("kind")
    if kind not in CABLE_KINDS:
        r.add(_join(path, "kind"), f"unknown cable kind {show(kind)}", f"valid kinds: {', '.join(CABLE_KINDS)}")
    length = r.number(d, "length_m", path, required=True, positive=True)
    speed = r.integer(d, "speed", path)
    lpc = r.integer(d, "links_per_cable", path, default=1)
    price = r.number(d, "price_usd", path, required=True)
    power = r.number(d, "power_w", path, default=0)
    description = r.text(d, "description", path, default="") or ""
    src = _sources(r, d, path)
    if len(r.problems) > n0:
        return None
    return Cable(sku, description, kind, length, speed, lpc, price, power, *src, _manufacturer(r, d, path))  # type: ignore[arg-type]


def _nic(r: _Reader, d: dict | None, path: str) -> Nic | None:
    if d is None:
        return None
    n0 = len(r.problems)
    r.unknown(d, NIC_KEYS, path)
    sku = r.sku(d, path)
    speed = r.integer(d, "speed", path, required=True)
    ports = r.integer(d, "ports", path, default=1)
    price = r.number(d, "price_usd", path, required=True)
    power = r.number(d, "power_w", path, default=0)
    description = r.text(d, "description", path, default="") or ""
    src = _sources(r, d, path)
    if len(r.problems) > n0:
        return None
    itype, maker = _interface_type(r, d, path), _manufacturer(r, d, path)
    if len(r.problems) > n0:
        return None
    return Nic(sku, description, speed, ports, price, power, *src, itype, maker)  # type: ignore[arg-type]


def _raw_items(data: dict, key: str) -> list[dict]:
    raw = data.get(key)
    return [x for x in raw if isinstance(x, dict)] if isinstance(raw, list) else []


def _as_list(raw: Any) -> list:
    return raw if isinstance(raw, list) else [raw]


class _Bad:
    """A rejected filter value: the message and hint to report."""

    def __init__(self, message: str, hint: str):
        self.message, self.hint = message, hint


_BROKEN = object()  # a reference to an entry that is itself invalid (already reported)


def _sku_ref(known, declared: set[str], kind: str, plural: str):
    """Parser for a SKU reference: the SKU, _BROKEN for a declared-but-invalid entry, or _Bad."""

    def parse(sku):
        if sku in known:
            return sku
        if sku in declared:
            return _BROKEN
        return _Bad(f"unknown {kind} SKU {show(sku)}", f"{plural} in this catalog: {', '.join(sorted(known)) or 'none'}")

    return parse


def _filter(r: "_Reader", d: dict, key: str, path: str, parse, any_means_all: bool = True) -> tuple[list | None, bool]:
    """A media rule's list field: ``None`` when absent (or ``any``), else the accepted values.

    Returns (values, broken): rejected values are reported at ``path.key``;
    ``broken`` says a value referred to an invalid entry reported elsewhere.
    """
    raw = d.get(key)
    if raw is None or (any_means_all and raw == "any"):
        return None, False
    out, broken = [], False
    for x in _as_list(raw):
        v = parse(x)
        if v is _BROKEN:
            broken = True
        elif isinstance(v, _Bad):
            r.add(_join(path, key), v.message, v.hint)
        else:
            out.append(v)
    return out, broken


def _rule(r: _Reader, d: dict | None, path: str, index: int, tx: dict[str, Transceiver], cb: dict[str, Cable], sw_skus: set[str], declared: set[str]) -> MediaRule | None:
    """One media rule. A reference to a SKU whose own entry is bad is not reported again."""
    if d is None:
        return None
    n0 = len(r.problems)
    broken = False
    r.unknown(d, RULE_KEYS, path)
    def tier(t):
        if isinstance(t, int) and not isinstance(t, bool) and 1 <= t <= MAX_TIERS:
            return t
        if t in TIER_NAMES:
            return TIER_NAMES[t]
        return _Bad(f"unknown link tier {show(t)}", f"valid tiers: {', '.join(TIER_NAMES)} (or 1 to {MAX_TIERS}, or any)")

    def length(x):
        if x in LENGTH_CLASSES:
            return x
        return _Bad(f"unknown length class {show(x)}", f"valid classes: {', '.join(f'{k} (<= {v} m)' for k, v in LENGTH_CLASSES.items())}")

    def speed(x):
        if isinstance(x, int) and not isinstance(x, bool) and x > 0:
            return x
        return _Bad(f"speed must be a positive whole number (Gb/s), got {show(x)}", "e.g. speed: 400")

    def per_node(x):
        if isinstance(x, int) and not isinstance(x, bool) and x > 0:
            return x
        return _Bad(f"gpus_per_node must be a positive whole number, got {x!r}", "e.g. gpus_per_node: 8 (a DGX H100)")

    tiers, _ = _filter(r, d, "tier", path, tier)
    lengths, _ = _filter(r, d, "length", path, length)
    switches, broken_sw = _filter(r, d, "switch", path, _sku_ref(sw_skus, declared, "switch", "switches"))
    speeds, _ = _filter(r, d, "speed", path, speed)
    nodes, _ = _filter(r, d, "gpus_per_node", path, per_node)

    def role(x):
        if x in NETWORK_ROLES:
            return x
        return _Bad(f"unknown cable role {show(x)}", f"valid roles: {', '.join(NETWORK_ROLES)} (or any)")

    roles, _ = _filter(r, d, "role", path, role)
    broken = broken or broken_sw
    refs: dict[str, str | None] = {}
    for key in ("transceiver", "gpu_transceiver"):
        s = d.get(key)
        if s is not None and s not in tx and s in declared:
            broken, s = True, None
        elif s is not None and s not in tx:
            r.add(_join(path, key), f"unknown transceiver SKU {show(s)}", f"transceivers in this catalog: {', '.join(sorted(tx)) or 'none'}")
            s = None
        refs[key] = s
    cables, broken_cb = _filter(r, d, "cable", path, _sku_ref(cb, declared, "cable", "cables"), any_means_all=False)
    cables = cables or []
    broken = broken or broken_cb
    if len(r.problems) > n0 or broken:
        return None
    if refs["transceiver"] is None and not cables:
        r.add(path, "a media rule needs a transceiver, a cable, or both", "e.g. transceiver: <sku> for optics, cable: <sku> for copper")
        return None
    if refs["gpu_transceiver"] is not None and refs["transceiver"] is None:
        r.add(_join(path, "gpu_transceiver"), "gpu_transceiver needs a transceiver for the switch end", "add transceiver: <sku>")
        return None
    if refs["gpu_transceiver"] is not None and tiers is not None and 1 not in tiers:
        r.add(_join(path, "gpu_transceiver"), "gpu_transceiver applies to gpu-leaf links only, but this rule does not match tier gpu-leaf", "remove it or add gpu-leaf to tier")
        return None
    kinds = sorted({cb[s].copper for s in cables})
    if len(kinds) > 1:
        r.add(_join(path, "cable"), "a rule's cables must be all copper or all fiber", "split copper and fiber into separate rules")
        return None
    if cables and cb[cables[0]].copper and refs["transceiver"] is not None:
        r.add(_join(path, "transceiver"), f"copper cable {show(cables[0])} needs no transceiver", "drop transceiver for a copper link, or use a fiber cable")
        return None
    name = r.text(d, "name", path, default="") or ""
    return MediaRule(index, name, _tuple(tiers), _tuple(lengths), _tuple(switches), _tuple(speeds), refs["transceiver"], refs["gpu_transceiver"], tuple(sorted(cables, key=lambda s: (cb[s].length_m, s))), _tuple(nodes), _tuple(roles))


def _tuple(x: list | None) -> tuple | None:
    return None if x is None else tuple(x)


# --- catalog against a spec -----------------------------------------------------------


def resolve_media(catalog: Catalog, tier: int, domains: int, switch: SwitchSku, mode: PortMode, speed: int, gpus_per_node: int | None = None, length: str | None = None, skip_unfit: bool = False, run_m: float = 0, breakouts: bool = True, role: str | None = None) -> tuple[Media | None, list[Problem]]:
    """The media of one link tier, or ``None`` and the problems that prevent it.

    ``length`` is the length class of the cables (default: the tier's class,
    :func:`length_class`). The first matching rule decides; with
    ``skip_unfit`` a matching rule that cannot build these cables (reach,
    cable length) gives way to the next matching one, as when media are
    chosen per cable by its length. ``run_m``, a cable's own length, must be
    reached too where it exceeds the class (a run beyond the last class).
    ``breakouts=False`` skips rules whose cables carry several links (splitters):
    the other networks cable one port to one port. ``role``: the other networks' cable
    role (rules with a ``role`` filter match those only; None: a compute-fabric link).
    """
    length = length or length_class(tier, domains)
    need_m = LENGTH_CLASSES[length]
    link = link_tier_name(tier)
    where = f"catalog {catalog.label}: media"
    first: list[Problem] | None = None
    for rule in (x for x in catalog.rules if x.matches(tier, length, switch.sku, speed, gpus_per_node, role)):
        if not breakouts and any(catalog.cables[c].links_per_cable > 1 for c in rule.cables):
            continue
        m, problems = _rule_media(catalog, rule, tier, length, need_m, switch, mode, speed, run_m)
        if not problems:
            return m, []
        if not skip_unfit:
            return None, problems
        first = first or problems
    if first is not None:
        return None, first
    return None, [Problem(where, f"no media rule for link tier {link} ({length}, <= {need_m} m) at {speed}G on switch {switch.sku}", f"add a media rule matching tier: {link}")]


def _rule_media(catalog: Catalog, rule: MediaRule, tier: int, length: str, class_m: int, switch: SwitchSku, mode: PortMode, speed: int, run_m: float = 0) -> tuple[Media | None, list[Problem]]:
    """The media ``rule`` gives links of ``tier`` and class ``length`` (and runs of ``run_m``), or the problems that prevent it."""
    need_m = _num(max(class_m, run_m))
    link = link_tier_name(tier)
    at = f"catalog {catalog.label}: media[{rule.index}]"
    problems: list[Problem] = []
    tx = catalog.transceivers.get(rule.transceiver) if rule.transceiver else None
    gtx = (catalog.transceivers.get(rule.gpu_transceiver) if rule.gpu_transceiver else tx) if tier == 1 else None
    for key, t in (("transceiver", tx), ("gpu_transceiver", gtx if rule.gpu_transceiver else None)):
        if t is None:
            continue
        if t.speed != speed:
            problems.append(Problem(f"{at}.{key}", f"{t.sku} runs at {t.speed}G but the {link} links run at {speed}G", f"use a {speed}G transceiver for this link speed"))
        if t.reach_m is not None and t.reach_m < need_m:
            problems.append(Problem(f"{at}.{key}", f"{t.sku} reaches {t.reach_m} m but {link} links are {length} (up to {need_m} m)", "use a longer-reach module"))
    if tx is not None and mode.per_cage % tx.ports_per_module:
        problems.append(Problem(f"{at}.transceiver", f"{tx.sku} has {tx.ports_per_module} ports per module but {switch.sku} has {mode.per_cage} port(s) per cage at {mode.speed}G", "use a module whose ports fit the switch cage"))
    cable = None
    if rule.cables:
        cable = next((catalog.cables[s] for s in rule.cables if catalog.cables[s].length_m >= need_m), None)
        if cable is None:
            longest = catalog.cables[rule.cables[-1]]
            problems.append(Problem(f"{at}.cable", f"no cable of this rule is long enough for {link} links ({length}, up to {need_m} m); the longest is {longest.sku} ({longest.length_m} m)", f"add a cable of at least {need_m} m"))
        elif cable.speed is not None and cable.speed != speed:
            problems.append(Problem(f"{at}.cable", f"{cable.sku} is rated {cable.speed}G but the {link} links run at {speed}G", f"use a {speed}G cable"))
        elif mode.per_cage % cable.links_per_cable:  # a breakout cable's legs leave one cage
            problems.append(Problem(f"{at}.cable", f"{cable.sku} fans out to {cable.links_per_cable} links from one cage, but {switch.sku} has {mode.per_cage} port(s) per cage at {mode.speed}G", "use a cable whose legs fit the switch cage, or a port mode that breaks the cage out (ports: [{speed, radix, per_cage}])"))
    if problems:
        return None, problems
    kind = "copper" if cable is not None and cable.copper else "optical"
    name = rule.name or _media_name(kind, tx, gtx, cable)
    return Media(tier, name, kind, length, class_m, tx, gtx, cable, rule.index), []


def longest_reach(catalog: Catalog, tier: int, switch: SwitchSku, speed: int, gpus_per_node: int | None = None, role: str | None = None) -> tuple[float, str]:
    """The longest run any rule builds for ``tier`` links at ``speed`` on ``switch``, and the rule's name.

    A rule reaches as far as its shortest-reaching transceiver and its
    longest cable (no limit where it has none); transceivers at another speed
    build nothing. ``(0, "")`` when no rule matches at all.
    """
    best, label = 0.0, ""
    for rule in catalog.rules:
        if not any(rule.matches(tier, c, switch.sku, speed, gpus_per_node, role) for c in LENGTH_CLASSES):
            continue
        txs = [catalog.transceivers[t] for t in (rule.transceiver, rule.gpu_transceiver if tier == 1 else None) if t]
        if any(t.speed != speed for t in txs):
            continue
        reach = min([t.reach_m for t in txs if t.reach_m is not None] + [catalog.cables[rule.cables[-1]].length_m if rule.cables else float("inf")], default=float("inf"))
        if reach > best:
            best, label = reach, rule.name or f"media[{rule.index}]"
    return best, label


def _media_name(kind: str, tx: Transceiver | None, gtx: Transceiver | None, cable: Cable | None) -> str:
    parts = []
    if tx is not None:
        parts.append(tx.sku if gtx is None or gtx.sku == tx.sku else f"{tx.sku} / {gtx.sku}")
    if cable is not None:
        parts.append(cable.sku)
    return f"{kind}: " + " + ".join(parts)


def check_spec(catalog: Catalog, spec, tiers_by_arch: dict[str, int]) -> None:
    """Raise InputError unless ``catalog`` can build every link tier of every architecture.

    ``tiers_by_arch`` gives each architecture's tier count (from the closed form),
    so this runs before any wiring is generated.
    """
    problems: list[Problem] = []
    top = max(tiers_by_arch.values(), default=1)
    radix_at = getattr(spec, "radix_at", lambda tier: spec.radix)
    speed_at = getattr(spec, "speed_at", lambda tier: spec.link_speed)
    found: dict[int, tuple] = {}
    for tier in range(1, top + 1):
        r, speed = radix_at(tier), speed_at(tier)
        hit = catalog.switch_at(spec, tier, top)
        if hit is None:
            speeds = {m.speed for sw in catalog.switches if sw.compute for m in sw.ports}
            field = "link_speed" if not getattr(spec, "tier_speed", ()) else f"link_speed[{min(tier, len(spec.tier_speed)) - 1}]"
            where = "" if tier == 1 else f" (the {tier_role(tier)} tier)"
            if speed not in speeds:
                problems.append(Problem(field, f"catalog {catalog.label} has no switch with {speed}G ports{where}", f"it supplies {catalog.supply()}"))
            elif catalog.switch_for(speed, r) is not None:
                up = speed_at(tier + 1)
                problems.append(Problem(field, f"catalog {catalog.label} has no {speed}G switch with radix {r}{where} that also runs its uplinks at {up}G on the same cages", f"add a port mode at {up}G to the switch (ports: [{{speed, radix, per_cage}}]); it supplies {catalog.supply()}"))
            else:
                problems.append(Problem("radix", f"catalog {catalog.label} has no {speed}G switch with radix {r}{where}", f"it supplies {catalog.supply()}"))
            raise InputError(problems)
        found[tier] = hit
    if catalog.nics and catalog.nic_for(spec.link_speed) is None:
        problems.append(Problem(f"catalog {catalog.label}: nics", f"no NIC at {spec.link_speed}G", "add one, or remove nics to leave NICs out of the BOM"))
    seen: set[int] = set()
    for arch, tiers in tiers_by_arch.items():
        for tier in range(1, tiers + 1):
            if tier in seen:
                continue
            seen.add(tier)
            sw, mode = found[tier]
            problems.extend(resolve_media(catalog, tier, spec.domains, sw, mode, speed_at(tier), spec.gpus_per_node)[1])
    if problems:
        raise InputError(problems)


def catalog_schema() -> dict[str, Any]:
    """The catalog file's JSON Schema, from the tables above (see :mod:`topogen.spec.schema`)."""
    defs = {"switch": SWITCH_FIELDS, "port": PORT_FIELDS, "transceiver": TRANSCEIVER_FIELDS, "cable": CABLE_FIELDS, "nic": NIC_FIELDS, "media": MEDIA_FIELDS, "failure_rates": FAILURE_FIELDS}
    return schema_for("topogen hardware catalog", CATALOG_FIELDS, defs, "Switch, transceiver, cable and NIC SKUs with prices and power, and the media rules that pick a link's optics and cables.")
