"""The expansion as files: what installers, buyers and the scheduler's admins use.

Per architecture, in ``<out>/<arch>/``:

* ``cabling.csv``: the new wiring, the columns of ``topogen build``'s cabling.csv;
  a kept or moved cable keeps its installed cable id (and so its label), a new
  cable takes the next free id. ``topogen validate`` and ``topogen diff`` read it as
  any build's plan;
* ``delta.csv``: every cable to add, move and remove, by stage, in cabling.csv's
  columns (the cable as it will be; a removal as it was) plus ``stage``, ``action``
  and, for a move, the end it leaves (``from_device``, ``from_port``, the name as
  installed);
* ``delta-pull-sheets.csv``: the same cables as the installers pull them, stage by
  stage and rack pair by rack pair (``sheet`` ``A01_B02``, as ``pull-sheets.csv`` of a
  build), each with its label, sold length and both ends' rack and U in the new
  layout (a move also the rack and U of the end it leaves);
* ``renamed.csv``: devices whose name only gains zero padding (``spine-7`` to
  ``spine-07`` once there are ten spines or more): new labels, same device;
* ``stages/stage-<n>.csv``: the wiring after each stage but the last (cabling.csv's
  columns), for ``topogen diff`` against the floor between stages;
* ``switches.csv``: every switch that is new, whose cables change (its port
  configuration and, where the plan numbers links, their addresses change), or that
  becomes spare; switches not listed keep every cable;
* ``bom-delta.csv``: per SKU of the two builds' bills (switches, transceivers,
  cables by length), the quantity to buy and the quantity that becomes spare;
* ``addressing-pinned.csv``: the new wiring's address plan as pinned
  (:func:`topogen.growth.addresses.pinned_lines`), read back by the next expansion;
* ``networks-addressing-pinned.csv`` (with ``networks:``): the grown phase's in-band and
  OOB subnets and addresses (:func:`topogen.growth.networks.ipam_rows`), read back likewise;
* ``floor.csv``: the grown floor (every rack, then every device's rack, U and
  height), which the next expansion reads as its installed floor;
* ``netbox/``: NetBox bulk-import rows of what changes: ``racks.csv`` of the grown
  floor's new racks, ``devices.csv`` and ``interfaces.csv`` of the new nodes and
  switches, ``cables.csv`` of the new cables, ``cables-moved.csv`` (each moved cable, by
  its label, with its new terminations, to edit) and ``cables-removed.csv`` (labels to
  delete), in the columns of the build's NetBox export; the other networks' likewise
  (``networks-racks.csv``... :func:`topogen.growth.networks.netbox_rows`), and the new
  devices' in-band and OOB prefixes and addresses (:func:`topogen.growth.networks.ipam_rows`);
* ``slurm/topology.conf``: the new tree topology for Slurm.

``expand.json`` (top level) holds the figures of every architecture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from topogen import layout
from topogen.asbuilt import wiring
from topogen.bom.bill import sku_lines
from topogen.exports.netbox import dcim as netbox
from topogen.exports.slurm.topology import tree_lines
from topogen.fabric.naming import GpuNames
from topogen.fabric.view import csv_header
from topogen.config import technology
from topogen.growth import addresses as addr
from topogen.growth import floor as grown_floor
from topogen.growth import networks as net_growth
from topogen.growth.expansion import Expansion
from topogen.growth.rewire import Wire, identity
from topogen.growth.stages import raw_of
from topogen.layout.labels import FloorView
from topogen.spec.counts import link_tier_name, tier_role
from topogen.util.text import csv_line
from topogen.fabric import clos
from topogen import pipeline
from topogen.spec.cluster import build_spec

COLUMNS = ("cable", "tier", "link", "plane", "a_device", "a_role", "a_port", "a_speed_gbps", "z_device", "z_role", "z_port", "z_speed_gbps")
DELTA_COLUMNS = ("stage", "action", *COLUMNS, "from_device", "from_port")


def _roles(e: Expansion) -> dict[str, str]:
    roles = {s.name: tier_role(s.tier) for s in e.design.switches}
    return roles


def _row(w: Wire, roles: dict[str, str]) -> tuple:
    def role(dev: str, port: str) -> str:
        return "gpu" if port.startswith("nic") else roles.get(dev, "spare")

    return (w.cable, w.tier, link_tier_name(w.tier), w.plane, w.a, role(w.a, w.a_port), w.a_port, w.a_speed, w.z, role(w.z, w.z_port), w.z_port, w.z_speed)


def cabling_lines(e: Expansion) -> Iterator[str]:
    """The new wiring's cabling.csv, in cable-id order."""
    return _wiring_lines(e.rewire.final, _roles(e))


