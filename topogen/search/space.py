"""The ``search:`` section of a YAML file: the space of designs, the objectives and the constraints.

A search file is a cluster spec (every key of ``topogen build``'s spec is the base
that each design starts from) plus a ``search:`` section::

    name: b200-32k
    workload: {model: gpt-3-175b, gpu: b200}
    search:
      gpus: {at_least: 32768}            # or a whole number; each K rounds up to whole HB domains
      space:
        arch: [rail-optimized, rail-only]
        hb_domain: [8, 72]               # default: the workload GPU's scale_up options
        catalog: [ndr-400g, xdr-800g]
        radix: [64]                      # default: every radix the catalog's switches offer
        link_speed: [400]                # default: every speed the catalog's switches offer
        oversubscription: ["1:1", "3:1"]
        planes: [1]
      objectives: [capex, power, iteration, blast_radius]
      constraints: {budget: 400e6, power_kw: 5000, racks: 2000, max_hops: 5, max_iteration_s: 8,
                    min_bus_bandwidth_GBps: 40, min_alltoall_GBps: 20}   # the last two: simulated on explicit builds
      choose: cost_per_gpu               # the front's design with the least of it is chosen
      slack: 0.05                        # closed-form estimates within 5% of the front are built too

:func:`parse` checks all of it and reports every problem at once; :func:`points`
expands the space into plain override dicts (the same file gives the same points
in the same order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Any, Mapping

from topogen.util import resources
from topogen.util.errors import InputError, Problem, check_section, show
from topogen.spec.cluster import ALLOWED_KEYS, NAME_RE, ARCH_CHOICES, LEAF_PACKING_CHOICES, PACKING_CHOICES, available_catalogs, read_spec_file
from topogen.spec.fields import DESIGN_CHOICES, STRIPING_CHOICES, as_int
from topogen.spec.yamlfile import read_yaml

SEARCH_KEYS = ("gpus", "space", "objectives", "constraints", "choose", "slack")
AXES = ("arch", "hb_domain", "catalog", "radix", "link_speed", "planes", "oversubscription", "rail_packing", "leaf_packing", "scalable_unit", "striping", "design")


@dataclass(frozen=True, slots=True)
class Objective:
    """One figure a search minimises: its key in a row, unit and what it means."""

    name: str
    key: str
    unit: str
    meaning: str
    exact_in_screening: bool  # True: the closed form gives the build's figure itself (no slack needed)


OBJECTIVES: dict[str, Objective] = {
    o.name: o
    for o in (
        Objective("capex", "cost_usd", "USD", "capital cost of the fabric (switches, NICs, optics, cables)", False),
        Objective("cost_per_gpu", "cost_per_gpu", "USD", "capital cost per GPU", False),
        Objective("power", "power_w", "W", "power of the fabric", False),
        Objective("iteration", "iteration_s", "s", "training iteration time of the workload (Eq. 1, as topogen analyze iteration)", True),
        Objective("blast_radius", "blast_radius_gpus", "GPUs", "GPUs that lose bandwidth when the busiest switch of any tier fails", False),
        Objective("cables_optics", "cables_optics", "parts", "cables plus transceivers", False),
    )
}
DEFAULT_OBJECTIVES = ("capex", "power", "iteration", "blast_radius")
CONSTRAINTS = {
    "budget": ("cost_usd", 1.0, "USD", "capex"),
    "power_kw": ("power_w", 1000.0, "kW", "power"),
    "racks": ("racks", 1.0, "racks", "racks (from the floor layout; checked on the explicit builds)"),
    "max_hops": ("switch_hops", 1.0, "switch hops", "worst-case switch hops between two GPUs"),
    "max_iteration_s": ("iteration_s", 1.0, "s", "iteration time of the workload (Eq. 1, as topogen analyze iteration)"),
    "min_bus_bandwidth_GBps": ("bus_bandwidth_GBps", 1.0, "GB/s", "simulated bus bandwidth of the DP ring all-reduce on the wiring (as topogen build --traffic; checked on the explicit builds)"),
    "min_alltoall_GBps": ("alltoall_GBps", 1.0, "GB/s", "simulated all-to-all rate of the slowest GPU over the workload's EP group (as topogen build --traffic; checked on the explicit builds)"),
}
AT_LEAST = frozenset({"min_bus_bandwidth_GBps", "min_alltoall_GBps"})  # a floor, not a cap: the figure must reach the limit
SIMULATED = AT_LEAST  # figures of the traffic simulator: unknown to screening, simulated on explicit builds that meet the rest


def breaks(name: str, value: float | None, limit: float, slack: float = 0.0) -> bool:
    """Whether ``value`` of constraint ``name`` breaks ``limit`` (an estimate gets ``slack``; an unknown figure breaks nothing yet)."""
    if value is None:
        return False
    scale = CONSTRAINTS[name][1]
    if name in AT_LEAST:
        return value < limit * scale * (1 - slack)
    return value > limit * scale * (1 + slack)
DEFAULT_SLACK = 0.05
MAX_POINTS = 200_000  # points one search screens (each is a closed form: microseconds)
MAX_COMBINATIONS = 1_000_000  # product of the axes' value counts, checked before any design is expanded


@dataclass(frozen=True, slots=True)
class Search:
    """A checked search: the base spec, the axes of the space, objectives, constraints."""

    name: str
    base: dict[str, Any]  # spec keys of the file (without search), the base of every design
    base_dir: str  # the file's directory: relative catalog paths are read from there
    gpus: tuple[int, int | None, bool]  # (at least, at most or None, exact: gpus given as one number)
    axes: dict[str, tuple[Any, ...]]  # axis -> values (empty: from the catalog or the base)
    objectives: tuple[str, ...]
    constraints: dict[str, float]
    choose: str
    slack: float
    scale_up: dict[int, int]  # hb_domain -> gpus_per_node, from the workload GPU's preset
    nic_gbps: float | None = None  # the workload GPU's NIC Gb/s per GPU: slower port modes are not searched unless link_speed is listed

    def to_dict(self) -> dict[str, Any]:
        """The search as plain data (the manifest records it)."""
        return {
            "name": self.name,
            "gpus": {"at_least": self.gpus[0], "at_most": self.gpus[1], "exact": self.gpus[2]},
            "space": {k: list(v) for k, v in self.axes.items() if v},
            "objectives": list(self.objectives),
            "constraints": dict(self.constraints),
            "choose": self.choose,
            "slack": self.slack,
        }


def load(ref: str, flags: Mapping[str, Any] | None = None) -> Search:
    """Read a search file (path or bundled preset name) and apply flags over its ``search:`` section."""
    from pathlib import Path

    path: Any = Path(ref)
    if not (path.suffix in (".yaml", ".yml") or "/" in ref or path.exists()):
        path = resources.template_path("searches", ref)
        if path is None:
            names = resources.template_names("searches")
            raise InputError([Problem("spec", f"no search file or bundled search named {show(ref)}{resources.did_you_mean(ref, names)}", f"give a YAML file with a search: section, or one of: {', '.join(names)}")])
    data = read_spec_file(path)

    base_dir = str(Path(path).parent) if isinstance(path, Path) else ""
    return parse(data, flags or {}, default_name=Path(path.name).stem, base_dir=base_dir)


def _list(raw: Any) -> list[Any]:
    """A YAML list, a comma-separated flag, or one value as a list of one."""
    if raw is None:
        return []
    if isinstance(raw, (list, tuple)):
        return list(raw)
    if isinstance(raw, str) and "," in raw:
        return [x.strip() for x in raw.split(",") if x.strip()]
    return [raw]


def parse(data: Mapping[str, Any], flags: Mapping[str, Any], default_name: str = "search", base_dir: str = "") -> Search:
    """Check a search file's data (spec keys plus ``search:``) and flags; every problem at once."""
    problems: list[Problem] = []
    raw = data.get("search")
    if raw is None:
        raw = {}
        if not any(flags.get(k) is not None for k in ("space", "objectives", "gpus")):
            problems.append(Problem("search", "the file has no search: section", f"add search: with keys {', '.join(SEARCH_KEYS)} (topogen search --help shows an example)"))
    elif not check_section(raw, SEARCH_KEYS, "search", problems):
        raise InputError(problems)
    base = {k: v for k, v in data.items() if k != "search"}
    for key in sorted(str(k) for k in base if k not in ALLOWED_KEYS):
        problems.append(Problem(key, f"unknown key {show(key)}", f"a search file holds spec keys ({', '.join(ALLOWED_KEYS)}) and search:"))
    name = flags.get("name") or base.get("name") or default_name
    if isinstance(name, int) and not isinstance(name, bool):
        name = str(name)
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or len(name) > 90:
        problems.append(Problem("name", f"name {show(name)} is not a safe directory name of at most 90 characters", "use letters, digits, '.', '_' or '-', starting with a letter or digit (each design is named <name>-<number>)"))
        name = "search"
    base = {k: v for k, v in base.items() if k in ALLOWED_KEYS and k not in ("name", "arch")}

    gpus = _gpus(flags.get("gpus") if flags.get("gpus") is not None else raw.get("gpus", base.pop("gpus", None)), problems)
    base.pop("gpus", None)

    space_raw = raw.get("space") or {}
    if not isinstance(space_raw, dict):
        problems.append(Problem("search.space", f"space must be a mapping of axes, got {show(space_raw)}", f"axes: {', '.join(AXES)}"))
        space_raw = {}
    for key in sorted(str(k) for k in space_raw if k not in AXES):
        problems.append(Problem(f"search.space.{key}", f"unknown axis {show(key)}", f"axes: {', '.join(AXES)}"))
    axes: dict[str, tuple[Any, ...]] = {}
    for axis in AXES:
        given = flags.get(axis)
        vals = _list(given) if given is not None else _list(space_raw.get(axis))
        if axis in space_raw and not vals and given is None:
            problems.append(Problem(f"search.space.{axis}", f"{axis} lists no value: the space is empty", _axis_hint(axis)))
        axes[axis] = tuple(dict.fromkeys(_norm(axis, v) for v in vals))
    for axis in ("hb_domain", "planes", "scalable_unit"):
        bad = [v for v in axes[axis] if not (v is None and axis == "scalable_unit") and (not isinstance(v, int) or isinstance(v, bool) or v <= 0)]
        if bad:
            problems.append(Problem(f"search.space.{axis}", f"{axis} values must be positive whole numbers, got {', '.join(map(show, bad))}", _axis_hint(axis)))
            axes[axis] = tuple(v for v in axes[axis] if v not in bad)
    for axis in ("radix", "link_speed"):  # the base spec's value is the axis when the space does not list it
        if not axes[axis] and base.get(axis) is not None:
            axes[axis] = (_norm(axis, "/".join(map(str, base[axis])) if isinstance(base[axis], list) else base[axis]),)
        base.pop(axis, None)
    for axis, choices in (("arch", ("rail-optimized", "rail-only")), ("rail_packing", PACKING_CHOICES), ("leaf_packing", LEAF_PACKING_CHOICES), ("striping", STRIPING_CHOICES), ("design", DESIGN_CHOICES)):
        bad = [v for v in axes[axis] if v not in choices]
        if bad:
            problems.append(Problem(f"search.space.{axis}", f"unknown {axis} {', '.join(map(show, bad))}", f"valid values: {', '.join(choices)}"))
    if not axes["arch"]:
        arch = data.get("arch", "both")
        axes["arch"] = ("rail-optimized", "rail-only") if arch in (None, "both") else (arch,) if arch in ARCH_CHOICES else ()
    if not axes["catalog"]:
        axes["catalog"] = (base.get("catalog", "paper"),)
    axes["catalog"] = tuple(dict.fromkeys(_catalog_ref(c, base_dir if flags.get("catalog") is None else "") for c in axes["catalog"]))
    base.pop("catalog", None)

    given_obj = flags.get("objectives") if flags.get("objectives") is not None else raw.get("objectives")
    if given_obj is not None and not _list(given_obj):
        problems.append(Problem("search.objectives", "objectives lists no objective", f"list one or more of {', '.join(OBJECTIVES)}, or leave objectives out for the defaults ({', '.join(DEFAULT_OBJECTIVES)})"))
    objectives = tuple(_list(given_obj) or DEFAULT_OBJECTIVES)
    bad = [o for o in objectives if o not in OBJECTIVES]
    if bad:
        problems.append(Problem("search.objectives", f"unknown objective(s) {', '.join(map(show, bad))}", f"valid objectives: {', '.join(OBJECTIVES)} (the simulated all-reduce rate comes with topogen simulate)"))
    objectives = tuple(dict.fromkeys(o for o in objectives if o in OBJECTIVES))

    constraints: dict[str, float] = {}
    c_raw = dict(raw.get("constraints") or {}) if isinstance(raw.get("constraints") or {}, dict) else None
    if c_raw is None:
        problems.append(Problem("search.constraints", f"constraints must be a mapping, got {show(raw.get('constraints'))}", f"keys: {', '.join(CONSTRAINTS)}"))
        c_raw = {}
    for key in CONSTRAINTS:
        if flags.get(key) is not None:
            c_raw[key] = flags[key]
    for key, v in c_raw.items():
        if key not in CONSTRAINTS:
            problems.append(Problem(f"search.constraints.{key}", f"unknown constraint {show(key)}", f"valid constraints: {', '.join(CONSTRAINTS)}"))
            continue
        x = _positive(v)
        if x is None:
            problems.append(Problem(f"search.constraints.{key}", f"{key} must be a positive number of {CONSTRAINTS[key][2]}, got {show(v)}", "e.g. budget: 400e6, power_kw: 5000, racks: 2000, max_hops: 5, max_iteration_s: 8, min_bus_bandwidth_GBps: 40, min_alltoall_GBps: 20"))
        else:
            constraints[key] = x

    choose = flags.get("choose") or raw.get("choose") or (objectives[0] if objectives else "capex")
    if choose not in OBJECTIVES:
        problems.append(Problem("search.choose", f"unknown objective {show(choose)} to choose by", f"valid objectives: {', '.join(OBJECTIVES)}"))
    slack_raw = flags.get("slack") if flags.get("slack") is not None else raw.get("slack", DEFAULT_SLACK)
    slack = _fraction(slack_raw)
    if slack is None:
        problems.append(Problem("search.slack", f"slack must be a fraction from 0 to 1, got {show(slack_raw)}", "e.g. 0.05: designs whose closed-form estimates are within 5% of the front are built explicitly too"))
        slack = DEFAULT_SLACK

    scale_up, nic = _scale_up(base.get("workload"), base_dir, problems)
    if not axes["hb_domain"]:
        if base.get("hb_domain") is not None:
            axes["hb_domain"] = (base["hb_domain"],)
        elif scale_up:
            axes["hb_domain"] = tuple(scale_up)
        else:
            problems.append(Problem("search.space.hb_domain", "no HB-domain size to search", "list search.space.hb_domain (e.g. [8, 72]), or give a workload GPU preset whose scale_up lists them"))
    base.pop("hb_domain", None)
    for key in sorted(AT_LEAST & set(constraints)):
        if key == "min_alltoall_GBps" and base.get("workload") is None and base.get("hb_bandwidth_gbps") is None:
            problems.append(Problem(f"search.constraints.{key}", f"{key} needs the HB-domain bandwidth the all-to-all relays over (and its EP group)", "add workload: {model: deepseek-v3, gpu: b200} (its expert parallelism sets the group), or hb_bandwidth_gbps, or drop min_alltoall_GBps"))
    if "max_iteration_s" in constraints and base.get("workload") is None:
        problems.append(Problem("search.constraints.max_iteration_s", "max_iteration_s needs a workload (model and GPU)", "add workload: {model: gpt-3-175b, gpu: b200}, or drop max_iteration_s"))
    if "iteration" in objectives and base.get("workload") is None:
        problems.append(Problem("workload", "objective iteration needs a workload (model and GPU)", "add workload: {model: gpt-3-175b, gpu: b200}, or drop iteration from search.objectives"))
    combos = 1
    for axis in AXES:
        combos *= max(1, len(axes[axis]))
    if combos > MAX_COMBINATIONS:  # refused before a single design is expanded (the axes are only multiplied)
        sizes = " x ".join(f"{len(axes[a]):,} {a}" for a in AXES if len(axes[a]) > 1)
        problems.append(Problem("search.space", f"the space's axes multiply to {combos:,} combinations ({sizes}); a search takes at most {MAX_COMBINATIONS:,}", "search fewer values at once (a few per axis), or split the space into several searches"))
    if problems:
        raise InputError(problems)
    return Search(str(name), base, base_dir, gpus, axes, objectives, constraints, choose, slack, scale_up, nic)


