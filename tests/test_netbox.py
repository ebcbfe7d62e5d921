"""NetBox files against NetBox 4.x bulk import: field names, choices, lookups, sizes, and two clusters side by side.

No NetBox runs here. The allowed fields and choices below are written from
NetBox 4.x's bulk-import forms (``dcim/forms/bulk_import.py``: SiteImportForm,
ManufacturerImportForm, DeviceRoleImportForm, DeviceTypeImportForm,
DeviceImportForm, InterfaceImportForm, CableImportForm) and its choice sets
(``dcim/choices.py``). :class:`NetBox` imports the files with the lookup
rules those forms use: a device of the interface import is found by name
alone (``"hb00" is not a unique value for this field`` when two sites share
it); a cable end by site + device name; a device name is unique per site; an
interface takes one cable. Two architectures of two clusters whose node names
overlap are imported into one instance.
"""

from __future__ import annotations

import copy
import csv
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.exports.netbox import dcim as netbox

# --- NetBox 4.x bulk-import fields (all optional fields listed, so a typo is caught) -----------

FIELDS = {
    "sites.csv": {"name", "slug", "status", "region", "group", "tenant", "facility", "time_zone", "description", "physical_address", "shipping_address", "latitude", "longitude", "comments", "tags"},
    "manufacturers.csv": {"name", "slug", "description", "tags"},
    "device-roles.csv": {"name", "slug", "color", "vm_role", "config_template", "description", "tags"},
    "device-types.csv": {"manufacturer", "default_platform", "model", "slug", "part_number", "u_height", "exclude_from_utilization", "is_full_depth", "subdevice_role", "airflow", "description", "weight", "weight_unit", "comments", "tags"},
    "rack-roles.csv": {"name", "slug", "color", "description", "tags"},
    "racks": {"site", "location", "name", "facility_id", "tenant", "status", "role", "rack_type", "form_factor", "serial", "asset_tag", "width", "u_height", "starting_unit", "desc_units", "outer_width", "outer_height", "outer_depth", "outer_unit", "mounting_depth", "airflow", "weight", "max_weight", "weight_unit", "description", "comments", "tags"},
    "devices": {"name", "role", "tenant", "manufacturer", "device_type", "platform", "serial", "asset_tag", "status", "site", "location", "rack", "position", "face", "parent", "device_bay", "airflow", "virtual_chassis", "vc_position", "vc_priority", "cluster", "description", "config_template", "comments", "tags"},
    "interfaces": {"device", "name", "label", "parent", "bridge", "lag", "type", "speed", "duplex", "mtu", "wwn", "mgmt_only", "description", "mode", "vrf", "poe_mode", "poe_type", "enabled", "mark_connected", "tags"},
    "cables": {"side_a_site", "side_a_device", "side_a_type", "side_a_name", "side_b_site", "side_b_device", "side_b_type", "side_b_name", "type", "status", "tenant", "label", "color", "length", "length_unit", "description", "comments", "tags"},
}
REQUIRED = {
    "sites.csv": {"name", "slug", "status"},
    "manufacturers.csv": {"name", "slug"},
    "device-roles.csv": {"name", "slug"},
    "device-types.csv": {"manufacturer", "model", "slug", "u_height"},  # NetBox 4.6.8: "u_height: This field is required"
    "rack-roles.csv": {"name", "slug", "color"},
    "racks": {"site", "name", "status", "width", "u_height"},
    "devices": {"role", "manufacturer", "device_type", "status", "site"},
    "interfaces": {"device", "name", "type"},
    "cables": {"side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name"},
}
SITE_STATUS = {"planned", "staging", "active", "decommissioning", "retired"}
RACK_STATUS = {"reserved", "available", "planned", "active", "deprecated"}
RACK_WIDTHS = {"10", "19", "21", "23"}
FACES = {"front", "rear"}
DEVICE_STATUS = {"offline", "active", "planned", "staged", "failed", "inventory", "decommissioning"}
CABLE_STATUS = {"connected", "planned", "decommissioning"}
CABLE_TYPES = {
    "", "cat3", "cat5", "cat5e", "cat6", "cat6a", "cat7", "cat7a", "cat8", "dac-active", "dac-passive", "mrj21-trunk", "coaxial",
    "mmf", "mmf-om1", "mmf-om2", "mmf-om3", "mmf-om4", "mmf-om5", "smf", "smf-os1", "smf-os2", "aoc", "power",
}  # fmt: skip
LENGTH_UNITS = {"", "km", "m", "cm", "mi", "ft", "in"}
INTERFACE_TYPES = {
    "other", "100gbase-x-qsfp28", "200gbase-x-qsfp56", "400gbase-x-qsfpdd", "400gbase-x-osfp", "800gbase-x-qsfpdd", "800gbase-x-osfp",
    "infiniband-sdr", "infiniband-ddr", "infiniband-qdr", "infiniband-fdr10", "infiniband-fdr", "infiniband-edr", "infiniband-hdr",
    "infiniband-ndr", "infiniband-xdr",
}  # fmt: skip
TERMINATION_TYPES = {"dcim.interface", "dcim.frontport", "dcim.rearport", "dcim.consoleport", "dcim.consoleserverport", "dcim.powerport", "dcim.poweroutlet", "dcim.powerfeed", "circuits.circuittermination"}
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
COLOR = re.compile(r"^[0-9a-f]{6}$")
MAX_LEN = {"name": 64, "label": 100, "model": 100, "slug": 100, "description": 200}
UPLOAD_LIMIT = 2.5 * 1024 * 1024  # DATA_UPLOAD_MAX_MEMORY_SIZE: pasted text above it is refused (HTTP 400)
SHARED_KINDS = {"manufacturer": "manufacturers.csv", "device-role": "device-roles.csv", "rack-role": "rack-roles.csv", "device-type": "device-types.csv"}


