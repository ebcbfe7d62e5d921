"""The cluster spec: parse YAML and CLI overrides into a frozen, checked :class:`Spec`.

Every input problem is collected (not just the first) and raised together as
one :class:`~topogen.util.errors.InputError`, each naming the field, the value and
what would be valid.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from topogen import __version__
from topogen.spec import counts, leafpair
from topogen.spec.counts import tier_role
from topogen.spec.fields import ARCH_CHOICES, DESIGN_CHOICES, HOMING_CHOICES, LEAF_PACKING_CHOICES, LIMITS, MAX_PLANES, PACKING_CHOICES, PROVISION_CHOICES, SPEC_FIELDS, STRIPING_CHOICES, as_int, homes_of, spec_arches, values_shape
from topogen.spec.addressing import DEFAULT as ADDRESSING_DEFAULT
from topogen.spec.addressing import NETWORK_DEFAULTS, check_networks, parse_addressing
from topogen.spec.layout import parse_layout
from topogen.spec.spares import parse_spares
from topogen.spec.naming import check_names, parse_naming
from topogen.spec.networks import parse_networks
from topogen.spec.units import parse_units
from topogen.spec.workload import parse_number, parse_workload
from topogen.spec.yamlfile import read_yaml
from topogen.util import inputs, resources
from topogen.util.errors import InputError, Problem, show, unknown_key
from topogen.util.inputs import CONTROL_RE
from topogen.spec import systems

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", re.ASCII)  # with fullmatch: no trailing newline
MAX_RATIO_PART = 4096  # oversubscription d:u, each part (a leaf has at most LIMITS["radix"] ports)

DEFAULTS: dict[str, Any] = {f.name: f.default for f in SPEC_FIELDS}  # the field table (topogen.spec.fields) is the one list of keys
OPTIONAL_KEYS = ("hb_bandwidth_gbps", "workload", "layout", "networks", "addressing", "scalable_unit", "max_scalable_units", "reserved_leaf_ports", "reserved_leaf_ports_per", "system", "spares", "naming")  # left out of to_dict()/the hash when unset
ALLOWED_KEYS = tuple(DEFAULTS)
REQUIRED = tuple(f.name for f in SPEC_FIELDS if f.required)
RATIO_RE = re.compile(r"\s*([0-9]{1,9})\s*:\s*([0-9]{1,9})\s*", re.ASCII)


@dataclass(frozen=True, slots=True)
class Spec:
    """A resolved cluster spec (see the README for every field)."""

    name: str
    gpus: int
    hb_domain: int
    radix: int
    link_speed: int
    arch: str
    rail_packing: str
    leaf_packing: str
    provision: str
    catalog: str
    planes: int
    gpus_per_node: int
    oversubscription: str
    hb_bandwidth_gbps: float | None = None
    workload: Any = None  # topogen.spec.workload.Workload
    layout: Any = None  # topogen.layout.LayoutSpec
    networks: Any = None  # topogen.spec.networks.NetworksSpec: storage, in-band, OOB (None: the compute fabric alone)
    addressing: Any = None  # topogen.spec.addressing.AddressingSpec
    scalable_unit: int | None = None  # nodes per SU (topogen/spec/units.py)
    max_scalable_units: int | None = None
    reserved_leaf_ports: int | None = None
    reserved_leaf_ports_per: str | None = None  # "su": every SU's leaves keep reserved_leaf_ports (None / "design": the last SU's)
    system: str | None = None  # templates/systems/<system>.yaml (None: from the workload's GPU, topogen.spec.systems.for_spec)
    base_dir: str = field(default="", compare=False)  # the spec file's directory: a relative catalog path in the file is read from there (not hashed)

    homing: str = "planes"  # "dual": the ports of a plane go to two leaves of the GPU's rail (no leaf-leaf link)
    backup_nodes: int = 0  # spare hosts among ``gpus``: wired like the others, not part of the job
    design: str = "clos"  # "leaf-pair": the Enterprise RA single tier, two leaves per plane joined by ISLs (topogen/fabric/leafpair.py)
    striping: str = "balanced"  # "minimal": the top tier has the fewest switches the ports need, parallel links uneven by one
    spares: Any = None  # topogen.spec.spares.SparesSpec: spares per SKU in the BOM (None: none)
    naming: Any = None  # topogen.spec.naming.NamingSpec: the site's names (None: topogen's own)

    tier_radix: tuple[int, ...] = ()  # per switch tier, leaf first, when radix is a list (the last repeats upward)
    tier_oversubscription: tuple[str, ...] = ()  # per tier below the top, leaf first, when given per tier
    tier_speed: tuple[int, ...] = ()  # Gb/s per link tier, GPU-leaf first, when link_speed is a list (the last repeats upward)

    @property
    def catalog_ref(self) -> str:
        """The catalog to load: a bundled name, or its path (resolved against the spec file's directory)."""
        return resolve_catalog_ref(self.catalog, self.base_dir)

    # per-tier accessors (tier 1 = leaf; link tier 1 = GPU-leaf) ---------------------------

    def radix_at(self, tier: int) -> int:
        """Radix of switch tier ``tier`` (1 = leaf); the list's last entry repeats upward."""
        r = self.tier_radix or (self.radix,)
        return r[min(tier, len(r)) - 1]

    def ratio_text_at(self, tier: int) -> str:
        """Down:up ratio of switch tier ``tier`` when it is below the top, as ``"d:u"`` (``"1:1"`` past the list)."""
        o = self.tier_oversubscription or (self.oversubscription,)
        return o[tier - 1] if tier <= len(o) else "1:1"

    def ratio_at(self, tier: int) -> float:
        """Down over up capacity of switch tier ``tier`` below the top (1.0 at 1:1)."""
        d, u = (int(x) for x in self.ratio_text_at(tier).split(":"))
        return d / u

    def speed_at(self, link_tier: int) -> int:
        """Gb/s of link tier ``link_tier`` (1 = GPU-leaf); the list's last entry repeats upward."""
        s = self.tier_speed or (self.link_speed,)
        return s[min(link_tier, len(s)) - 1]

    def radix_text(self) -> str:
        """``64`` or, per switch tier, ``32/288`` (leaf first)."""
        return "/".join(map(str, self.tier_radix)) if self.tier_radix else str(self.radix)

    def speeds_text(self) -> str:
        """``400`` or, per link tier, ``200/400`` (GPU-leaf first)."""
        return "/".join(map(str, self.tier_speed)) if self.tier_speed else str(self.link_speed)

    @property
    def shape(self) -> "counts.Shape":
        """The per-tier radix, uplink ports and link speeds that the generators and the closed form build."""
        return counts.shape_of(tuple(self.tier_radix or (self.radix,)), self.tier_oversubscription or (self.oversubscription,), self.tier_speed)

    @property
    def homes(self) -> int:
        """Leaves each GPU reaches in one plane: 2 when dual-homed, else 1."""
        return homes_of(self.homing)

    @property
    def nic_ports(self) -> int:
        """NIC ports per GPU, each at ``link_speed``: ``planes x homes``; port ``i`` is in plane ``i // homes``."""
        return self.planes * self.homes

    @property
    def units(self) -> "counts.Units":
        """Scalable units: HB domains per SU, the SUs the top tier is sized for, reserved leaf ports."""
        su = self.scalable_unit
        return counts.Units(su * self.gpus_per_node // self.hb_domain if su else 0, self.max_scalable_units or 0, self.reserved_leaf_ports or 0, self.reserved_leaf_ports_per == "su")

    @property
    def active_gpus(self) -> int:
        """GPUs of the job: ``gpus`` less the backup nodes' (they are wired and priced, but kept as spares)."""
        return self.gpus - self.backup_nodes * self.gpus_per_node

    @property
    def scale_out_gbps(self) -> float:
        """B_S: scale-out Gb/s per GPU, link speed x NIC ports (planes x homes). The one place the analyses read it."""
        return float(self.link_speed * self.planes * self.homes)

    @property
    def leaf_up(self) -> int:
        """Uplink ports of a leaf: ``radix/2`` at 1:1, ``radix·u/(d+u)`` for d:u."""
        d, u = (int(x) for x in self.oversubscription.split(":"))
        return self.radix * u // (d + u)

    @property
    def oversubscription_ratio(self) -> float:
        """Leaf downlink over uplink capacity (1.0 at 1:1)."""
        d, u = (int(x) for x in self.oversubscription.split(":"))
        return d / u

    def packs_rails(self, arch: str) -> bool:
        """Whether ``arch`` may put several whole rails on one switch.

        Rail-only follows ``rail_packing`` (the paper packs small rails); rail-optimized
        follows ``leaf_packing`` (rail-aligned leaves by default, as every field design).
        """
        return (self.leaf_packing if arch == "rail-optimized" else self.rail_packing) == "shared"

    @property
    def domains(self) -> int:
        return self.gpus // self.hb_domain

    @property
    def nodes(self) -> int:
        """Compute nodes (hosts): ``gpus / gpus_per_node``; one per HB domain by default."""
        return self.gpus // self.gpus_per_node

    @property
    def arches(self) -> tuple[str, ...]:
        return ("rail-optimized", "rail-only") if self.arch == "both" else (self.arch,)

    def to_dict(self) -> dict[str, Any]:
        """Every resolved field (defaults filled in): what summary.json echoes and the hash covers."""
        d = asdict(self)
        del d["base_dir"]
        if self.workload is not None:
            d["workload"] = self.workload.to_dict()  # the input schema, so the dict parses back to this spec
        if self.networks is not None:
            d["networks"] = self.networks.to_dict()
        if self.addressing is not None:  # the other networks' keys only where set: a spec written before them keeps its hash
            d["addressing"] = {k: v for k, v in d["addressing"].items() if k not in NETWORK_DEFAULTS or v != NETWORK_DEFAULTS[k]}
        # per-tier lists are echoed where the user wrote them (a uniform spec's hash is unchanged)
        tr, to, ts = d.pop("tier_radix"), d.pop("tier_oversubscription"), d.pop("tier_speed")
        if tr:
            d["radix"] = list(tr)
        if to:
            d["oversubscription"] = list(to)
        if ts:
            d["link_speed"] = list(ts)
        if self.naming is not None:
            d["naming"] = self.naming.to_dict()
        if d["spares"] is not None:  # the categories with a rule of their own
            d["spares"] = {k: v for k, v in d["spares"].items() if v is not None}
        for key in OPTIONAL_KEYS:
            if d[key] is None:
                del d[key]
        if not self.backup_nodes:
            del d["backup_nodes"]
        if self.design == "clos":  # the default: the spec as before the field existed (same hash)
            del d["design"]
        if self.striping == "balanced":  # the default: the spec as before the field existed (same hash)
            del d["striping"]
        if self.homing == "planes":  # nic_ports == planes: the spec as before the fields existed (same hash)
            del d["homing"]
        else:
            d["nic_ports"] = self.nic_ports
        return d

    def digest(self) -> str:
        """sha256 of the canonical JSON of the spec: the provenance stamp of every output."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    def provenance(self) -> str:
        return f"topogen {__version__}; spec {self.name} sha256:{self.digest()[:16]}"


def available_catalogs() -> list[str]:
    """Names of the bundled hardware catalogs (``topogen catalogs`` lists them)."""
    return resources.template_names("catalogs")


def available_presets() -> list[str]:
    """Names of the bundled cluster presets (``topogen presets`` lists them)."""
    return resources.template_names("clusters")


def resolve_spec_path(ref: str):
    """A spec argument is a path, or the name of a bundled preset (``topogen presets``)."""
    p = Path(ref)
    if inputs.is_file(p) or p.suffix in (".yaml", ".yml") or "/" in ref:
        return p
    preset = resources.template_path("clusters", ref)
    if preset is None:
        presets = available_presets()
        raise InputError([Problem("spec", f"no preset named {show(ref)}{resources.did_you_mean(ref, presets)}", f"give a YAML file or a preset name ({', '.join(presets)}); `topogen presets` lists them")])
    return preset


def read_spec_file(path) -> dict[str, Any]:
    """Read a YAML spec file into a mapping; syntax errors name the line."""
    data = read_yaml(path, "spec", str(path), Problem("spec", f"file {str(path)!r} does not exist", "give a YAML file or a preset name; `topogen presets` lists them"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError([Problem("spec", f"{path} holds a {type(data).__name__}, not a mapping of fields", f"write 'key: value' lines with keys from: {', '.join(ALLOWED_KEYS)}")])
    return data


def resolve_catalog_ref(ref: str, base_dir: str = "") -> str:
    """A bundled catalog name as is; a relative path joined to ``base_dir`` (the spec file's directory)."""
    if not base_dir or ref in available_catalogs() or Path(ref).is_absolute():
        return ref
    return str(Path(base_dir) / ref)


def plain_number(flag: Any) -> bool:
    """A flag value fit for a default name ``n<N>-k<K>-r<radix>`` (bad values are reported on their own)."""
    return isinstance(flag, str) and flag.isascii() and flag.isdigit() and len(flag) <= 12


def _catalog_known(ref: str) -> bool:
    if ref in available_catalogs():
        return True
    p = Path(ref)
    return p.suffix in (".yaml", ".yml") and inputs.is_file(p)


def build_spec(data: Mapping[str, Any], overrides: Mapping[str, Any] | None = None, default_name: str = "cluster", base_dir: str = "") -> Spec:
    """Merge file data and overrides (non-None values win), check everything, return a Spec.

    ``base_dir`` is the directory of the file ``data`` came from: a relative catalog
    path written there is read from it (a ``--catalog`` flag is relative to the cwd).

    Raises :class:`InputError` listing every problem found.
    """
    problems: list[Problem] = []
    merged: dict[str, Any] = dict(DEFAULTS)
    unknown = sorted(str(k) for k in data if k not in DEFAULTS)
    for key in unknown:
        problems.append(unknown_key(key, ALLOWED_KEYS, "", "spec key"))
    merged.update({k: v for k, v in data.items() if k in DEFAULTS})
    merged.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if merged["name"] is None:
        merged["name"] = default_name

    values: dict[str, Any] = {}
    merged["radix"] = _radix_list(merged["radix"], values, problems)
    merged["link_speed"] = _speed_list(merged["link_speed"], values, problems)
    for key in ("gpus", "hb_domain", "radix", "link_speed", "planes"):
        raw = merged[key]
        if raw is REPORTED:
            continue
        if raw is None:
            problems.append(Problem(key, f"{key} is required", f"set {key}: {_int_hint(key)}"))
            continue
        n = as_int(raw)
        if n is None or n <= 0:
            problems.append(Problem(key, f"{key} must be a positive whole number, got {show(raw)}", _int_hint(key)))
            continue
        if n > LIMITS[key]:
            problems.append(Problem(key, f"{key} must be at most {LIMITS[key]:,}, got {show(raw)}", _int_hint(key)))
            continue
        values[key] = n

    for key, choices in (("arch", ARCH_CHOICES), ("rail_packing", PACKING_CHOICES), ("leaf_packing", LEAF_PACKING_CHOICES), ("provision", PROVISION_CHOICES), ("striping", STRIPING_CHOICES), ("design", DESIGN_CHOICES)):
        raw = merged[key]
        if raw not in choices:
            problems.append(Problem(key, f"unknown {key} {show(raw)}", f"valid values: {', '.join(choices)}"))
        else:
            values[key] = raw

    name = merged["name"]
    if isinstance(name, int) and not isinstance(name, bool) and 0 <= name < 10**30:
        name = str(name)  # name: 2024 means the directory 2024
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name in (".", ".."):
        problems.append(Problem("name", f"name {show(name)} is not a safe directory name", "use letters, digits, '.', '_' or '-', starting with a letter or digit, no '/' and at most 100 characters"))
    else:
        values["name"] = name

    cat = merged["catalog"]
    base = base_dir if (overrides or {}).get("catalog") is None else ""
    if isinstance(cat, str) and CONTROL_RE.search(cat):
        problems.append(Problem("catalog", f"catalog {show(cat)} contains a control character", "give a bundled catalog name or a plain path"))
    elif not isinstance(cat, str) or not _catalog_known(resolve_catalog_ref(cat, base)):
        near = resources.did_you_mean(cat, available_catalogs()) if isinstance(cat, str) else ""
        problems.append(Problem("catalog", f"unknown catalog {show(cat)}{near}", f"use one of: {', '.join(available_catalogs())}, or a path to a catalog .yaml file"))
    else:
        values["catalog"] = cat

    _node_size(merged["gpus_per_node"], values, problems)
    _system(merged["system"], values, problems)
    planes_given = "planes" in data or (overrides or {}).get("planes") is not None
    _nic_ports(merged["nic_ports"], merged["homing"], planes_given, values, problems)
    _ratios(merged["oversubscription"], values, problems)
    parse_units(merged, values, problems)
    _backups(merged["backup_nodes"], values, problems)
    _cross_checks(values, problems)
    _leaf_pair_checks(values, problems)
    _analysis_fields(merged, values, problems)
    if not problems and values["naming"] is not None:  # the names need the counts, checked above
        su = values.get("scalable_unit")
        check_names(values["naming"], values["gpus"], values["hb_domain"], values["gpus_per_node"], su * values["gpus_per_node"] // values["hb_domain"] if su else 0, values["planes"] * homes_of(values["homing"]), homes_of(values["homing"]), problems)
    if problems:
        raise InputError(problems)
    derived = {k: values[k] for k in ("tier_radix", "tier_oversubscription", "tier_speed") if k in values}
    return Spec(**{k: values.get(k) if k in OPTIONAL_KEYS else values[k] for k in ALLOWED_KEYS if k != "nic_ports"}, base_dir=base, **derived)


def _system(raw: Any, values: dict[str, Any], problems: list[Problem]) -> None:
    """``system``: a bundled system definition holding ``gpus_per_node`` GPUs."""
    if raw is None:
        return

    known = systems.names()
    if not isinstance(raw, str) or raw not in known:
        near = resources.did_you_mean(raw, known) if isinstance(raw, str) else ""
        problems.append(Problem("system", f"unknown system {show(raw)}{near}", f"bundled systems (templates/systems/): {', '.join(known)}"))
        return
    s = systems.load(raw)
    per = values.get("gpus_per_node") or values.get("hb_domain")
    if per is not None and s.gpus != per:
        problems.append(Problem("system", f"system {raw} holds {s.gpus} GPUs, but a node here has {per} (gpus_per_node)", f"set gpus_per_node: {s.gpus}, or leave system out for a generic node"))
        return
    values["system"] = raw


def _analysis_fields(merged: Mapping[str, Any], values: dict[str, Any], problems: list[Problem]) -> None:
    """``hb_bandwidth_gbps`` and the ``workload:`` section (parsed by topogen.spec.workload)."""
    raw = merged["hb_bandwidth_gbps"]
    if raw is not None:
        v = parse_number(raw)
        if v is None or v <= 0:
            problems.append(Problem("hb_bandwidth_gbps", f"hb_bandwidth_gbps must be a positive number of Gb/s per GPU, got {show(raw)}", "7200 for NVLink 4 (900 GB/s), 14400 for NVLink 5 (1.8 TB/s), 7680 for DGX GH200"))
        else:
            values["hb_bandwidth_gbps"] = v
    values["workload"] = parse_workload(merged["workload"], values.get("gpus"), values.get("hb_domain"), problems)
    values["layout"] = parse_layout(merged["layout"], values, problems)
    values["networks"] = parse_networks(merged["networks"], problems)
    values["addressing"] = parse_addressing(merged["addressing"], problems)
    values["spares"] = parse_spares(merged["spares"], problems)
    values["naming"] = parse_naming(merged["naming"], problems)
    if values["networks"] is not None and (merged["addressing"] is None or values["addressing"] is not None):
        check_networks(values["addressing"] or ADDRESSING_DEFAULT, problems)  # the in-band and OOB pools, only when those networks exist


def _nic_ports(raw: Any, homing: Any, planes_given: bool, values: dict[str, Any], problems: list[Problem]) -> None:
    """``nic_ports`` and ``homing``: ``nic_ports = planes x homes`` (homes 2 when dual-homed, else 1).

    With ``homing: planes`` (the default) every NIC port is its own plane, so
    ``nic_ports: 2`` is ``planes: 2``. With ``homing: dual`` each plane takes a
    port pair, on two leaves of the GPU's rail: ``nic_ports: 2`` is one plane,
    ``nic_ports: 4`` two. ``planes`` and ``nic_ports`` may both be given only when
    they agree; either alone sets the other.
    """
    if homing not in HOMING_CHOICES:
        problems.append(Problem("homing", f"unknown homing {show(homing)}", "valid values: planes (each NIC port its own plane, the default), dual (each plane's port pair on two leaves of the GPU's rail, no link between them)"))
        return
    values["homing"] = homing
    homes = homes_of(homing)
    planes = values.get("planes")
    if raw is None:
        return
    n = as_int(raw)
    if n is None or n <= 0 or n > LIMITS["nic_ports"]:
        problems.append(Problem("nic_ports", f"nic_ports must be a whole number from 1 to {LIMITS['nic_ports']}, got {show(raw)}", _int_hint("nic_ports")))
        return
    if n % homes:
        problems.append(Problem("nic_ports", f"nic_ports {n} is odd, but homing: dual puts each plane's ports in pairs on two leaves", "use an even nic_ports (2 for one dual-homed plane, 4 for two), or homing: planes"))
        return
    if planes is None:
        return
    if planes_given and n != planes * homes:
        if homing == "dual":
            hint = f"drop planes (nic_ports {n} with homing: dual is {n // 2} plane(s) of two ports), or set nic_ports: {planes * 2}"
        else:
            hint = f"drop planes (it follows from nic_ports with homing: planes), or set nic_ports: {planes}, or homing: dual for ports paired on two leaves"
        problems.append(Problem("nic_ports", f"nic_ports {n} contradicts planes {planes}: with homing: {homing} a GPU has planes x {homes} NIC port(s), {planes * homes}", hint))
        return
    if n // homes > MAX_PLANES:
        problems.append(Problem("nic_ports", f"nic_ports {n} with homing: {homing} means {n // homes} planes; at most {MAX_PLANES} are supported", _int_hint("nic_ports")))
        return
    values["planes"] = n // homes


def _backups(raw: Any, values: dict[str, Any], problems: list[Problem]) -> None:
    """``backup_nodes``: spare hosts among ``gpus`` (0 by default), fewer than all, whole HB domains of GPUs."""
    b = as_int(raw)
    if b is None or b < 0:
        problems.append(Problem("backup_nodes", f"backup_nodes must be a whole number of hosts, 0 or more, got {show(raw)}", "spare hosts among gpus, wired like the others but not part of the job (e.g. 8 per 128 hosts)"))
        return
    n, k, g = values.get("gpus"), values.get("hb_domain"), values.get("gpus_per_node")
    if None in (n, k, g) or b == 0:
        values["backup_nodes"] = b
        return
    if b * g >= n:
        problems.append(Problem("backup_nodes", f"backup_nodes {b} ({b * g:,} GPUs) leave no active GPU of the {n:,}", f"use fewer than {n // g:,} hosts"))
        return
    if (b * g) % k:
        step = k // g
        problems.append(Problem("backup_nodes", f"backup_nodes {b} hold {b * g:,} GPUs, not a whole number of HB domains of {k}", f"use a multiple of {step} (whole HB domains stay out of the job)"))
        return
    values["backup_nodes"] = b


def _node_size(raw: Any, values: dict[str, Any], problems: list[Problem]) -> None:
    """``gpus_per_node``: default hb_domain; else a positive whole number dividing hb_domain.

    A node (host, compute tray) never spans HB domains, and the domains are
    split into equal nodes, so it must divide K.
    """
    k = values.get("hb_domain")
    if raw is None:
        if k is not None:
            values["gpus_per_node"] = k
        return
    g = as_int(raw)
    if g is None or g <= 0:
        problems.append(Problem("gpus_per_node", f"gpus_per_node must be a positive whole number, got {show(raw)}", _int_hint("gpus_per_node")))
        return
    if k is None:
        return
    if k % g:
        hint = f"use one of {', '.join(map(str, counts.divisors(k)))}"
        problems.append(Problem("gpus_per_node", f"gpus_per_node {g} does not divide hb_domain {k}", hint))
        return
    values["gpus_per_node"] = g


def _split_list(raw: Any, key: str, problems: list[Problem]) -> list[Any] | None:
    """A per-tier value written as a YAML list or a string split by ``/`` or ``,`` (``32/288``, ``32,288``); None otherwise.

    ``/`` is the per-tier separator everywhere (``topogen compare`` sweeps values split by ``,``);
    a string holding both is ambiguous: reported naming ``key``, and REPORTED returned.
    """
    if isinstance(raw, (list, tuple)):
        return list(raw)
    if not isinstance(raw, str):
        return None
    if "," in raw and "/" in raw:
        example = {"radix": "32/288,64", "oversubscription": "3:1/1:1,1:1"}.get(key, "200/400,400")
        problems.append(
            Problem(
                key,
                f"{key} {raw!r} mixes ',' and '/': one value per tier is written a/b (or a,b)",
                f"in topogen compare ',' separates the swept values and '/' the tiers of one value, e.g. --{key.replace('_', '-')} {example}",
            )
        )
        return REPORTED  # type: ignore[return-value]
    if "," in raw or "/" in raw:
        return [x.strip() for x in raw.replace("/", ",").split(",")]
    return None


REPORTED = object()  # a field whose problem is already reported: later checks skip it


def _whole_list(raw: Any, key: str, per: str, unit: str, example: str, problems: list[Problem]) -> Any:
    """A per-tier list of whole numbers (YAML list or ``a,b``): the numbers, None when ``raw`` is no list, or REPORTED."""
    items = _split_list(raw, key, problems)
    if items is None or items is REPORTED:
        return items
    if len(items) > counts.MAX_TIERS:
        problems.append(Problem(key, f"{key} lists {len(items)} {per.split(',')[0].removeprefix('one per ')}s; at most {counts.MAX_TIERS} are supported", f"{per}; the last entry repeats upward"))
        return REPORTED
    nums = [as_int(x) for x in items]
    bad = [f"{key}[{i}]" for i, x in enumerate(nums) if x is None or x <= 0 or x > LIMITS[key]]
    if not items or bad:
        which = f" ({', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not)" if items and bad and len(items) > 1 else ""
        problems.append(Problem(key, f"{key} must be a positive whole number{unit} (at most {LIMITS[key]:,}) or a list of them ({per}){which}, got {show(raw)}", example))
        return REPORTED
    return nums


def _radix_list(raw: Any, values: dict[str, Any], problems: list[Problem]) -> Any:
    """``radix`` as a list per switch tier (leaf first): check each entry; return the leaf's for the scalar checks."""
    nums = _whole_list(raw, "radix", "one per switch tier, leaf first", "", "e.g. radix: 64, or radix: [32, 288] for 32-port leaves under 288-port spines", problems)
    if nums is None or nums is REPORTED:
        return raw if nums is None else REPORTED
    if len(set(nums)) > 1:
        values["tier_radix"] = tuple(nums)  # type: ignore[arg-type]
    return nums[0]


def _speed_list(raw: Any, values: dict[str, Any], problems: list[Problem]) -> Any:
    """``link_speed`` as a list per link tier (GPU-leaf first): each entry a whole multiple of the one below it.

    A tier's radix counts ports at its downlink speed; an uplink k times faster takes k
    of them, so each speed must be a whole multiple of the speed of the link tier below.
    Returns the GPU-leaf speed for the scalar checks.
    """
    nums = _whole_list(raw, "link_speed", "one per link tier, GPU-leaf first", " of Gb/s", "e.g. link_speed: 400, or link_speed: [200, 400] for 200G NICs under 400G uplinks", problems)
    if nums is None or nums is REPORTED:
        return raw if nums is None else REPORTED
    for i in range(1, len(nums)):
        lo, hi = nums[i - 1], nums[i]
        if hi % lo:  # type: ignore[operator]
            problems.append(Problem(f"link_speed[{i}]", f"link_speed[{i}] {hi} Gb/s is not a whole multiple of link_speed[{i - 1}] {lo} Gb/s", f"a switch's radix counts ports at its downlink speed and an uplink takes a whole number of them: use {lo} or a multiple such as {2 * lo}"))  # type: ignore[operator]
            return REPORTED
    if len(set(nums)) > 1:
        values["tier_speed"] = tuple(nums)  # type: ignore[arg-type]
    return nums[0]


def _factor(values: Mapping[str, Any], tier: int) -> int:
    """How many of switch tier ``tier``'s ports (counted at its downlink speed) one uplink takes."""
    ts = values.get("tier_speed")
    if not ts:
        return 1
    return ts[min(tier + 1, len(ts)) - 1] // ts[min(tier, len(ts)) - 1]


ROLE_TIERS = {"leaf": 1, "spine": 2, "core": 3, "tier4": 4, "tier5": 5, "tier6": 6}


def _ratios(raw: Any, values: dict[str, Any], problems: list[Problem]) -> None:
    """``oversubscription``: one ratio (the leaf's), a list per tier below the top (leaf first), or a mapping by role."""
    if isinstance(raw, dict):
        bad = [str(k) for k in raw if k not in ROLE_TIERS]
        if bad:
            problems.append(Problem("oversubscription", f"oversubscription names unknown tier role(s) {', '.join(map(repr, bad))}", f"use roles {', '.join(ROLE_TIERS)}, e.g. {{leaf: '1:1', spine: '15:1'}}"))
            return
        top = max((ROLE_TIERS[k] for k in raw), default=1)
        items = [raw.get(role, "1:1") for role, j in sorted(ROLE_TIERS.items(), key=lambda x: x[1]) if j <= top]
    else:
        items = _split_list(raw, "oversubscription", problems)
        if items is REPORTED:
            return
    if items is None:
        _ratio(raw, values, problems, "oversubscription", 1)
        return
    if not items or len(items) > counts.MAX_TIERS - 1:
        problems.append(Problem("oversubscription", f"oversubscription lists {len(items)} tiers", f"one ratio per tier below the top, leaf first, at most {counts.MAX_TIERS - 1}"))
        return
    out = []
    for j, x in enumerate(items, start=1):
        got = _ratio(x, values, problems, f"oversubscription[{j - 1}]", j)
        if got is None:
            return
        out.append(got)
    values["oversubscription"] = out[0]
    while out and out[-1] == "1:1":
        out.pop()
    if len(out) > 1:
        values["tier_oversubscription"] = tuple(out)


def _ratio(raw: Any, values: dict[str, Any], problems: list[Problem], field: str = "oversubscription", tier: int = 1) -> str | None:
    """One down:up ratio as ``"d:u"`` (or a number d meaning d:1), at least 1:1, for switch tier ``tier``.

    The tier's ports must split exactly: ``radix·u/(d+u)`` uplinks (not with ``design: leaf-pair``,
    whose ISLs are the GPU ports' share, rounded up). Stored reduced ("48:16" -> "3:1").
    """
    from math import gcd

    role = tier_role(tier)
    m = RATIO_RE.fullmatch(raw) if isinstance(raw, str) and len(raw) < 100 else None
    if isinstance(raw, int) and not isinstance(raw, bool):
        d, u = raw, 1
    elif m:
        d, u = int(m.group(1)), int(m.group(2))
    else:
        problems.append(Problem(field, f"oversubscription must be a ratio down:up such as '3:1', got {show(raw)}", "write it as \"d:u\" with whole numbers, e.g. 1:1 (the default, non-blocking), 3:1 or 7:1"))
        return None
    if max(d, u) > MAX_RATIO_PART:
        problems.append(Problem(field, f"oversubscription parts must be at most {MAX_RATIO_PART:,}, got {show(raw)}", f"a {role} has at most 4,096 ports; e.g. 3:1 or 7:1"))
        return None
    if u <= 0 or d < u:
        problems.append(Problem(field, f"oversubscription {d}:{u} is below 1:1", f"a {role} needs at least as many Gb/s down as up: use 1:1 or more, e.g. 3:1"))
        return None
    g = gcd(d, u)
    d, u = d // g, u // g
    tr = values.get("tier_radix")
    r = (tr[min(tier, len(tr)) - 1] if tr else values.get("radix")) if "radix" in values else None
    f = _factor(values, tier)  # ports one uplink takes (an uplink f times faster than the downlinks)
    if r is not None and (d, u) != (1, 1) and values.get("design") != "leaf-pair" and (r * u) % (f * (d + u)):  # a leaf pair's GPU:ISL ports need no exact split
        def name(up: int) -> str:
            g2 = gcd(r - f * up, f * up)
            return f"{(r - f * up) // g2}:{f * up // g2} ({r - f * up} down, {up} up)"

        exact = r * u / (f * (d + u))
        near = [up for up in sorted({int(exact), int(exact) + 1}) if 1 <= f * up <= r // 2]
        simple = sorted(((r - f * up) // gcd(r - f * up, f * up), f * up // gcd(r - f * up, f * up)) for up in range(1, r // (2 * f) + 1))
        simple = sorted(simple, key=lambda x: (x[0] + x[1], x))[:5]
        at = "" if f == 1 else f", uplinks {f}x faster taking {f} ports each"
        problems.append(
            Problem(
                field,
                f"oversubscription {d}:{u} does not split a {r}-port {role} into whole down and up ports ({r}·{u}/{d + u}{'' if f == 1 else f'/{f}'} uplinks{at})",
                f"nearest: {' or '.join(name(x) for x in near) or 'none'}; simple ratios for radix {r}: {', '.join(f'{x}:{y}' for x, y in simple)}",
            )
        )
        return None
    values["oversubscription"] = f"{d}:{u}"
    return f"{d}:{u}"


def _int_hint(key: str) -> str:
    return {
        "gpus": "the number of GPUs N, a multiple of hb_domain (e.g. 1024)",
        "hb_domain": "GPUs per HB domain K (8 for DGX H100, 72 for GB200 NVL72, 256 for GH200)",
        "radix": "switch ports at link speed, an even number (e.g. 64)",
        "link_speed": "NIC/link speed in Gb/s (e.g. 400 or 800)",
        "planes": "NIC ports (independent fabric planes) per GPU, 1 to 8",
        "nic_ports": "NIC ports per GPU, each at link_speed: planes x 1 with homing: planes, planes x 2 with homing: dual (e.g. 2 for one dual-homed 2 x 200G NIC)",
        "gpus_per_node": "GPUs per compute node (host), dividing hb_domain (8 for DGX H100, 4 for GB200 NVL72 trays, 1 for GH200 superchips); default hb_domain",
    }[key]


def _cross_checks(v: dict[str, Any], problems: list[Problem]) -> None:
    """Checks between fields, run only on fields that are individually valid."""
    if "gpus" in v and "hb_domain" in v and v["gpus"] % v["hb_domain"]:
        n, k = v["gpus"], v["hb_domain"]
        lo, hi = (n // k) * k, (n // k + 1) * k
        near = f"{lo} or {hi}" if lo else f"{hi}"
        problems.append(Problem("gpus", f"gpus {n} is not a whole number of HB domains of {k}", f"use a multiple of hb_domain, e.g. {near}"))
        return
    if not all(k in v for k in ("gpus", "hb_domain", "radix")) or v.get("design") == "leaf-pair":
        return  # a leaf pair is one tier: _leaf_pair_checks
    n, k, r = v["gpus"], v["hb_domain"], v["radix"]
    leaf_shared = v.get("leaf_packing", "aligned") == "shared"
    radixes = v.get("tier_radix") or (r,)
    shape = values_shape(v)
    units = v.get("units", counts.NO_UNITS)
    ups = shape.ups
    arches = spec_arches(v)
    homes = homes_of(v.get("homing"))
    tiers = {}
    for arch in arches:
        if min(radixes) < 2:
            tiers[arch] = counts.UNBOUNDED
        elif arch == "rail-optimized":
            tiers[arch] = counts.rail_optimized_tiers(n, k, shape, leaf_shared, homes=homes, units=units)
        elif arch == "rail-only":
            tiers[arch] = counts.rail_only_tiers(n, k, shape, homes=homes, units=units)
    # a 1:1 tier below the top splits its ports evenly up and down
    odd: dict[int, list[str]] = {}
    for arch, t in tiers.items():
        for j in range(1, min(t, counts.MAX_TIERS + 1)):
            if shape.radix_at(j) % (2 * shape.factor(j)) and (j > len(ups) or ups[j - 1] is None):
                odd.setdefault(j, []).append(arch)
    if odd:
        j = min(odd)
        rj, where, f = shape.radix_at(j), odd[j], shape.factor(j)
        what = f"radix {rj}" if len(radixes) == 1 else f"radix {rj} of the {tier_role(j)} tier"
        if f > 1:
            m = 2 * f
            near = " or ".join(str(x) for x in (rj - rj % m, rj - rj % m + m) if x > 0)
            problems.append(Problem("radix", f"{what} at {shape.speed_at(j)}G does not split 1:1 into {rj // 2} port(s) down and {shape.speed_at(j + 1)}G uplinks taking {f} ports each", f"use a radix that is a multiple of {m}, e.g. {near}"))
            return
        problems.append(Problem("radix", f"{what} is odd, but the {' and '.join(where)} {'fabrics need' if len(where) > 1 else 'fabric needs'} more than one tier, and a 1:1 tier splits ports evenly up and down", f"use an even radix such as {rj - 1} or {rj + 1}" if rj > 2 else "use an even radix of at least 4"))
        return
    deep = {a: t for a, t in tiers.items() if t is not None and t > counts.MAX_TIERS}
    if deep:
        a, t = next(iter(deep.items()))
        need = f"{t} tiers" if t <= 64 else "more tiers than any real fabric"
        problems.append(Problem("radix", f"{n} GPUs in HB domains of {k} with radix {r} would need {need} ({a})", f"at most {counts.MAX_TIERS} tiers are supported; use a larger radix or fewer GPUs"))


def _leaf_pair_checks(v: dict[str, Any], problems: list[Problem]) -> None:
    """``design: leaf-pair``: one tier, NICs split A-B-B-A per node, and the pair's ports must hold GPUs and ISLs."""
    if v.get("design") != "leaf-pair":
        return
    why = "design: leaf-pair is one tier of two leaves per plane"
    if v.get("homing") == "dual":
        problems.append(Problem("homing", "design: leaf-pair already puts each node's NICs on two leaves (A-B-B-A), so homing: dual has no second pair to go to", "use homing: planes (the default), or design: clos for dual-homed leaves"))
    gpn = v.get("gpus_per_node")
    if gpn is not None and gpn % 2:
        problems.append(Problem("gpus_per_node", f"design: leaf-pair splits each node's NICs A-B-B-A over two leaves, but a node has {gpn} GPU(s), an odd number", "use an even gpus_per_node (8 for HGX/DGX nodes), or design: clos"))
    if v.get("max_scalable_units"):
        problems.append(Problem("max_scalable_units", f"{why}: there is no tier above the leaves to size for growth", "drop max_scalable_units, or use design: clos"))
    for key, per_tier in (("radix", "tier_radix"), ("link_speed", "tier_speed"), ("oversubscription", "tier_oversubscription")):
        if len(v.get(per_tier) or ()) > 1:
            problems.append(Problem(key, f"{why}: {key} is given per tier", f"give one {key} (the leaves'), or use design: clos"))
    if problems or not all(k in v for k in ("gpus", "radix", "oversubscription")):
        return
    reserved = v.get("reserved_leaf_ports") or 0
    for arch in spec_arches(v):
        lp = leafpair.plan(v["gpus"], v["radix"], v["oversubscription"], arch == "rail-only", reserved)
        if not lp.fits:
            d, u = (int(x) for x in v["oversubscription"].split(":"))
            most = lp.max_gpus(d, 0 if arch == "rail-only" else u)
            isl = f" and {lp.isls} inter-switch link port(s) (GPU:ISL ports {v['oversubscription']})" if lp.isls else ""
            res = f" and {reserved} reserved port(s)" if reserved else ""
            problems.append(Problem(
                "design",
                f"a leaf pair ({arch}) holds at most {most:,} GPUs on {v['radix']}-port leaves: {v['gpus']:,} GPUs need {lp.gpu_ports:,} GPU port(s) on each leaf{isl}{res}, {lp.ports_needed:,} in all",
                "use design: clos (a spine tier joins the leaves), a larger radix, or an oversubscription such as '2:1' (fewer ISLs)",
            ))
            return


def load_spec(ref: str | None, overrides: Mapping[str, Any] | None = None) -> Spec:
    """Load a spec from a YAML path or preset name (or none: flags only) plus overrides."""
    if ref is None:
        return build_spec({}, overrides, default_name="cluster")
    path = resolve_spec_path(ref)
    data = read_spec_file(path)
    base = str(path.parent) if isinstance(path, Path) else ""  # bundled presets name bundled catalogs
    return build_spec(data, overrides, default_name=Path(path.name).stem, base_dir=base)