def _norm(axis: str, v: Any) -> Any:
    """Axis values as the spec reads them (ints stay ints; ``"3:1"`` stays a string)."""
    if axis in ("hb_domain", "planes", "scalable_unit") and isinstance(v, str) and v.strip().isdigit():
        return int(v)
    if axis in ("radix", "link_speed") and isinstance(v, str):
        v = v.strip()
        return int(v) if v.isdigit() else v
    if axis == "scalable_unit" and v in ("none", "null"):
        return None
    return v


def _catalog_ref(ref: Any, base_dir: str) -> Any:
    """A bundled catalog name as is; a path made absolute (from the search file's directory), so a design's spec reads anywhere."""
    if not isinstance(ref, str) or ref in available_catalogs():
        return ref
    from pathlib import Path

    p = Path(ref)
    return str((Path(base_dir) / p if base_dir and not p.is_absolute() else p).resolve())


def _axis_hint(axis: str) -> str:
    return {
        "arch": "list rail-optimized and/or rail-only",
        "hb_domain": "list HB-domain sizes, e.g. [8, 72]",
        "catalog": f"list catalogs: {', '.join(available_catalogs())} or paths",
    }.get(axis, "list at least one value, or drop the axis to keep the base spec's")


def _gpus(raw: Any, problems: list[Problem]) -> tuple[int, int | None, bool]:
    """``gpus``: one number (exact; a K that does not divide it is skipped) or ``{at_least, at_most}``."""
    if isinstance(raw, dict):
        bad = [k for k in raw if k not in ("at_least", "at_most")]
        lo, hi = as_int(raw.get("at_least")), as_int(raw["at_most"]) if raw.get("at_most") is not None else None
        if bad or lo is None or lo <= 0 or (raw.get("at_most") is not None and (hi is None or hi < lo)) or lo > 1 << 24:
            problems.append(Problem("search.gpus", f"gpus must be a whole number or {{at_least: N, at_most: M}} with 0 < N <= M <= 16,777,216, got {show(raw)}", "e.g. gpus: {at_least: 30000}: each HB-domain size rounds N up to whole domains"))
            return (1, None, False)
        return (lo, hi, False)
    n = as_int(raw) if raw is not None else None
    if n is None or n <= 0 or n > 1 << 24:
        problems.append(Problem("search.gpus", f"gpus must be a whole number from 1 to 16,777,216 or {{at_least: N}}, got {show(raw)}", "e.g. gpus: 32768, or gpus: {at_least: 30000}"))
        return (1, None, True)
    return (n, n, True)


