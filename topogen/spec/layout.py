"""The spec's optional ``layout:`` section: how racks stand on the floor and where devices sit in them.

Every key has a default that follows NVIDIA DGX SuperPOD practice (its reference
architecture's racks and rows); the section may be left out entirely.

Every key, its meaning and its default is in :data:`LAYOUT_FIELDS` (also printed by
``topogen schema spec`` and the spec reference).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from topogen.spec.fields import Field, names
from topogen.util.errors import Problem, check_section

SELLABLE_M = (1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 100)
PLACES = ("middle", "end")
OUTSIDE_RUN_M = 30.0  # the longest cross-row run: what a cable to a device the plan does not place is priced at


@dataclass(frozen=True, slots=True)
class LayoutSpec:
    """The resolved ``layout:`` section (see the module docstring); ``None`` fields take their default."""

    gpus_per_rack: int | None = None
    gpus_per_tray: int | None = None
    tray_u: int | None = None
    hb_switch_u: int | None = None
    rack_u: int = 48
    first_u: int = 2
    racks_per_row: int | None = None
    rack_width_m: float = 0.6
    rack_depth_m: float = 1.2
    row_pitch_m: float = 3.0
    leaf_racks: str = "middle"
    network_rows: str = "middle"
    switches_per_rack: int = 16
    switch_u: int = 1
    tray_height_m: float = 2.6
    slack_m: float = 1.0
    lengths_m: tuple[float, ...] = SELLABLE_M
    outside_run_m: float = OUTSIDE_RUN_M


LAYOUT_FIELDS: tuple[Field, ...] = (
    Field("gpus_per_rack", "int", "GPUs in one compute rack (whole nodes; divides or is a multiple of the HB domain).", default_doc="one HB domain for rack-scale domains (36 < K <= 144), else 4 nodes (DGX: 32)", minimum=1, example=32),
    Field("gpus_per_tray", "int", "GPUs per chassis or tray (one U block).", default_doc="8 (DGX), 4 (NVL72), 1 (GH200)", minimum=1, example=8),
    Field("tray_u", "int", "Rack units per tray.", default_doc="8 for 8-GPU trays, else 1", minimum=1, example=8),
    Field("hb_switch_u", "int", "U kept for the HB-domain switch trays in the middle of a compute rack (NVL72 NVLink switch trays).", default_doc="9 for rack-scale domains, else 0", minimum=0, example=9),
    Field("rack_u", "int", "Usable rack height in U.", default=48, minimum=1),
    Field("first_u", "int", "Lowest U used (U1 is often a PDU or blank).", default=2, minimum=1),
    Field("racks_per_row", "int", "Compute racks per row.", default_doc="a square hall: about sqrt(racks x pitch / width), a multiple of 8, 8 to 64", minimum=1, example=16),
    Field("rack_width_m", "number", "Rack width in metres.", default=0.6, minimum=0),
    Field("rack_depth_m", "number", "Rack depth in metres.", default=1.2, minimum=0),
    Field("row_pitch_m", "number", "Distance between row centres (rack + aisle) in metres.", default=3.0, minimum=0),
    Field("leaf_racks", "choice", "Where the leaf racks stand in each compute row.", default="middle", choices=PLACES),
    Field("network_rows", "choice", "Where the spine and core rows stand in the hall.", default="middle", choices=PLACES),
    Field("switches_per_rack", "int", "Switches in one network rack.", default=16, minimum=1),
    Field("switch_u", "int", "Rack units per switch.", default=1, minimum=1),
    Field("tray_height_m", "number", "Height of the overhead cable tray above the floor, metres.", default=2.6, minimum=0),
    Field("slack_m", "number", "Service-loop slack added to every cable, metres.", default=1.0, minimum=0),
    Field("lengths_m", "number-list", "Cable lengths sold; a routed length is rounded up to one of them.", default=list(SELLABLE_M), example=[1, 2, 3, 5, 10, 30, 100]),
    Field("outside_run_m", "number", "Length in metres assumed for a cable to a device the plan does not place (with networks: the storage targets, the NFS storage and the data-centre core uplinks); the networks' BOM prices those cables' media and cable SKU at it and says so in its notes.", default=OUTSIDE_RUN_M, minimum=0, example=50),
)
KEYS = names(LAYOUT_FIELDS)  # the table is the one list of keys; a test checks it against LayoutSpec
INTS = ("gpus_per_rack", "gpus_per_tray", "tray_u", "hb_switch_u", "rack_u", "first_u", "racks_per_row", "switches_per_rack", "switch_u")
FLOATS = ("rack_width_m", "rack_depth_m", "row_pitch_m", "tray_height_m", "slack_m", "outside_run_m")


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw != raw or raw in (float("inf"), float("-inf")):
        return None
    return raw


def parse_layout(raw: Any, values: dict[str, Any], problems: list[Problem], path: str = "layout") -> LayoutSpec | None:
    """The ``layout:`` mapping -> :class:`LayoutSpec`, checked against the spec ``values``; None when absent."""
    if raw is None:
        return None
    n0 = len(problems)
    if not check_section(raw, KEYS, path, problems):
        return None
    out: dict[str, Any] = {}
    for key in INTS:
        if raw.get(key) is None:
            continue
        v = raw[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if key == "hb_switch_u" else 1):
            problems.append(Problem(f"{path}.{key}", f"{key} must be a {'whole number >= 0' if key == 'hb_switch_u' else 'positive whole number'}, got {v!r}", "e.g. rack_u: 48, gpus_per_rack: 32"))
        else:
            out[key] = v
    for key in FLOATS:
        if raw.get(key) is None:
            continue
        v = _number(raw[key])
        if v is None or v < 0 or (v == 0 and key != "slack_m"):
            problems.append(Problem(f"{path}.{key}", f"{key} must be a positive number of metres, got {raw[key]!r}", f"e.g. {key}: {getattr(LayoutSpec(), key)}"))
        else:
            out[key] = float(v)
    for key in ("leaf_racks", "network_rows"):
        if raw.get(key) is not None:
            if raw[key] not in PLACES:
                problems.append(Problem(f"{path}.{key}", f"{key} must be one of {', '.join(PLACES)}, got {raw[key]!r}", "middle keeps cables short; end frees the row for compute racks"))
            else:
                out[key] = raw[key]
    if raw.get("lengths_m") is not None:
        v = raw["lengths_m"]
        vals = [_number(x) for x in v] if isinstance(v, (list, tuple)) else [None]
        if not vals or any(x is None or x <= 0 for x in vals):
            problems.append(Problem(f"{path}.lengths_m", f"lengths_m must be a list of positive lengths in metres, got {v!r}", f"e.g. {list(SELLABLE_M)}"))
        else:
            out["lengths_m"] = tuple(sorted({float(x) if not float(x).is_integer() else int(x) for x in vals}))
    if len(problems) > n0:
        return None
    spec = LayoutSpec(**out)
    _against_cluster(spec, values, problems, path)
    return None if len(problems) > n0 else spec


def _against_cluster(lay: LayoutSpec, values: dict[str, Any], problems: list[Problem], path: str) -> None:
    """Racks hold whole nodes and whole trays; what one rack holds fits its height."""
    k, g = values.get("hb_domain"), values.get("gpus_per_node")
    if k is None or g is None:
        return
    r = resolve(lay, k, g)
    if r.gpus_per_rack % r.gpus_per_tray or r.gpus_per_rack % min(g, r.gpus_per_rack) or (k % r.gpus_per_rack and r.gpus_per_rack % k):
        problems.append(Problem(f"{path}.gpus_per_rack", f"gpus_per_rack {r.gpus_per_rack} must hold whole trays ({r.gpus_per_tray} GPUs) and whole nodes ({g} GPUs), and divide or be a multiple of the HB domain ({k})", f"e.g. {k} (one domain per rack) or {max(g, r.gpus_per_tray) * 4}"))
        return
    need = r.gpus_per_rack // r.gpus_per_tray * r.tray_u + r.hb_switch_u
    if r.first_u - 1 + need > r.rack_u:
        problems.append(Problem(f"{path}.gpus_per_rack", f"a compute rack needs {need} U ({r.gpus_per_rack // r.gpus_per_tray} trays of {r.tray_u} U + {r.hb_switch_u} U of HB switch trays) from U{r.first_u}, but rack_u is {r.rack_u}", "put fewer GPUs per rack or use taller racks"))
    if r.first_u - 1 + r.switches_per_rack * r.switch_u > r.rack_u:
        problems.append(Problem(f"{path}.switches_per_rack", f"{r.switches_per_rack} switches of {r.switch_u} U from U{r.first_u} do not fit in {r.rack_u} U", "lower switches_per_rack"))


def resolve(lay: LayoutSpec | None, hb_domain: int, gpus_per_node: int, system_u: int | None = None) -> LayoutSpec:
    """``lay`` with every defaulted field filled in for an HB domain of ``hb_domain`` GPUs.

    Defaults: a rack-scale domain (36 < K <= 144, NVL72) is one rack of 1 U trays
    of 4 GPUs around 9 U of NVLink switch trays; 8-GPU servers (DGX) stand 4 to
    a rack, 8 U each; smaller nodes (GH200 superchips) 16 to a rack, 1 U each.
    A default that would not fit the rack is halved until it does. ``system_u``: the height of
    the node's system (:func:`topogen.spec.systems.node_u`: a DGX B200 is 10 U) when the
    layout gives no ``tray_u``.
    """
    lay = lay or LayoutSpec()
    rack_scale = 36 <= hb_domain <= 144
    tray = lay.gpus_per_tray or (min(gpus_per_node, 8) if hb_domain <= 16 else min(gpus_per_node, 4))
    tray_u = lay.tray_u or (system_u if system_u and tray == gpus_per_node else None) or (8 if tray >= 8 else 1)
    hb_u = lay.hb_switch_u if lay.hb_switch_u is not None else (9 if rack_scale else 0)
    per_rack = lay.gpus_per_rack
    if per_rack is None:
        per_rack = hb_domain if rack_scale else (4 * max(gpus_per_node, tray) if gpus_per_node >= 4 else 16 * tray)
        while per_rack > tray and lay.first_u - 1 + per_rack // tray * tray_u + hb_u > lay.rack_u:
            per_rack //= 2
    return replace(lay, gpus_per_rack=per_rack, gpus_per_tray=tray, tray_u=tray_u, hb_switch_u=hb_u)


def racks_per_row(lay: LayoutSpec, compute_racks: int) -> int:
    """The spec's value, else rows about as long as the hall is deep (a multiple of 8 racks, 8 to 64)."""
    if lay.racks_per_row:
        return lay.racks_per_row
    side = (compute_racks * lay.row_pitch_m / lay.rack_width_m) ** 0.5
    return int(min(64, max(8, -(-side // 8) * 8)))
