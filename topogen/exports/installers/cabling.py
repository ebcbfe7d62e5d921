"""``<arch>/cabling.csv``: one row per cable, both ends' device and port, tier and speed.

Columns (in order): ``cable`` (1-based id), ``tier`` (1 = GPU–leaf), ``link``
(``gpu-leaf``, ``leaf-spine``...), ``plane``, ``a_device``, ``a_role``,
``a_port``, ``a_speed_gbps``, ``z_device``, ``z_role``, ``z_port``,
``z_speed_gbps``, then the floor columns (:mod:`topogen.layout.labels`):
``a_rack``, ``a_u``, ``z_rack``, ``z_u`` (each end's rack and lowest U),
``length_m`` (the sold length), ``media``, ``cable_sku``,
``a_transceiver_sku``, ``z_transceiver_sku`` (empty for copper) and
``label`` (unique, TIA-606 style, naming both ends' rack, U and port), and
only when the fabric has breakout cables ``breakout_cable`` (the one physical
cable a leg belongs to, ``<switch>:<first port>-<last port>`` in the switch's port names, shared by its legs). The
``a`` end is the lower device. The header is line 1
(plain CSV: ``pandas.read_csv`` and ``csv.DictReader`` read it with their
defaults); the provenance (tool version, spec hash) lives in ``manifest.json``
and the architecture is the directory's name. ``topogen validate`` reads this
file back (also after hand edits) and finds its spec in the ``summary.json``
two levels up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.exports.installers import network_addresses, network_cabling
from topogen.exports.files import open_output, per_arch
from topogen.fabric.model import CHUNK, Fabric
from topogen.fabric.naming import ISL_LINK, GpuNames, device_names, device_roles
from topogen.fabric.view import csv_header, csv_lines, csv_table, int_texts, text_table, view, writer_field
from topogen.layout.labels import COLUMNS as FLOOR_COLUMNS
from topogen.layout.labels import FloorView
from topogen.spec.counts import link_tier_name

COLUMNS = ("cable", "tier", "link", "plane", "a_device", "a_role", "a_port", "a_speed_gbps", "z_device", "z_role", "z_port", "z_speed_gbps")


def generate_rows(fabric: Fabric) -> Iterator[tuple]:
    """Yield the cabling rows (without header), in cable order, in chunks for speed."""
    L = fabric.links
    sw_names = np.array([s.name for s in fabric.switches], dtype=object)
    sw_roles = np.array([s.role for s in fabric.switches], dtype=object)
    gpu_names = GpuNames.of(fabric.spec)
    tier_names = {t: link_tier_name(t) for t in range(1, fabric.tiers + 1)}
    v = view(fabric)
    for start in range(0, len(L), CHUNK):
        sl = slice(start, min(start + CHUNK, len(L)))
        a = L.a_dev[sl]
        z = L.z_dev[sl]
        an = device_names(fabric, a, sw_names, gpu_names)
        zn = device_names(fabric, z, sw_names, gpu_names)
        ar = device_roles(fabric, a, sw_roles)
        zr = device_roles(fabric, z, sw_roles)
        tiers = L.tier[sl].tolist()
        a_ports = v.ports(a, L.a_port[sl]).tolist()  # nic<plane>, or the switch model's own port name
        z_ports = v.ports(z, L.z_port[sl]).tolist()
        yield from zip(
            range(start + 1, sl.stop + 1),
            tiers,
            map(tier_names.__getitem__, tiers),
            L.plane[sl].tolist(),
            an.tolist(),
            ar.tolist(),
            a_ports,
            L.a_speed[sl].tolist(),
            zn.tolist(),
            zr.tolist(),
            z_ports,
            L.z_speed[sl].tolist(),
        )


def text_chunks(fabric: Fabric, lay=None, bom=None, legs=None) -> Iterator[str]:
    """The file's lines after the header, a chunk of cables at a time (the bytes ``csv.writer`` writes).

    Every field is gathered from names and tables formatted once
    (:func:`topogen.fabric.view.view`, :class:`~topogen.layout.labels.FloorView`).
    """
    v = view(fabric)
    L = fabric.cable_table()  # the links, then a leaf pair's ISLs (cable ids continue; link leaf-leaf, tier 1)
    floor = FloorView(fabric, lay, bom) if lay is not None else None
    top = int(L.tier.max()) if len(L) else 0
    tier_link = text_table([f"{t},{writer_field(link_tier_name(t))}" for t in range(top + 1)] + [f"1,{writer_field(ISL_LINK)}"])  # two fields as one
    links = len(fabric.links)
    for sl in v.chunks(fabric.cables):
        a, z = L.a_dev[sl], L.z_dev[sl]
        tl = L.tier[sl].astype(np.int64)
        if sl.stop > links:  # ISL rows: the last entry of tier_link
            tl[max(links - sl.start, 0) :] = top + 1
        cols = [
            map(str, range(sl.start + 1, sl.stop + 1)),
            tier_link[tl],
            int_texts(L.plane[sl]),
            v.csv_device_role[a],
            v.ports(a, L.a_port[sl]),
            int_texts(L.a_speed[sl]),
            v.csv_device_role[z],
            v.ports(z, L.z_port[sl]),
            int_texts(L.z_speed[sl]),
        ]
        if floor is not None:
            cols += floor.columns(sl)
        if legs is not None:
            cols.append(legs(sl))
        yield csv_lines(cols, sl.stop - sl.start)


def write_cabling(fabric: Fabric, path: Path, lay=None, bom=None) -> None:
    """cabling.csv; with a layout, the floor columns follow the wiring columns.

    A fabric with breakout cables gets one more column, ``breakout_cable``: each leg
    names the one physical cable it is part of (see :func:`breakout_names`).
    """
    legs = breakout_names(fabric, bom)
    with open_output(path, newline="") as fh:
        fh.write(csv_header(COLUMNS + (FLOOR_COLUMNS if lay is not None else ()) + ((BREAKOUT_COLUMN,) if legs is not None else ())))
        for text in text_chunks(fabric, lay, bom, legs):
            fh.write(text)


BREAKOUT_COLUMN = "breakout_cable"


def breakout_names(fabric: Fabric, bom):
    """Each leg's ``breakout_cable`` cells for a slice of cables, or None when the fabric has no breakout cable.

    A breakout cable (a 400G cage fanned out to 2 x 200G NICs) is ONE physical cable with
    several legs. Each leg stays a row of its own (one port at each end, as NetBox cables
    and ``topogen validate`` need), and names its cable by the cage end:
    ``leaf-g00-r0:p1-p2`` on both legs, so installers pull it once and the validator checks
    that its legs stay on that cage. Fabrics without breakout keep the file unchanged.
    """
    bo = getattr(bom, "breakouts", None)
    if bo is None or not len(bo):
        return None
    table = csv_table(bo.names(fabric, np.arange(len(bo))) + [""])  # each cable's cell once; group -1 (no breakout) is the last, ""
    return lambda rows: table[bo.group[rows]]


def export(ctx, dest: Path) -> list[Path]:
    layouts = getattr(ctx, "layouts", None) or {}
    boms = getattr(ctx, "boms", None) or {}
    paths = per_arch(ctx.fabrics, dest, "cabling.csv", lambda f, p: write_cabling(f, p, layouts.get(f.arch), boms.get(f.arch)))
    nets = getattr(ctx, "networks", None) or {}
    if nets:  # the other networks (spec networks:) in a file of their own: cabling.csv stays the compute fabric's
        paths += per_arch(nets, dest, "networks-cabling.csv", lambda n, p: network_cabling.write(n, ctx.fabrics[_arch_of(ctx, n)], p, getattr(ctx, "network_layouts", {}).get(_arch_of(ctx, n))))
        plans = getattr(ctx, "network_addresses", None) or {}
        paths += per_arch({a: x for a, x in nets.items() if a in plans}, dest, "networks-addresses.csv", lambda n, p: network_addresses.write(plans[_arch_of(ctx, n)], n, ctx.fabrics[_arch_of(ctx, n)], p))
    return paths


def _arch_of(ctx, n) -> str:
    return next(a for a, x in ctx.networks.items() if x is n)
