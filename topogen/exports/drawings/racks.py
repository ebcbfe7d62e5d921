"""``<arch>/racks/index.html`` and ``<arch>/racks/row-NN.html``: the elevation of every rack, a page per row.

The DOT/SVG/PNG elevations (:mod:`.diagrams`) draw one rack per rack type; installers
need every rack. Each row of the floor gets one HTML page holding the elevation of each
of its racks side by side, in rack-name order (:func:`topogen.layout.elevation.rack_elevation`:
every U, top first, each tray named by its hosts and each switch by its name), and
``index.html`` lists the rows with their racks, each linking to its rack on the row's
page (``row-01.html#A01``). Pages are plain HTML with no script and no outside resource,
so they open from a file share at any cluster size: one page per row, never one per
cluster; every text from the spec is escaped.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np

from topogen.exports.files import arch_dir, write_output_text
from topogen.layout.floor import row_folder
from topogen.layout.elevation import NetworkRacks, rack_elevation, rack_kinds

STYLE = "body{font-family:sans-serif;font-size:13px}.rack{display:inline-block;vertical-align:top;margin:0 12px 16px 0}.rack h2{font-size:13px;margin:4px 0}table{border-collapse:collapse}td{border:1px solid #999;padding:1px 4px;font-size:11px}"


def _page(title: str, body: str) -> str:
    return f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n<h1>{escape(title)}</h1>\n{body}</body></html>\n'


def pages(ctx, arch: str) -> list[tuple[str, str]]:
    """``(file name, HTML)`` of the index and of each row's page of ``arch`` (none without a floor plan)."""
    lay = (getattr(ctx, "layouts", None) or {}).get(arch)
    if lay is None:
        return []
    fabric = ctx.fabrics[arch]
    n = (getattr(ctx, "networks", None) or {}).get(arch)
    nlay = (getattr(ctx, "network_layouts", None) or {}).get(arch)
    nets = NetworkRacks(n, nlay) if n is not None and nlay is not None else None
    racks = nlay.floor if nets is not None else lay.racks
    names = [str(x) for x in racks.name]
    rows = np.asarray(racks.row).tolist()
    kinds = rack_kinds(lay, nets)
    nrows = max(rows) + 1 if rows else 1
    by_row: dict[int, list[int]] = {}
    for i in sorted(range(len(names)), key=lambda i: (rows[i], names[i])):
        by_row.setdefault(rows[i], []).append(i)
    out = []
    index = []
    for row, members in sorted(by_row.items()):
        page = f"{row_folder(row, nrows)}.html"
        parts = []
        for i in members:
            title, table = rack_elevation(fabric, lay, i, nets)
            parts.append(f'<div class="rack" id="{escape(names[i])}"><h2>{escape(title)}</h2>\n{table[1:-1]}\n</div>\n')
        out.append((page, _page(f"{fabric.arch}: row {row + 1}, {len(members)} rack(s)", "".join(parts))))
        links = ", ".join(f'<a href="{escape(page)}#{escape(names[i])}">{escape(names[i])}</a> ({escape(kinds[i])})' for i in members)
        index.append(f'<li><a href="{escape(page)}">row {row + 1}</a>: {len(members)} rack(s): {links}</li>\n')
    body = f"<p>{len(names):,} racks in {len(by_row):,} row(s); each row's page shows every rack's elevation.</p>\n<ul>\n{''.join(index)}</ul>\n"
    return [("index.html", _page(f"{fabric.arch}: rack elevations", body))] + out


def export(ctx, dest: Path) -> list[Path]:
    """Every architecture's rack pages under ``<arch>/racks/``."""
    paths = []
    for arch in ctx.fabrics:
        for name, html in pages(ctx, arch):
            p = arch_dir(dest, arch, "racks") / name
            write_output_text(p, html)
            paths.append(p)
    return paths
