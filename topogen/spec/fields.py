"""The spec's field vocabulary below the parser: input limits, whole-number reading, shape helpers.

The parser (:mod:`topogen.spec.cluster`) and the scalable-unit fields (:mod:`topogen.spec.units`)
both read fields with these; keeping them here lets the two import one way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from topogen.spec import counts

MAX_PLANES = 8
# Hard limits, checked before any counting or allocation: generous for real clusters
# (2^24 GPUs, radix 4,096), small enough that no input can make topogen hang.
LIMITS: dict[str, int] = {
    "gpus": 1 << 24,
    "hb_domain": 4096,
    "radix": 4096,
    "link_speed": 102_400,
    "planes": MAX_PLANES,
    "nic_ports": 2 * MAX_PLANES,
}
INT_TEXT_RE = re.compile(r"\s*([+-]?)([0-9]+)\s*", re.ASCII)
TOO_LONG = 10**30  # stands for an integer written with more digits than any limit


def as_int(raw: Any) -> int | None:
    """A whole number from YAML or a flag; ASCII digits only; more than 30 digits reads as :data:`TOO_LONG`.

    The length is checked before ``int()``: a 5,000-digit flag never reaches it.
    """
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return None  # 64.0 is not written as a whole number; reject to keep specs exact
    m = INT_TEXT_RE.fullmatch(raw) if isinstance(raw, str) else None
    if m is None:
        return None
    digits = m.group(2).lstrip("0") or "0"
    if len(digits) > 30:
        return -TOO_LONG if m.group(1) == "-" else TOO_LONG
    return int(m.group(1) + digits)


def values_shape(v: Mapping[str, Any]) -> "counts.Shape":
    """The :class:`counts.Shape` of checked field values (``radix``, the ratios and speeds parsed)."""
    radixes = v.get("tier_radix") or (v["radix"],)
    ratios = v.get("tier_oversubscription") or (v.get("oversubscription", "1:1"),)
    return counts.shape_of(tuple(radixes), ratios, v.get("tier_speed", ()))


def homes_of(homing: Any) -> int:
    """Leaves each GPU reaches in one plane: 2 when ``homing`` is dual, else 1."""
    return 2 if homing == "dual" else 1


def spec_arches(v: Mapping[str, Any]) -> tuple[str, ...]:
    """The architectures the checked field values ask for."""
    return ("rail-optimized", "rail-only") if v.get("arch", "both") == "both" else (v.get("arch"),)


# --- field tables ---------------------------------------------------------------------
# Every input section has one table of Field entries. The parsers take their key lists
# (allowed keys, defaults, required keys) from the tables, and the JSON Schema and the
# field reference (``topogen schema``, the documentation) are generated from the same
# tables, so the three cannot drift apart.


@dataclass(frozen=True, slots=True)
class Field:
    """One key of an input section.

    ``kind`` says what a value may be (see :mod:`topogen.spec.schema` for each kind's JSON
    Schema): ``int``, ``number``, ``quantity`` (a number, or text such as ``175e9`` or
    ``2M``), ``text``, ``name``, ``choice``, ``per-tier-int``, ``ratio``, ``catalog``,
    ``batch``, ``bool``, ``section`` (a nested table, ``sub``), ``preset-or-section``
    (a preset name, a ``.yaml`` path or a nested table), ``list-of`` (a list of nested
    tables), ``int-list``, ``number-list``, ``sources``, ``filter``, ``ref``, ``radix``.
    ``default`` is what the parser uses when the key is absent (``None``: no value, or one
    derived as ``default_doc`` says).
    """

    name: str
    kind: str
    doc: str
    default: Any = None
    default_doc: str = ""
    example: Any = None
    choices: tuple = ()
    minimum: float | None = None
    required: bool = False
    sub: str = ""  # the nested table's name (kinds section, preset-or-section, list-of)
    item: str = ""  # filter: the kind of one value


def names(table: tuple[Field, ...]) -> tuple[str, ...]:
    """The keys of a table, in its order (the order the reference lists them)."""
    return tuple(f.name for f in table)


ARCH_CHOICES = ("both", "rail-optimized", "rail-only")
PACKING_CHOICES = ("shared", "dedicated")
LEAF_PACKING_CHOICES = ("aligned", "shared")
PROVISION_CHOICES = ("full", "minimal")
STRIPING_CHOICES = ("balanced", "minimal")
DESIGN_CHOICES = ("clos", "leaf-pair")  # the compute fabric: a Clos of as many tiers as needed, or the Enterprise RA single-tier leaf pair
HOMING_CHOICES = ("planes", "dual")  # several NIC ports: each its own plane, or pairs on two leaves of one rail
RESERVED_PER_CHOICES = ("design", "su")

SPEC_FIELDS: tuple[Field, ...] = (
    Field("name", "name", "Name of the cluster, kept as written (name: 0x1F is out/0x1F): the output directory (out/<name>) and every file's provenance.", default_doc="the spec file's name (or 'cluster')", example="dgx-h100-su"),
    Field("gpus", "int", "GPUs N in the cluster, a whole number of HB domains (backup_nodes' GPUs included).", example=1024, minimum=1, required=True),
    Field("hb_domain", "int", "GPUs K per high-bandwidth (NVLink) domain: 8 for DGX H100, 72 for GB200 NVL72, 256 for GH200 NVL256.", example=8, minimum=1, required=True),
    Field("radix", "radix", "Switch ports at link speed, an even number; one per tier leaf first as '32/288' (or a list) for per-tier switches.", example=64, required=True),
    Field("link_speed", "per-tier-int", "NIC and link speed in Gb/s; per tier as '200/400' when the uplinks are faster.", default=400, example=400),
    Field("arch", "choice", "Architectures to build: both (side by side), rail-optimized (any-to-any Clos) or rail-only (a Clos per rail, no spine between rails).", default="both", choices=ARCH_CHOICES),
    Field("rail_packing", "choice", "Rail-only: rails too small for a switch share it (shared) or each rail gets its own switches (dedicated).", default="shared", choices=PACKING_CHOICES),
    Field("leaf_packing", "choice", "Rail-optimized: one leaf per rail per group (aligned), or small groups pack several rails on a leaf (shared).", default="aligned", choices=LEAF_PACKING_CHOICES),
    Field("provision", "choice", "Top tier sized for the full radix (full) or for the GPUs present (minimal).", default="full", choices=PROVISION_CHOICES),
    Field("design", "choice", "Compute fabric: clos (leaves, then spines and cores as the GPUs need) or leaf-pair (NVIDIA's Enterprise RA single tier: each node's NICs alternate A-B-B-A over two leaves per plane, joined by inter-switch links; oversubscription is GPU ports to ISL ports; rail-only gets no ISL).", default="clos", choices=DESIGN_CHOICES),
    Field("striping", "choice", "Top tier: the same number of parallel links from each switch to each upper switch (balanced), or the fewest upper switches the ports need, with parallel-link counts that differ by at most one (minimal).", default="balanced", choices=STRIPING_CHOICES),
    Field("catalog", "catalog", "Hardware catalog for the BOM: a bundled name (topogen catalogs) or a path to a catalog .yaml file.", default="paper", example="ndr-400g"),
    Field("planes", "int", "Independent fabric planes: NIC ports per GPU, each wired to its own copy of the fabric (1 to 8).", default=1, minimum=1, example=2),
    Field("gpus_per_node", "int", "GPUs per compute node (host, tray); divides hb_domain.", default_doc="hb_domain (one node per HB domain)", minimum=1, example=4),
    Field("oversubscription", "ratio", "Leaf down:up ratio ('3:1'); per tier below the top as a list or '3:1/1:1', or a mapping by role ({leaf: '3:1', spine: '1:1'}).", default="1:1", example="1:1"),
    Field("hb_bandwidth_gbps", "number", "B_F: HB-domain (NVLink) bandwidth per GPU in Gb/s, for the analyses.", default_doc="the workload GPU preset's", minimum=0, example=7200),
    Field("workload", "section", "The training job the analyses use: model, GPU, batch, parallelism, checkpoint.", sub="workload"),
    Field("layout", "section", "The physical layout: racks, rows, U positions, cable routing and sold lengths.", default_doc="NVIDIA DGX SuperPOD practice", sub="layout"),
    Field("networks", "section", "The cluster's other networks: storage, in-band management and out-of-band, port by port.", default_doc="none: the compute fabric alone", sub="networks"),
    Field("addressing", "section", "The IP and ASN plan of the switch configurations: address pools, link numbering, GPU subnets, ASN scheme.", default_doc="RFC 7938 and the usual RoCE GPU-fabric practice", sub="addressing"),
    Field("nic_ports", "int", "NIC ports per GPU: planes x 1 with homing: planes, planes x 2 with homing: dual.", default_doc="planes x (2 with homing: dual, else 1)", minimum=1, example=2),
    Field("homing", "choice", "Several NIC ports: each its own plane (planes), or a port pair on two leaves of the GPU's rail (dual).", default="planes", choices=HOMING_CHOICES),
    Field("scalable_unit", "int", "Nodes per scalable unit (SU): leaves built per SU, as NVIDIA's SuperPODs (32 DGX nodes).", default_doc="none: leaves grouped by their downlinks", minimum=1, example=32),
    Field("max_scalable_units", "int", "SUs the top tier is sized for (growth); the leaves are those of the SUs present.", default_doc="the SUs present", minimum=1, example=4),
    Field("reserved_leaf_ports", "int", "Leaf downlink ports kept free (management, UFM) on each leaf of the last SU.", default_doc="none", minimum=0, example=1),
    Field("reserved_leaf_ports_per", "choice", "Where reserved_leaf_ports are kept: the last SU's leaves (design) or every SU's leaves (su).", default_doc="design", choices=RESERVED_PER_CHOICES),
    Field("system", "text", "The compute node's system definition (templates/systems/: dgx-h100, dgx-b200): its height in the racks, its NIC cages and ports and the names its OS gives them (netplan, NCCL).", default_doc="from workload gpu and gpus_per_node (gpu: b200 with 8 GPUs a node is dgx-b200), else a generic node", example="dgx-b200"),
    Field("backup_nodes", "int", "Spare hosts among gpus, wired like the others but kept out of the job size.", default=0, minimum=0, example=8),
    Field("spares", "section", "Spare parts the BOM adds per SKU: a percentage and a minimum, per category (switch, transceiver, cable, nic).", default_doc="none: no spares lines", sub="spares"),
    Field("naming", "section", "The site's names: templates for hosts, GPUs, NIC interfaces and compute switches per tier, with fields such as {site}, {su}, {index+1:03}.", default_doc="topogen's own names (hb03, hb0003-gpu7, gpu7-nic0, leaf-g00-r0)", sub="naming"),
)
