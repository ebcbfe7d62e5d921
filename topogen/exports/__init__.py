"""Exporters: one module per output format, found through :data:`EXPORTERS`.

Each exporter is ``export(ctx, dest) -> list[Path]``: it renders rows already
computed by earlier phases (``ctx`` is a :class:`topogen.pipeline.BuildContext`)
into files under ``dest`` and returns the paths it wrote. Exporters never decide
anything about the design.
"""

from __future__ import annotations

from typing import Callable

from topogen.exports import addressing, air, bom, cabling, diagrams, frr, graphml, ibnetdiscover, ipam, netbox, netbox_networks, netplan, nvue, opensm, plots, pullsheets, slurm, sonic, storage_ib, topology, validation, workbook

Exporter = Callable[..., list]

# name -> exporter; order is the order they run and appear in the manifest
EXPORTERS: dict[str, Exporter] = {
    "cabling": cabling.export,
    "pull-sheets": pullsheets.export,
    "topology": topology.export,
    "bom": bom.export,
    "xlsx": workbook.export,
    "diagrams": diagrams.export,
    "plots": plots.export,
    "netbox": netbox_networks.export,  # the compute fabric's files (netbox.export), then the other networks'
    "graphml": graphml.export,
    "slurm": slurm.export,
    "ibnetdiscover": storage_ib.export,  # the compute fabric's subnets (ibnetdiscover.export), then an InfiniBand storage fabric's
    "opensm": opensm.export,
    "addressing": addressing.export,
    "frr": frr.export,
    "sonic": sonic.export,
    "nvue": nvue.export,
    "netplan": netplan.export,
    "air": air.export,
    "ipam": ipam.export,
    "validation": validation.export,
}

# exporters that render the IP/ASN plan (topogen.config.addressing): its pools are checked before anything is written
ADDRESSED: tuple[str, ...] = ("addressing", "frr", "sonic", "nvue", "netplan", "air", "ipam")

# the day-0 configuration formats: written when named (or with --formats config / all), not by default,
# since a design iteration rarely needs a file per switch (14,336 of them at 131,072 GPUs)
CONFIG_FORMATS: tuple[str, ...] = ("addressing", "frr", "sonic", "nvue", "netplan", "air", "ipam", "opensm")

# exporters whose files split into parts that worker processes write side by side:
# name -> part names, in the order the serial run writes them (``export(ctx, dest, part=...)``)
PARTS: dict[str, tuple[str, ...]] = {
    "netbox": netbox.PARTS,
}
