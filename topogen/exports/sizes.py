"""How many bytes a build is about to write, estimated from its link count before anything is written.

Bytes per link of each exporter, measured on a 16,384-GPU build (K = 8,
64-port, both architectures, 81,920 links, every format): the big files
grow with the links (one row or element per cable, per port or per link
end). Formats not listed are small (diagrams, BOM, Slurm, validation,
analyses) and count :data:`OTHER`. The estimate is for a warning, not a
promise: it is within a few tens of percent of what is written.
"""

from __future__ import annotations

BYTES_PER_LINK = {
    "cabling": 72,
    "topology": 153,
    "xlsx": 72,
    "netbox": 455,  # cables 236 + interfaces 204 + devices 13 + prerequisites
    "graphml": 279,
    "ibnetdiscover": 160,
    "slurm": 2,
    "addressing": 202,  # a row per cable end and per switch loopback
    "frr": 310,  # an interface stanza per switch port, a neighbour per switch-to-switch end
}
OTHER = 1
WARN_BYTES = 1_000_000_000  # warn before writing more than about 1 GB


def estimate_bytes(links: int, formats: list[str]) -> int:
    """Bytes the ``formats`` will write for a build of ``links`` cables (both architectures summed)."""
    return int(links * sum(BYTES_PER_LINK.get(f, OTHER) for f in formats))