def read(path: Path) -> tuple[list[str], list[dict]]:
    with open(path, encoding="utf-8", newline="") as fh:
        r = csv.DictReader(fh)
        return list(r.fieldnames or []), list(r)


def parts(d: Path, stem: str) -> list[Path]:
    """``<stem>.csv`` or its numbered parts, in import order."""
    one = d / f"{stem}.csv"
    return [one] if one.exists() else sorted(d.glob(f"{stem}-[0-9][0-9][0-9].csv"))


def build(tmp: Path, name: str, *args: str) -> Path:
    out = tmp / name
    res = CliRunner().invoke(main, ["build", "--name", name, *args, "--out", str(out), "--formats", "netbox"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def clusters(tmp_path_factory) -> list[Path]:
    """Two clusters whose host names overlap (hb00..), both architectures, one priced by a real catalog."""
    tmp = tmp_path_factory.mktemp("netbox")
    return [
        build(tmp, "alpha", "--gpus", "64", "--hb-domain", "8", "--radix", "16"),
        build(tmp, "beta", "--gpus", "512", "--hb-domain", "8", "--radix", "64", "--catalog", "ndr-400g", "--planes", "2"),
    ]


def shared_files(out: Path) -> list[tuple[str, Path]]:
    """``(kind, path)`` of the shared objects (``netbox/shared/<n>-<kind>-<slug>.csv``), in import (name) order."""
    out_files = []
    for p in sorted((out / "netbox" / "shared").glob("*.csv")):
        kind = re.match(r"^\d-([a-z]+-[a-z]+|manufacturer)-", p.name).group(1)
        out_files.append((SHARED_KINDS[kind], p))
    return out_files


def all_files(out: Path) -> list[tuple[str, Path]]:
    """``(kind, path)`` of every NetBox file of a build, in the README's import order."""
    files = [("sites.csv", out / "netbox" / "sites.csv"), *shared_files(out)]
    for arch in ("rail-optimized", "rail-only"):
        if (out / arch / "netbox" / "racks.csv").exists():
            files.append(("racks", out / arch / "netbox" / "racks.csv"))
    for stem in ("devices", "interfaces", "cables"):
        for arch in ("rail-optimized", "rail-only"):
            files += [(stem, p) for p in parts(out / arch / "netbox", stem)]
    return files


def test_columns_are_netbox_import_fields(clusters):
    for out in clusters:
        for kind, p in all_files(out):
            cols, rows = read(p)
            assert set(cols) <= FIELDS[kind], (p, set(cols) - FIELDS[kind])
            assert REQUIRED[kind] <= set(cols), p
            assert len(cols) == len(set(cols)) and rows, p


def test_values_are_netbox_choices(clusters):
    for out in clusters:
        for kind, p in all_files(out):
            for r in read(p)[1]:
                for col in ("slug",):
                    if col in r:
                        assert SLUG.match(r[col]), (p, r)
                for col, limit in MAX_LEN.items():
                    assert len(r.get(col) or "") <= limit, (p, col, r)
                if kind == "sites.csv":
                    assert r["status"] in SITE_STATUS
                elif kind == "racks":
                    assert r["status"] in RACK_STATUS and r["width"] in RACK_WIDTHS and 1 <= int(r["u_height"]) <= 100
                elif kind in ("device-types.csv",):
                    assert float(r["u_height"]) >= 0 and float(r["u_height"]) * 2 == int(float(r["u_height"]) * 2)
                elif kind == "rack-roles.csv":
                    assert COLOR.match(r["color"])
                elif kind == "device-roles.csv":
                    assert COLOR.match(r["color"])
                elif kind == "devices":
                    assert r["status"] in DEVICE_STATUS and r["name"]
                    assert r["face"] in FACES | {""} and (r["face"] == "") == (r["position"] == "")
                elif kind == "interfaces":
                    assert r["type"] in INTERFACE_TYPES, r
                    assert r["enabled"] in ("true", "false") and r["speed"].isdigit()
                    assert len(r["name"]) <= 64
                elif kind == "cables":
                    assert r["status"] in CABLE_STATUS and r["type"] in CABLE_TYPES and r["length_unit"] in LENGTH_UNITS
                    assert r["side_a_type"] in TERMINATION_TYPES and r["side_b_type"] in TERMINATION_TYPES
                    assert (r["length"] == "") == (r["length_unit"] == "")


def test_catalog_gives_interface_types_and_manufacturers(clusters):
    """ndr-400g names NVIDIA and InfiniBand NDR: no ``other``/``generic`` where the catalog knows better."""
    beta = clusters[1]
    types = [r for kind, p in shared_files(beta) if kind == "device-types.csv" for r in read(p)[1]]
    assert {r["manufacturer"] for r in types if r["model"] == "MQM9700-NS2F"} == {"NVIDIA"}
    assert "NVIDIA" in {r["name"] for kind, p in shared_files(beta) if kind == "manufacturers.csv" for r in read(p)[1]}
    for arch in ("rail-optimized", "rail-only"):
        rows = [r for p in parts(beta / arch / "netbox", "interfaces") for r in read(p)[1]]
        assert {r["type"] for r in rows} == {"infiniband-ndr"}
        devices = read(beta / arch / "netbox" / "devices.csv")[1]
        assert {r["manufacturer"] for r in devices if r["role"] != "gpu-node"} == {"NVIDIA"}


class Clash(AssertionError):
    pass


class NetBox:
    """The lookup and uniqueness rules of NetBox 4.x bulk import, enough to find clashes."""

    def __init__(self):
        self.objects: dict[str, dict] = {k: {} for k in ("site", "manufacturer", "role", "rack_role", "type")}
        self.racks: dict[tuple[str, str], dict] = {}  # (site, name) -> row
        self.occupied: dict[tuple[str, str], set[int]] = {}  # (site, rack) -> U taken (full-depth devices: both faces)
        self.site_slugs: set[str] = set()
        self.devices: dict[tuple[str, str], dict] = {}  # (site, name) -> row
        self.by_name: dict[str, list[str]] = {}  # name -> sites
        self.interfaces: set[tuple[tuple[str, str], str]] = set()
        self.cabled: set[tuple[tuple[str, str], str]] = set()
        self.labels: set[str] = set()

    def prerequisite(self, kind: str, key, row: dict) -> None:
        """Shared objects (manufacturers, roles, device types): NetBox refuses a name it has ("already exists")."""
        if key in self.objects[kind]:
            raise Clash(f"{kind} with this name already exists: {key!r}")
        self.objects[kind][key] = row

    def load(self, kind: str, path: Path) -> None:
        """One bulk import: atomic, as NetBox's (a refused row refuses the file)."""
        saved = copy.deepcopy(vars(self))
        try:
            for r in read(path)[1]:
                getattr(self, "_" + kind.replace(".csv", "").replace("-", "_"))(r)
        except Clash:
            vars(self).update(saved)
            raise

    def _rack_roles(self, r):
        self.prerequisite("rack_role", r["name"], r)

    def _racks(self, r):
        if r["site"] not in self.objects["site"]:
            raise Clash(f"rack {r['name']}: site {r['site']} not found")
        if r["role"] and r["role"] not in self.objects["rack_role"]:
            raise Clash(f"rack {r['name']}: rack role {r['role']} not found")
        key = (r["site"], r["name"])
        if key in self.racks:
            raise Clash(f"rack {key} already exists")
        self.racks[key] = r

    def _sites(self, r):
        if r["name"] in self.objects["site"] or r["slug"] in self.site_slugs:
            raise Clash(f"site {r['name']} already exists")
        self.objects["site"][r["name"]] = r
        self.site_slugs.add(r["slug"])

    def _manufacturers(self, r):
        self.prerequisite("manufacturer", r["name"], r)

    def _device_roles(self, r):
        self.prerequisite("role", r["name"], r)

    def _device_types(self, r):
        if r["manufacturer"] not in self.objects["manufacturer"]:
            raise Clash(f"manufacturer {r['manufacturer']} not found")
        self.prerequisite("type", (r["manufacturer"], r["model"]), r)

    def _devices(self, r):
        if r["site"] not in self.objects["site"] or r["role"] not in self.objects["role"] or (r["manufacturer"], r["device_type"]) not in self.objects["type"]:
            raise Clash(f"device {r['name']}: site, role or device type missing")
        if r.get("rack"):
            rack = self.racks.get((r["site"], r["rack"]))
            if rack is None:
                raise Clash(f"device {r['name']}: rack {r['rack']} not found at site {r['site']}")
            if r.get("position"):
                if not r.get("face"):
                    raise Clash(f"device {r['name']}: Must specify rack face when defining rack position.")
                height = float(self.objects["type"][(r["manufacturer"], r["device_type"])]["u_height"])
                if height == 0:
                    raise Clash(f"device {r['name']}: a 0U device type cannot take a rack position")
                lo = int(float(r["position"]))
                units = set(range(lo, lo + int(height)))
                if lo < 1 or lo + height - 1 > int(rack["u_height"]):
                    raise Clash(f"device {r['name']}: U{lo}-U{lo + height - 1} is outside rack {r['rack']} ({rack['u_height']} U)")
                taken = self.occupied.setdefault((r["site"], r["rack"]), set())
                if units & taken:
                    raise Clash(f"device {r['name']}: U{sorted(units & taken)} in rack {r['rack']} is already occupied")
                taken |= units
        key = (r["site"], r["name"])
        if key in self.devices:
            raise Clash(f"Device name must be unique per site: {key}")
        self.devices[key] = r
        self.by_name.setdefault(r["name"], []).append(r["site"])

    def _interfaces(self, r):
        sites = self.by_name.get(r["device"], [])
        if len(sites) != 1:
            raise Clash(f'"{r["device"]}" is not a unique value for this field' if sites else f"device {r['device']} not found")
        key = ((sites[0], r["device"]), r["name"])
        if key in self.interfaces:
            raise Clash(f"interface {key} exists")
        self.interfaces.add(key)

    def _cables(self, r):
        for side in ("a", "b"):
            key = ((r[f"side_{side}_site"], r[f"side_{side}_device"]), r[f"side_{side}_name"])
            if key[0] not in self.devices or key not in self.interfaces:
                raise Clash(f"cable {r['label']}: no interface {key}")
            if key in self.cabled:
                raise Clash(f"{key} is already connected")
            self.cabled.add(key)
        if r["label"] in self.labels:
            raise Clash(f"cable label {r['label']} repeats")
        self.labels.add(r["label"])


def import_cluster(nb: NetBox, out: Path) -> list[Path]:
    """Every file in the README's order; a shared file NetBox refuses as existing is skipped. Returns those skipped."""
    skipped = []
    for kind, p in all_files(out):
        try:
            nb.load(kind, p)
        except Clash as exc:
            if p.parent.name != "shared" or "already exists" not in str(exc):
                raise
            skipped.append(p)
    return skipped


def test_two_clusters_and_both_architectures_in_one_netbox(clusters):
    nb = NetBox()
    skipped = [import_cluster(nb, out) for out in clusters]
    assert skipped[0] == []
    # the second cluster shares the generic manufacturer and the roles: their files are skipped, not edited
    assert {p.name for p in skipped[1]} >= {"1-manufacturer-generic.csv", "2-device-role-leaf.csv", "2-device-role-gpu-node.csv"}
    assert len(nb.objects["site"]) == 4
    assert {("alpha-rail-only", "alpha-rail-only.hb00"), ("beta-rail-optimized", "beta-rail-optimized.hb00")} <= set(nb.devices)
    assert all(len(s) == 1 for s in nb.by_name.values())  # every device name unique across sites
    total = sum(len(read(p)[1]) for out in clusters for kind, p in all_files(out) if kind == "cables")
    assert len(nb.labels) == total


def test_the_simulator_catches_the_old_clash(clusters, tmp_path):
    """Plain host names in two sites make the interface import ambiguous: the check above can fail."""
    nb = NetBox()
    alpha = clusters[0]
    for kind, p in all_files(alpha):
        if kind in ("devices", "interfaces") and "rail-only" in p.parts:
            cols, rows = read(p)
            for r in rows:
                r["device" if kind == "interfaces" else "name"] = r["device" if kind == "interfaces" else "name"].split(".", 1)[1]
            q = tmp_path / f"{kind}.csv"
            with open(q, "w", newline="") as fh:
                w = csv.DictWriter(fh, cols)
                w.writeheader()
                w.writerows(rows)
            p = q
        if kind == "cables":
            continue
        if kind == "devices" and "rail-optimized" in p.parts:
            cols, rows = read(p)
            for r in rows:
                r["name"] = r["name"].split(".", 1)[1]
            q = tmp_path / "devices-opt.csv"
            with open(q, "w", newline="") as fh:
                w = csv.DictWriter(fh, cols)
                w.writeheader()
                w.writerows(rows)
            p = q
        if kind == "interfaces" and "rail-optimized" in p.parts:
            continue
        try:
            nb.load(kind, p)
        except Clash as exc:
            assert "is not a unique value for this field" in str(exc)
            return
    pytest.fail("no clash found for duplicate host names")


def test_files_stay_below_the_upload_limit(tmp_path):
    """At 16,384 GPUs interfaces.csv would be ~5 MB: it comes in parts below 2.5 MiB, each with the header, rows intact."""
    out = build(tmp_path, "big", "--gpus", "16384", "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized")
    d = out / "rail-optimized" / "netbox"
    ifaces = parts(d, "interfaces")
    assert len(ifaces) >= 2 and not (d / "interfaces.csv").exists()
    for kind, p in all_files(out):
        assert p.stat().st_size <= netbox.MAX_PART_BYTES < UPLOAD_LIMIT, p
    rows = [r for p in ifaces for r in read(p)[1]]
    assert len(rows) == 16384 + 1280 * 64  # NIC ports + switch ports, each once
    assert len({(r["device"], r["name"]) for r in rows}) == len(rows)


def test_docs_document_the_import(clusters):
    readme = (Path(__file__).parents[1] / "docs" / "exports" / "netbox.md").read_text()
    for needle in ("sites.csv", "netbox/shared/", "already exists", "racks.csv", "RQ_DEFAULT_TIMEOUT", "19 rows/s", "REST API", "2.5 MiB"):
        assert needle in readme, needle


def test_each_switch_tier_has_its_own_device_type(tmp_path):
    """A per-tier radix puts 288-port chassis above 32-port leaves: NetBox types each tier as what the BOM buys."""
    out = build(tmp_path, "chassis", "--gpus", "4096", "--hb-domain", "8", "--radix", "32,288", "--catalog", "chassis-400g", "--arch", "rail-optimized")
    types = [r for kind, p in shared_files(out) if kind == "device-types.csv" for r in read(p)[1]]
    models = {t["model"] for t in types}
    by_role: dict[str, set[str]] = {}
    for p in parts(out / "rail-optimized" / "netbox", "devices"):
        for row in read(p)[1]:
            by_role.setdefault(row["role"], set()).add(row["device_type"])
    assert by_role["leaf"] == {"FIXED-32X400G"}
    assert by_role["spine"] == {"CHASSIS-288X400G"}
    assert set().union(*by_role.values()) <= models  # every device type is importable first


def test_parts_import_within_the_job_timeout(tmp_path):
    """NetBox 4.6 imports ~19 rows/s and stops a background job after 300 s: every part holds at most 4,000 rows."""
    out = build(tmp_path, "big", "--gpus", "16384", "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized")
    d = out / "rail-optimized" / "netbox"
    for stem in ("devices", "interfaces", "cables"):
        ps = parts(d, stem)
        sizes = [len(read(p)[1]) for p in ps]
        assert max(sizes) <= netbox.MAX_PART_ROWS and netbox.MAX_PART_ROWS / 19 < 300, (stem, sizes)
        assert all(s == netbox.MAX_PART_ROWS for s in sizes[:-1]), (stem, sizes)  # full parts, then the rest
    cables = sum(len(read(p)[1]) for p in parts(d, "cables"))
    assert len(parts(d, "cables")) == -(-cables // netbox.MAX_PART_ROWS) >= 2


PRESET_ARGS = {
    "demo": (), "dgx-h100-su": ("--gpus", "504"), "gb200-nvl72": ("--gpus", "576"), "gh200-32k": ("--gpus", "1024"),
    "nic200-leaf400": ("--gpus", "512"), "alibaba-hpn": (),
}  # fmt: skip


def test_several_clusters_racked_in_one_netbox(tmp_path):
    """Presets of every rack style (DGX 8 U trays, NVL72 1 U trays around NVLink switch trays, GH200 superchips,
    chassis catalogs) import one after another: racks exist, every positioned device fits its rack without overlap,
    and the shared files of later clusters are skipped, each byte-identical to the one NetBox has."""
    nb = NetBox()
    seen: dict[str, bytes] = {}
    for name, args in PRESET_ARGS.items():
        out = tmp_path / name
        res = CliRunner().invoke(main, ["build", name, *args, "--out", str(out), "--formats", "netbox"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        for p in import_cluster(nb, out):
            assert p.read_bytes() == seen[p.name], p  # skipped: the same object, written the same way
        for _kind, p in shared_files(out):
            seen.setdefault(p.name, p.read_bytes())
            assert seen[p.name] == p.read_bytes(), p
        devices = [r for arch in ("rail-optimized", "rail-only") for p in parts(out / arch / "netbox", "devices") for r in read(p)[1]]
        assert devices and all(r["rack"] for r in devices)
        placed = [r for r in devices if r["position"]]
        assert len(placed) >= len([r for r in devices if r["role"] != "gpu-node"]), name  # every switch has its U
    assert len(nb.racks) > 0 and sum(len(u) for u in nb.occupied.values()) > 0
