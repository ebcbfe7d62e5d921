"""``<arch>/bom.csv`` and ``<arch>/bom.json``: the bill of materials, rendered.

The BOM is computed once (:mod:`topogen.bom.bill`); this module only writes it.

``bom.csv``: the header on line 1, then one row per SKU and nothing else
(``category``, ``sku``, ``description``, ``used_in``, ``quantity``,
``unit_price_usd``, ``extended_price_usd``, ``unit_power_w``,
``total_power_w``, ``price_source``, ``power_source``), so summing a column
gives the total. Catalog text that a spreadsheet would read as a formula is
neutralised. Provenance is in ``manifest.json`` and ``bom.json``.

``length_m`` is the length of a cable SKU (empty for other lines), so the
cable rows count cables by length.

``bom.json``: the generator, the same SKU lines, the lines per tier, the media
of each link tier, the totals (per architecture, per tier, per GPU) and
``cables_by_length``.

With the spec's ``networks:`` section, ``bom.csv`` starts with a ``network`` column
(``compute`` for the compute fabric's rows, then one row per SKU of each other network:
``storage``, ``inband``, ``oob``), and ``bom.json`` adds ``networks``: each network's
lines and totals, the notes, and ``cluster`` (compute + the other networks). Without it
both files are as before, byte for byte.

``cable-lengths.csv``: the length histogram, one row per link tier, sold
length and media (``tier, link, length_m, media, cable_sku, cables``), for
every catalog (also those that price no cables).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Iterator

from topogen.bom.bill import Bom, money, spares_totals
from topogen.bom.networks import NetworkBom
from topogen.exports.files import arch_dir, write_csv, write_output_text

COLUMNS = (
    "category",
    "sku",
    "description",
    "used_in",
    "quantity",
    "length_m",
    "unit_price_usd",
    "extended_price_usd",
    "unit_power_w",
    "total_power_w",
    "price_source",
    "power_source",
)


def generate_rows(bom: Bom, spares: list | None = None) -> Iterator[tuple]:
    """The CSV rows after the header: one per SKU, then one per SKU's spares (totals are in bom.json and the workbook)."""
    lengths = {c.sku: c.length_m for c in (bom.link_media.cables if bom.link_media is not None else [])}
    for x in [*bom.sku_lines(), *(spares or ())]:
        length = lengths.get(x.sku, "") if x.category == "cable" else ""
        row = (x.category, x.sku, x.description, x.used_in, x.quantity, length, x.unit_price, x.extended_price, x.unit_power_w, x.total_power_w, x.price_source, x.power_source)
        yield row  # written by the CSV rule (topogen.util.text.csv_field)


def network_rows(nets: list[NetworkBom]) -> Iterator[tuple]:
    """The other networks' rows (``network`` first), one per SKU and network, cables with their length."""
    for b in nets:
        for x in b.sku_lines():
            length = b.cable_length(x.sku) if x.category == "cable" else ""
            yield (b.network, x.category, x.sku, x.description, x.used_in, x.quantity, length, x.unit_price, x.extended_price, x.unit_power_w, x.total_power_w, x.price_source, x.power_source)


def write_bom_csv(bom: Bom, path: Path, provenance: str, nets: list[NetworkBom] | None = None, spares: list | None = None) -> None:
    if not nets:
        write_csv(path, COLUMNS, generate_rows(bom, spares))
        return
    rows = itertools.chain((("compute", *r) for r in generate_rows(bom, spares)), network_rows(nets))
    write_csv(path, ("network", *COLUMNS), rows)


LENGTH_COLUMNS = ("tier", "link", "length_m", "media", "cable_sku", "cables")


def write_lengths_csv(bom: Bom, path: Path, provenance: str, nets: list[NetworkBom] | None = None, spares: list | None = None) -> None:
    write_csv(path, LENGTH_COLUMNS, bom.length_rows())


def write_bom_json(bom: Bom, path: Path, provenance: str, nets: list[NetworkBom] | None = None, spares: list | None = None) -> None:
    doc = {"generator": provenance, **bom.to_dict()}
    if spares is not None:
        doc["spares"] = {"lines": [_sku_dict(x) for x in spares], "totals": spares_totals(spares)}
    if nets:
        doc["networks"] = networks_doc(bom, nets)
    write_output_text(path, json.dumps(doc, indent=2) + "\n")


def networks_doc(bom: Bom, nets: list[NetworkBom]) -> dict[str, Any]:
    """bom.json's ``networks``: per network its SKU lines and totals; the notes; the cluster's totals (compute + others)."""
    cost = sum(b.cost for b in nets)
    power = sum(b.power_w for b in nets)
    return {
        "networks": {b.network: {"lines": [_sku_dict(x) for x in b.sku_lines()], "totals": b.totals()} for b in nets},
        "notes": [t for b in nets for t in b.notes()],
        "other_networks": {"cost": money(cost), "power_w": money(power)},
        "cluster": {"cost": money(bom.cost + cost), "power_w": money(bom.power_w + power)},
    }


def _sku_dict(x) -> dict[str, Any]:
    d = {f: getattr(x, f) for f in x.__slots__}
    d["extended_price"] = x.extended_price
    d["total_power_w"] = x.total_power_w
    return d


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    prov = ctx.spec.provenance()
    for arch, bom in ctx.boms.items():
        d = arch_dir(dest, arch)
        nets = getattr(ctx, "network_boms", {}).get(arch)
        spares = bom.spares(ctx.spec.spares) if ctx.spec.spares is not None else None
        for name, writer in (("bom.csv", write_bom_csv), ("bom.json", write_bom_json), ("cable-lengths.csv", write_lengths_csv)):
            p = d / name
            writer(bom, p, prov, nets, spares)
            paths.append(p)
    return paths
