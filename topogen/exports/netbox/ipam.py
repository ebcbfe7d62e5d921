"""NetBox IPAM import files of the addressing plan (:mod:`topogen.exports.netbox.ipam_rows`).

``netbox/ipam/rirs.csv`` and ``asns.csv`` once per build (every ASN of
every architecture once: NetBox holds an ASN once), then
``<arch>/netbox/ipam/``: vrfs, virtual interfaces, prefixes, IP addresses.
Import after the DCIM files of the ``netbox`` format, in the order of
:data:`topogen.exports.netbox.ipam_rows.FILES`. A file over NetBox's 2.5 MiB limit on
pasted text is split into parts (``ip-addresses-001.csv``...), as the DCIM
files are (:func:`topogen.exports.files.write_csv_parts`).
"""

from __future__ import annotations

from pathlib import Path

from topogen.config.technology import writes
from topogen.exports.netbox import ipam_rows as ipam
from topogen.exports.files import arch_dir, write_csv_parts
from topogen.exports.netbox.dcim import MAX_PART_BYTES, part_rows, write_parts
from topogen.fabric.view import csv_header, csv_records


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    fabrics = {a: f for a, f in ctx.fabrics.items() if writes(ctx, a, "ipam")}  # an InfiniBand fabric has no IP plan
    if fabrics:
        d = arch_dir(dest, "netbox", "ipam")
        rows = ipam.build_rows(fabrics)
        for name, columns in ipam.BUILD_FILES.items():
            paths.extend(write_parts(d, name.removesuffix(".csv"), columns, rows[name]))
    for arch, fabric in fabrics.items():
        d = arch_dir(dest, arch, "netbox", "ipam")
        runs = ipam.columns(fabric)
        for name, columns in ipam.ARCH_FILES.items():
            paths.extend(write_csv_parts(d, name.removesuffix(".csv"), csv_header(columns), map(csv_records, runs[name]), MAX_PART_BYTES, part_rows(name.removesuffix(".csv"))))
    return paths