def _wiring_lines(wires: list[Wire], roles: dict[str, str]) -> Iterator[str]:
    yield csv_header(COLUMNS)
    for w in wires:
        yield csv_line(_row(w, roles))


def relocated(old, old_lay, fab, lay) -> int:
    """Installed devices ``lay`` puts in another rack (by name) or U than the installed phase's layout ``old_lay`` did."""
    where_new = {identity(s.name): (lay.rack_name(fab.gpus + i), int(lay.placement.u[fab.gpus + i])) for i, s in enumerate(fab.switches)}
    moved = 0
    for i, s in enumerate(old.switches):
        now = where_new.get(identity(s.name))
        if now is not None and now != (old_lay.rack_name(old.gpus + i), int(old_lay.placement.u[old.gpus + i])):
            moved += 1
    g = min(old.gpus, fab.gpus)
    old_names = np.asarray(old_lay.racks.name, dtype=object)[old_lay.placement.rack[:g]]
    new_names = np.asarray(lay.racks.name, dtype=object)[lay.placement.rack[:g]]
    moved += int(((old_names != new_names) | (old_lay.placement.u[:g] != lay.placement.u[:g])).sum())
    return moved


def floor_of(e: Expansion, fab, new_ctx=None):
    """The final wiring's layout on the installed floor (:func:`topogen.growth.floor.keep_positions`); sets ``e.relocated`` and ``e.floor``.

    The installed floor is the ``floor.csv`` an earlier expansion wrote when the installed
    phase is one, else the installed spec's own layout. The racks of the other networks
    (installed, and the new build's, ``new_ctx``) are kept out of the compute floor's new racks.
    """
    old = clos.generate(e.old, e.arch)
    old_lay = layout.plan(old)
    grown = e.source / grown_floor.FLOOR_FILE if e.source is not None else None
    if grown is not None and grown.is_file():  # the installed phase is an expansion's output: its grown floor, not a fresh layout
        old_lay = grown_floor.read_floor(grown, old, old_lay, GpuNames.of(e.old).parse)
    fresh = layout.plan(fab)
    installed = {r for w in (net_growth.read_installed(e.source) if e.source is not None else []) for r in (w.a_rack, w.z_rack) if r}
    fresh_net = {r for w in (net_growth.design_wires(new_ctx, e.arch) if new_ctx is not None else []) for r, role in ((w.a_rack, w.a_role), (w.z_rack, w.z_role)) if r and net_growth.own_rack(role)}
    reserved = (installed - set(old_lay.racks.name)) | (fresh_net - set(fresh.racks.name))
    lay, e.floor = grown_floor.keep_positions(old, old_lay, fab, fresh, reserved)
    e.floor["fresh_layout_relocates"] = relocated(old, old_lay, fab, fresh)
    e.relocated = relocated(old, old_lay, fab, lay)
    e.rack_map = grown_floor.rack_map(fresh, lay)
    return lay


def delta_lines(e: Expansion) -> Iterator[str]:
    """delta.csv: stage by stage, the cables unplugged (moves' new places, removals), then those plugged."""
    roles = _roles(e)
    moved = {m.before.ends(): m for m in e.rewire.moved}
    back = {v: k for k, v in e.rewire.relabelled.items()}  # the end a move leaves, by the name on its label today
    yield csv_header(DELTA_COLUMNS)
    for st in e.plan.stages:
        for w in st.unplug:
            m = moved.get(w.ends())
            if m is None:
                yield csv_line((st.number, "remove", *_row(w, roles), "", ""))
        for w in st.unplug:
            m = moved.get(w.ends())
            if m is not None:
                dev, port = m.unplugged
                yield csv_line((st.number, "move", *_row(m.after, roles), back.get(dev, dev), port))
        plugged = {m.after.ends() for m in e.rewire.moved}
        for w in st.plug:
            if w.ends() not in plugged:
                yield csv_line((st.number, "add", *_row(w, roles), "", ""))