def _float(v: Any) -> float | None:
    """A number from YAML or a flag (text of 40 characters or more reads as infinite); None when it is none."""
    if isinstance(v, bool):
        return None
    try:
        return float(v) if not isinstance(v, str) or len(v) < 40 else math.inf
    except (TypeError, ValueError):
        return None


def _positive(v: Any) -> float | None:
    x = _float(v)
    return x if x is not None and math.isfinite(x) and x > 0 else None


def _fraction(v: Any) -> float | None:
    x = _float(v)
    return x if x is not None and 0 <= x <= 1 else None


def _scale_up(workload: Any, base_dir: str, problems: list[Problem]) -> tuple[dict[int, int], float | None]:
    """``{hb_domain: gpus_per_node}`` of the workload GPU's preset (its ``scale_up`` list), else ``{}``; and its ``nic_gbps`` or None."""
    if not isinstance(workload, dict):
        return {}, None
    gpu = workload.get("gpu")
    data: Any = gpu if isinstance(gpu, dict) else None
    if isinstance(gpu, str):
        from pathlib import Path

        path = resources.template_path("gpus", gpu)
        if path is None and gpu.endswith((".yaml", ".yml")):
            path = Path(base_dir) / gpu if base_dir and not Path(gpu).is_absolute() else Path(gpu)
        if path is None:
            return {}, None  # the workload parser names an unknown GPU
        try:
            data = read_yaml(path, "gpu", str(path), Problem("workload.gpu", f"file {str(path)!r} does not exist", "a GPU preset name or a .yaml path"))
        except InputError:
            return {}, None
    nic = _positive(data.get("nic_gbps")) if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("scale_up") is None:
        return {}, nic
    out: dict[int, int] = {}
    for i, item in enumerate(_list(data.get("scale_up"))):
        k = as_int(item.get("hb_domain")) if isinstance(item, dict) else as_int(item)
        g = as_int(item.get("gpus_per_node", k)) if isinstance(item, dict) else k
        if k is None or k <= 0 or g is None or g <= 0 or k % g:
            problems.append(Problem(f"workload.gpu.scale_up[{i}]", f"a scale-up option is {{hb_domain: K, gpus_per_node: G}} with G dividing K, got {show(item)}", "e.g. {hb_domain: 72, gpus_per_node: 4} for a GB200 NVL72 rack"))
            continue
        out.setdefault(k, g)
    return out, nic


