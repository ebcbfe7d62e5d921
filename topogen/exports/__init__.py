"""Exporters: one module per output format, found through :data:`EXPORTERS`.

The modules are grouped by the tool or person their files serve: :mod:`.netbox` (NetBox's DCIM
and IPAM imports), :mod:`.slurm` (slurmctld), :mod:`.infiniband` (ibnetdiscover, OpenSM),
:mod:`.switch_configs` (FRR, SONiC, NVUE, NVIDIA Air, Arista AVD, the address plan), :mod:`.hosts` (the
compute nodes' netplan), :mod:`.workbook` (procurement's spreadsheet and BOM), :mod:`.drawings`
(diagrams and plots), :mod:`.installers` (cabling lists and pull sheets for the floor) and
:mod:`.graphs` (networkx, yEd, Gephi). The modules at this level serve them all: output files
(:mod:`.files`), size estimates, worker processes, the other networks' view, the summary and the
validation report.

Each exporter is ``export(ctx, dest) -> list[Path]``: it renders rows already
computed by earlier phases (``ctx`` is a :class:`topogen.pipeline.BuildContext`)
into files under ``dest`` and returns the paths it wrote. Exporters never decide
anything about the design.
"""

from __future__ import annotations

from typing import Callable

from topogen.exports import validation
from topogen.exports.drawings import diagrams, plots
from topogen.exports.graphs import graphml, topology
from topogen.exports.hosts import netplan
from topogen.exports.infiniband import opensm, storage
from topogen.exports.installers import cabling, pullsheets
from topogen.exports.netbox import dcim, ipam, networks
from topogen.exports.slurm import topology as slurm_topology
from topogen.exports.switch_configs import addressing, air, avd, frr, nvue, sonic
from topogen.exports.workbook import bom, book
from topogen.exports.report import html as report_html

Exporter = Callable[..., list]

# name -> exporter; order is the order they run and appear in the manifest
EXPORTERS: dict[str, Exporter] = {
    "report": report_html.export,  # the decision report (summary.json's decision as one printable page)
    "cabling": cabling.export,
    "pull-sheets": pullsheets.export,
    "topology": topology.export,
    "bom": bom.export,
    "xlsx": book.export,
    "diagrams": diagrams.export,
    "plots": plots.export,
    "netbox": networks.export,  # the compute fabric's files (dcim.export), then the other networks'
    "graphml": graphml.export,
    "slurm": slurm_topology.export,
    "ibnetdiscover": storage.export,  # the compute fabric's subnets (infiniband.ibnetdiscover.export), then an InfiniBand storage fabric's
    "opensm": opensm.export,
    "addressing": addressing.export,
    "frr": frr.export,
    "sonic": sonic.export,
    "nvue": nvue.export,
    "netplan": netplan.export,
    "air": air.export,
    "avd": avd.export,
    "ipam": ipam.export,
    "validation": validation.export,
}

# exporters that render the IP/ASN plan (topogen.config.addressing): its pools are checked before anything is written
ADDRESSED: tuple[str, ...] = ("addressing", "frr", "sonic", "nvue", "netplan", "air", "avd", "ipam")

# the day-0 configuration formats: written when named (or with --formats config / all), not by default,
# since a design iteration rarely needs a file per switch (14,336 of them at 131,072 GPUs)
CONFIG_FORMATS: tuple[str, ...] = ("addressing", "frr", "sonic", "nvue", "netplan", "air", "avd", "ipam", "opensm")

# exporters whose files split into parts that worker processes write side by side:
# name -> part names, in the order the serial run writes them (``export(ctx, dest, part=...)``)
PARTS: dict[str, tuple[str, ...]] = {
    "netbox": dcim.PARTS,
}