PULL_COLUMNS = ("stage", "action", "sheet", "label", "cable", "length_m", "a_rack", "a_u", "a_device", "a_port", "z_rack", "z_u", "z_device", "z_port", "from_rack", "from_u", "from_device", "from_port")
ACTION_ORDER = {"remove": 0, "move": 1, "add": 2}


def pull_lines(e: Expansion, fab, lay) -> Iterator[str]:
    """delta-pull-sheets.csv: every cable to remove, move and add, by stage, then rack pair, length and label."""
    labels = FloorView(fab, lay).labels(slice(None))
    gn = GpuNames.of(fab.spec)
    sw = {s.name: fab.gpus + i for i, s in enumerate(fab.switches)}
    back = {v: k for k, v in e.rewire.relabelled.items()}

    def dev(name: str) -> int:
        got = sw.get(name)
        return got if got is not None else (gn.parse(name) if gn.parse(name) is not None else -1)

    def place(name: str) -> tuple[str, str]:
        d = dev(name)
        return ("", "") if d < 0 else (lay.rack_name(d), str(int(lay.placement.u[d])))

    row_of = {w.ends(): i for i, w in enumerate(e.rewire.final)}
    moved = {m.before.ends(): m for m in e.rewire.moved}
    rows = []
    for st in e.plan.stages:
        items = [("remove", w, None) for w in st.unplug if w.ends() not in moved]
        items += [("move", moved[w.ends()].after, moved[w.ends()].unplugged) for w in st.unplug if w.ends() in moved]
        plugged = {m.after.ends() for m in e.rewire.moved}
        items += [("add", w, None) for w in st.plug if w.ends() not in plugged]
        for action, w, frm in items:
            (ar, au), (zr, zu) = place(w.a), place(w.z)
            i = row_of.get(w.ends()) if action != "remove" else None
            label = labels[i] if i is not None else ""
            length = lay.length_m[i] if i is not None else ""
            fr, fu = place(frm[0]) if frm else ("", "")
            sheet = "_".join(sorted((ar, zr))) if ar and zr else ""
            rows.append((st.number, ACTION_ORDER[action], sheet, float(length) if length != "" else 0.0, label, (
                st.number, action, sheet, label, w.cable, _num(length), ar, au, w.a, w.a_port, zr, zu, w.z, w.z_port,
                fr, fu, back.get(frm[0], frm[0]) if frm else "", frm[1] if frm else "")))
    rows.sort(key=lambda r: r[:5])
    yield csv_header(PULL_COLUMNS)
    for r in rows:
        yield csv_line(r[5])


def _csv(cols, rows) -> Iterator[str]:
    yield csv_header(cols)
    for r in rows:
        yield csv_line(r)


def _num(x):
    if x == "":
        return ""
    x = round(float(x), 1)
    return int(x) if x.is_integer() else x


def switch_lines(e: Expansion) -> Iterator[str]:
    """switches.csv: new, changed and spare switches with the cables each gains and loses."""
    roles = _roles(e)
    gain: dict[str, int] = {}
    lose: dict[str, int] = {}
    rw = e.rewire
    for w in [m.after for m in rw.moved] + rw.added:
        for d, p in w.ends():
            if not p.startswith("nic"):
                gain[d] = gain.get(d, 0) + 1
    for w in [m.before for m in rw.moved] + rw.removed:
        for d, p in w.ends():
            if not p.startswith("nic"):
                lose[d] = lose.get(d, 0) + 1
    # a move keeps one end: that end's switch neither gains nor loses a cable there
    for m in rw.moved:
        d, p = [x for x in m.before.ends() if x in m.after.ends()][0]
        if not p.startswith("nic"):
            gain[d] -= 1
            lose[d] -= 1
    new = set(rw.new_switches)
    spare = set(rw.spare_switches)
    ad = e.addresses
    yield csv_header(("switch", "role", "status", "cables_gained", "cables_lost", "was", *addr.SWITCH_COLUMNS[1:], "config"))
    back = {v: k for k, v in rw.relabelled.items()}
    for s in e.design.switches:
        g, lo = gain.get(s.name, 0), lose.get(s.name, 0)
        vals = addr.switch_values(ad, s.name) if ad is not None else ("", "", "", "")
        conf = s.name in ad.configs if ad is not None else False
        status = "new" if s.name in new else "changed" if (g or lo or any(vals) or conf) else ""
        if status or s.name in back:
            yield csv_line((s.name, tier_role(s.tier), status or "relabelled", g, lo, back.get(s.name, ""), *vals, "new file" if conf else ""))
    for name in rw.spare_switches:
        if name in spare:
            yield csv_line((name, roles.get(name, "switch"), "spare", 0, lose.get(name, 0), "", "", "", "", "", ""))