def gpus_for(search: Search, k: int, su_nodes: int | None, gpus_per_node: int) -> int | None:
    """N for HB domains of ``k``: the search's N rounded up to whole domains (and SUs), or None when out of range."""
    lo, hi, exact = search.gpus
    step = k
    if su_nodes:
        step = math.lcm(k, su_nodes * gpus_per_node)
    n = -(-lo // step) * step
    if exact and n != lo:
        return None
    if hi is not None and n > hi:
        return None
    return n


def catalog_modes(hw) -> list[tuple[int, int]]:
    """``(speed, radix)`` of every fixed port mode of the catalog's compute switches, in catalog order."""
    out: list[tuple[int, int]] = []
    for sw in hw.switches:
        for m in sw.ports if sw.compute else ():  # management switches serve only the other networks
            if m.radix is not None and (m.speed, m.radix) not in out:
                out.append((m.speed, m.radix))
    return out


def _slower_than_nic(search: Search, speed: Any, planes: Any) -> str | None:
    """Why a port mode is left out: its ports give a GPU less than the node's NIC (``nic_gbps``), and the space did not list link_speed.

    Listing ``link_speed`` in the space (or --link-speed) asks for the slower modes (a NIC broken out to slower ports).
    """
    nic = search.nic_gbps
    if nic is None or search.axes["link_speed"] or not isinstance(speed, int):
        return None
    p = planes if isinstance(planes, int) else search.base.get("planes", 1) if isinstance(search.base.get("planes", 1), int) else 1
    if speed * p >= nic:
        return None
    return f"{speed}G x {p} plane{'s' if p > 1 else ''} is slower than the {nic:g}G NIC per GPU of the workload's GPU (list link_speed in search.space to search breakout to slower ports)"


def points(search: Search, catalogs: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Every design of the space as spec overrides, and the combinations that have no N.

    ``catalogs`` maps each catalog reference to its loaded catalog (radix and
    speed default to its switches' port modes). Designs are deduplicated (an
    axis that does not apply to an architecture keeps its default) and come in
    the order of the axes as written.
    """
    out: list[dict[str, Any]] = []
    seen: set[tuple] = set()
    no_n: list[tuple[str, str]] = []
    ax = search.axes
    for cat in ax["catalog"]:
        hw = catalogs[cat]
        if ax["radix"] or ax["link_speed"]:
            speeds = ax["link_speed"] or tuple(dict.fromkeys(s for s, _ in catalog_modes(hw))) or (search.base.get("link_speed", 400),)
            if ax["radix"]:
                pairs = [(s, r) for s in speeds for r in ax["radix"]]
            else:
                pairs = [(s, r) for s, r in catalog_modes(hw) if s in speeds]
        else:
            pairs = catalog_modes(hw) or [(search.base.get("link_speed", 400), search.base.get("radix"))]
        rest = [ax[a] or (None,) for a in ("planes", "oversubscription", "rail_packing", "leaf_packing", "scalable_unit", "striping", "design")]
        for arch, k, (speed, radix), planes, ratio, rp, lp, su, stp, des in product(ax["arch"], ax["hb_domain"], pairs, *rest):
            slow = _slower_than_nic(search, speed, planes)
            if slow:
                if (f"{cat} {speed}G", slow) not in no_n:
                    no_n.append((f"{cat} {speed}G", slow))
                continue
            g = search.scale_up.get(k) if isinstance(k, int) else None
            gpn = search.base.get("gpus_per_node") or g or k
            su_nodes = su if isinstance(su, int) else (search.base.get("scalable_unit") if isinstance(search.base.get("scalable_unit"), int) else None)
            n = gpus_for(search, k, su_nodes, gpn if isinstance(gpn, int) else 1) if isinstance(k, int) and k > 0 else None
            label = f"{arch} {cat} K={k}"
            if n is None:
                lo, hi, exact = search.gpus
                why = f"{lo:,} GPUs are no whole number of HB domains of {k}" if exact else f"no multiple of {k} GPUs from {lo:,} to {hi:,}"
                if (label, why) not in no_n:
                    no_n.append((label, why))
                continue
            o: dict[str, Any] = {"arch": arch, "catalog": cat, "hb_domain": k, "gpus": n, "link_speed": speed, "radix": radix}
            if g is not None and "gpus_per_node" not in search.base:
                o["gpus_per_node"] = g
            pair = des == "leaf-pair"  # one tier of two leaves: packing, SUs and striping do not apply (the spec refuses some)
            for key, v in (("planes", planes), ("oversubscription", ratio), ("scalable_unit", None if pair else su), ("striping", None if pair else stp), ("design", des)):
                if v is not None:
                    o[key] = v
            if arch == "rail-only" and rp is not None and not pair:
                o["rail_packing"] = rp
            if arch == "rail-optimized" and lp is not None and not pair:
                o["leaf_packing"] = lp
            key = tuple(sorted((a, str(b)) for a, b in o.items()))
            if key in seen:
                continue
            seen.add(key)
            out.append(o)
            if len(out) > MAX_POINTS:
                raise InputError([Problem("search.space", f"the space holds more than {MAX_POINTS:,} designs", "search fewer values at once")])
    return out, no_n
