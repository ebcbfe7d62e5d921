"""The floor view of every cable: each end's rack and U, length, media, SKUs and a printable label.

One view for every renderer (``cabling.csv``, the pull sheets). Labels are
TIA-606 style and name both ends, lower end first: ``<rack>-U<u> <port> /
<rack>-U<u> <port>``, e.g. ``B03-U10 gpu5-nic0 / B09-U04 p12``. A GPU's port is
its NIC interface (``gpu<rank>-nic<plane>``, as in the NetBox and Slurm
files), which is unique in its tray; a switch's port is ``p<n>``. Since every
port holds one cable, every label is unique.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..model import CHUNK, Fabric
from ..naming import width
from . import Layout

COLUMNS = ("a_rack", "a_u", "z_rack", "z_u", "length_m", "media", "cable_sku", "a_transceiver_sku", "z_transceiver_sku", "label")


class FloorView:
    """Per-cable floor columns of one fabric, formatted in chunks of rows."""

    def __init__(self, fabric: Fabric, lay: Layout, bom=None):
        self.fabric, self.lay = fabric, lay
        self.racks = np.asarray(lay.racks.name, dtype=object)
        self.uw = width(lay.spec.rack_u + 1)
        self.rw = width(fabric.hb_domain)
        lm = getattr(bom, "link_media", None)
        self.lm = lm
        if lm is not None:
            self.media = np.asarray([m.name for m in lm.media], dtype=object)
            self.sw_tx = np.asarray([m.transceiver.sku if m.transceiver else "" for m in lm.media], dtype=object)
            self.gpu_tx = np.asarray([(m.gpu_transceiver or m.transceiver).sku if (m.gpu_transceiver or m.transceiver) else "" for m in lm.media], dtype=object)
            self.skus = np.asarray([c.sku for c in lm.cables] + [""], dtype=object)  # index -1: no cable SKU

    def port_names(self, dev: np.ndarray, port: np.ndarray) -> list[str]:
        """``gpu<rank>-nic<plane>`` for GPU ends, ``p<n>`` for switch ends."""
        n, k, rw = self.fabric.gpus, self.fabric.hb_domain, self.rw
        return [f"gpu{d % k:0{rw}d}-nic{p}" if d < n else f"p{p}" for d, p in zip(dev.tolist(), port.tolist())]

    def rows(self) -> Iterator[list[tuple]]:
        """Chunks of rows of :data:`COLUMNS`, in cable order."""
        L = self.fabric.links
        p = self.lay.placement
        uw = self.uw
        for start in range(0, len(L), CHUNK):
            sl = slice(start, min(start + CHUNK, len(L)))
            a, z = L.a_dev[sl], L.z_dev[sl]
            ar, zr = self.racks[p.rack[a]].tolist(), self.racks[p.rack[z]].tolist()
            au, zu = p.u[a].tolist(), p.u[z].tolist()
            ap, zp = self.port_names(a, L.a_port[sl]), self.port_names(z, L.z_port[sl])
            length = [int(x) if x.is_integer() else x for x in self.lay.length_m[sl].tolist()]
            if self.lm is not None:
                idx = self.lm.index[sl]
                media = self.media[idx].tolist()
                sku = self.skus[self.lm.cable[sl]].tolist()
                a_tx = np.where(a < self.fabric.gpus, self.gpu_tx[idx], self.sw_tx[idx]).tolist()
                z_tx = self.sw_tx[idx].tolist()
            else:
                media = sku = a_tx = z_tx = [""] * (sl.stop - start)
            labels = [f"{r1}-U{u1:0{uw}d} {p1} / {r2}-U{u2:0{uw}d} {p2}" for r1, u1, p1, r2, u2, p2 in zip(ar, au, ap, zr, zu, zp)]
            yield list(zip(ar, au, zr, zu, length, media, sku, a_tx, z_tx, labels))