def renamed_lines(e: Expansion) -> Iterator[str]:
    """renamed.csv: devices whose name gains zero padding (same numbers: a relabel, not a renumbering)."""
    yield csv_header(("installed_name", "new_name"))
    for old, new in e.rewire.relabelled.items():
        yield csv_line((old, new))


def bom_delta(old_ctx, new_ctx, arch: str) -> list[dict[str, Any]]:
    """Per SKU of the two builds' bills (compute fabric and the other networks): installed and new quantities, what to buy, what becomes spare."""
    have = {x.sku: x for x in sku_lines(_bom_lines(old_ctx, arch))}
    want = {x.sku: x for x in sku_lines(_bom_lines(new_ctx, arch))}
    rows = []
    for sku in list(want) + [s for s in have if s not in want]:
        x = want.get(sku) or have[sku]
        q0 = have[sku].quantity if sku in have else 0
        q1 = want[sku].quantity if sku in want else 0
        rows.append({"category": x.category, "sku": sku, "description": x.description, "installed": q0, "new": q1, "buy": max(0, q1 - q0), "spare": max(0, q0 - q1), "unit_price": x.unit_price})
    return rows


def _bom_lines(ctx, arch: str) -> list:
    """The compute fabric's BOM lines, then each other network's."""
    return list(ctx.boms[arch].lines) + [x for nb in ctx.network_boms.get(arch, []) for x in nb.lines]


def address_delta(e: Expansion, new_ctx) -> addr.AddressDelta:
    """The address plans and FRR files of the installed and the final wiring compared (:mod:`topogen.growth.addresses`)."""
    rw = e.rewire
    pinned = e.source / addr.PINNED_FILE if e.source is not None else None
    return addr.compare(e.installed, rw.final, {m.after.cable for m in rw.moved}, {w.cable for w in rw.added}, {w.cable for w in rw.removed}, e.old, e.new, e.arch,
                        technology.writes(new_ctx, e.arch, "frr"), pinned if pinned is not None and pinned.is_file() else None)


def grow_networks(e: Expansion, new_ctx, where: dict[str, tuple[str, int]] | None = None, racks: dict[str, str] | None = None) -> net_growth.NetGrowth:
    """The storage, in-band and OOB networks of the installed phase grown to the new build's (``new_ctx``), checked.

    ``where`` places the compute floor's devices, ``racks`` maps the new build's compute racks to the grown floor's.
    """
    installed = net_growth.read_installed(e.source) if e.source is not None else []
    g = net_growth.grow(installed, net_growth.design_wires(new_ctx, e.arch))
    net_growth.place(g, installed, where or {}, racks or {})
    net_growth.check(g, new_ctx, e.arch)
    return g


def _positions(fab, lay) -> dict[str, tuple[str, int]]:
    """Device identity -> (rack, U) on the grown floor: every node (by its first GPU) and compute switch."""
    nn = netbox.node_names(fab)
    per_node = fab.gpus // max(nn.nodes, 1)
    out = {identity(x): (lay.rack_name(i * per_node), int(lay.placement.u[i * per_node])) for i, x in enumerate(nn.names())}
    out.update({identity(s.name): (lay.rack_name(fab.gpus + i), int(lay.placement.u[fab.gpus + i])) for i, s in enumerate(fab.switches)})
    return out


