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

``cable-lengths.csv``: the length histogram, one row per link tier, sold
length and media (``tier, link, length_m, media, cable_sku, cables``), for
every catalog (also those that price no cables).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from topogen.bom.bill import Bom
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


def generate_rows(bom: Bom) -> Iterator[tuple]:
    """The CSV rows after the header: one per SKU (totals are in bom.json and the workbook)."""
    lengths = {c.sku: c.length_m for c in (bom.link_media.cables if bom.link_media is not None else [])}
    for x in bom.sku_lines():
        length = lengths.get(x.sku, "") if x.category == "cable" else ""
        row = (x.category, x.sku, x.description, x.used_in, x.quantity, length, x.unit_price, x.extended_price, x.unit_power_w, x.total_power_w, x.price_source, x.power_source)
        yield row  # written by the CSV rule (topogen.util.text.csv_field)


def write_bom_csv(bom: Bom, path: Path, provenance: str) -> None:
    write_csv(path, COLUMNS, generate_rows(bom))


LENGTH_COLUMNS = ("tier", "link", "length_m", "media", "cable_sku", "cables")


def write_lengths_csv(bom: Bom, path: Path, provenance: str) -> None:
    write_csv(path, LENGTH_COLUMNS, bom.length_rows())


def write_bom_json(bom: Bom, path: Path, provenance: str) -> None:
    doc = {"generator": provenance, **bom.to_dict()}
    write_output_text(path, json.dumps(doc, indent=2) + "\n")


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    prov = ctx.spec.provenance()
    for arch, bom in ctx.boms.items():
        d = arch_dir(dest, arch)
        for name, writer in (("bom.csv", write_bom_csv), ("bom.json", write_bom_json), ("cable-lengths.csv", write_lengths_csv)):
            p = d / name
            writer(bom, p, prov)
            paths.append(p)
    return paths