def bom_lines(rows: list[dict[str, Any]]) -> Iterator[str]:
    cols = ("category", "sku", "description", "installed", "new", "buy", "spare", "unit_price")
    yield csv_header(cols)
    for r in rows:
        yield csv_line(tuple(r[c] for c in cols))


def netbox_files(e: Expansion, ctx, fab, lay) -> dict[str, Iterator[str]]:
    """The NetBox import files of what changes (see the module), by path under ``<arch>/``."""
    types = netbox.device_types(ctx, fab)
    site = netbox.site_name(fab.spec, fab.arch)
    pre = site + "."
    nn = netbox.node_names(fab)
    per_node = fab.gpus // max(nn.nodes, 1)
    new = {pre + x for i, x in enumerate(nn.names()) if i * per_node >= e.old.gpus} | {pre + x for x in e.rewire.new_switches}
    devices = [r for r in netbox.device_rows(fab, types, lay) if r[0] in new]
    interfaces = [r for r in netbox.interface_rows(fab, types) if r[0] in new]
    ids = {w.cable: i for i, w in enumerate(e.rewire.final)}
    added = {ids[w.cable] for w in e.rewire.added}
    moved = {ids[m.after.cable] for m in e.rewire.moved}
    cables, moves = [], []
    for i, r in enumerate(netbox.cable_rows(fab, netbox.cable_media(ctx, fab), lay.length_m)):
        if i in added:
            cables.append(r)
        elif i in moved:
            moves.append(r)
    removed = [(f"{site}/{w.cable}",) for w in e.rewire.removed]
    return {
        "netbox/racks.csv": _csv(netbox.RACK_COLUMNS, new_rack_rows(e, fab, lay)),
        "netbox/devices.csv": _csv(netbox.DEVICE_COLUMNS, devices),
        "netbox/interfaces.csv": _csv(netbox.INTERFACE_COLUMNS, interfaces),
        "netbox/cables.csv": _csv(netbox.CABLE_COLUMNS, cables),
        "netbox/cables-moved.csv": _csv(netbox.CABLE_COLUMNS, moves),
        "netbox/cables-removed.csv": _csv(("label",), removed),
    }


def new_rack_rows(e: Expansion, fab, lay) -> list[tuple]:
    """The grown floor's new racks as the build's ``racks.csv`` rows them (site, role, row and position).

    :func:`topogen.growth.floor.keep_positions` appends the new racks after every
    installed one, so they are the layout's last ``new_racks``.
    """
    n = (e.floor or {}).get("new_racks", 0)
    return netbox.rack_rows(fab, lay)[len(lay.racks.name) - n :] if n else []


def builds(e: Expansion) -> tuple:
    """The pipeline builds (validated, priced, laid out) of the installed and the new spec, this architecture only."""

    return tuple(pipeline.build(build_spec(s.to_dict(), {"arch": e.arch})) for s in (e.old, e.new))


def final_fabric(e: Expansion):
    """The new wiring as a Fabric of the new spec (what Slurm's topology and the validator read)."""
    return wiring.to_fabric(raw_of(e.rewire.final, e.arch, "cabling.csv"), e.new, e.arch).fabric


def write(e: Expansion, root: Path, ctxs: tuple) -> list[Path]:
    """Write one architecture's files under ``root/<arch>/``; returns their paths.

    ``ctxs``: the pipeline builds of the installed and the new spec (their BOMs, for the
    BOM to buy and NetBox's device types).
    """
    d = root / e.arch
    (d / "slurm").mkdir(parents=True, exist_ok=True)
    (d / "netbox").mkdir(parents=True, exist_ok=True)
    out = []
    fab = final_fabric(e)
    lay = floor_of(e, fab, ctxs[1])
    e.addresses = address_delta(e, ctxs[1])
    files = {"cabling.csv": cabling_lines(e), "delta.csv": delta_lines(e), "delta-pull-sheets.csv": pull_lines(e, fab, lay), "switches.csv": switch_lines(e)}
    files["addresses-delta.csv"] = addr.link_lines(e.addresses)
    files[addr.PINNED_FILE] = addr.pinned_lines(e.addresses)
    for name, text in e.addresses.configs.items():
        files[f"frr/{e.addresses.config_dirs[name]}/{name}.conf"] = iter((text,))
    files["renamed.csv"] = renamed_lines(e)
    files[grown_floor.FLOOR_FILE] = _csv(grown_floor.FLOOR_COLUMNS, grown_floor.floor_rows(fab, lay, GpuNames.of(fab.spec).name))
    files["bom-delta.csv"] = bom_lines(bom_delta(ctxs[0], ctxs[1], e.arch))
    files.update(netbox_files(e, ctxs[1], fab, lay))
    e.networks = grow_networks(e, ctxs[1], _positions(fab, lay), e.rack_map)
    if e.networks.installed or e.networks.final:
        files["networks-cabling.csv"] = net_growth.cabling_lines(e.networks)
        files["networks-delta.csv"] = net_growth.delta_lines(e.networks)
        inst = net_growth.read_installed(e.source) if e.source is not None else []
        nb = {"netbox/networks-racks.csv": (netbox.RACK_COLUMNS, net_growth.new_rack_rows(ctxs[0], ctxs[1], e.arch))}
        nb.update(net_growth.netbox_rows(e.networks, inst, ctxs[1], e.arch, e.rack_map or {}))
        pinned = e.source / net_growth.PINNED_FILE if e.source is not None else None
        nb.update(net_growth.ipam_rows(ctxs[0], ctxs[1], e.arch, {identity(d) for w in inst for d in (w.a, w.z)}, pinned if pinned is not None and pinned.is_file() else None))
        for name, (cols, rows) in nb.items():
            files[name] = _csv(cols, rows)
    current = list(e.rewire.kept) + [m.before for m in e.rewire.moved] + list(e.rewire.removed)
    for st in e.plan.stages[:-1]:  # the wiring after each stage but the last (that is cabling.csv)
        gone = {u.ends() for u in st.unplug}
        current = [w for w in current if w.ends() not in gone] + st.plug
        files[f"stages/stage-{st.number}.csv"] = _wiring_lines(sorted(current, key=lambda w: w.cable), _roles(e))
    (d / "stages").mkdir(exist_ok=True)
    for name, lines in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(lines), encoding="utf-8")
        out.append(p)
    p = d / "slurm" / "topology.conf"
    p.write_text("".join(x + "\n" for x in tree_lines(fab)), encoding="utf-8")
    out.append(p)
    return out


def write_installed(e: Expansion, root: Path) -> list[Path]:
    """``root/installed/``: the installed phase as the expansion read it (its cabling files, byte for byte, and a summary.json of its spec), a build ``topogen diff`` and ``validate`` read (``--stage installed``)."""
    d = root / "installed"
    (d / e.arch).mkdir(parents=True, exist_ok=True)
    out = []
    for name in ("cabling.csv", "networks-cabling.csv"):
        if e.source is not None and (e.source / name).is_file():
            p = d / e.arch / name
            p.write_bytes((e.source / name).read_bytes())
            out.append(p)
    p = d / "summary.json"
    p.write_text(json.dumps({"spec_sha256": e.old.digest(), "spec": e.old.to_dict()}, indent=2) + "\n", encoding="utf-8")
    return out + [p]


def figures_json(figures: list[dict[str, Any]], bom_rows: dict[str, list]) -> str:
    for f in figures:
        rows = bom_rows.get(f["arch"])
        if rows is not None:
            f["buy"] = [{k: r[k] for k in ("category", "sku", "buy")} for r in rows if r["buy"]]
            f["spare"] = [{k: r[k] for k in ("category", "sku", "spare")} for r in rows if r["spare"]]
    return json.dumps({"expansions": figures}, indent=2) + "\n"


def summary_json(new, figures: list[dict[str, Any]]) -> str:
    """summary.json: the new spec (so ``topogen validate`` and ``diff`` read the new cabling.csv as a plan) and the figures."""
    return json.dumps({"spec_sha256": new.digest(), "spec": new.to_dict(), "expansion": figures}, indent=2) + "\n"
