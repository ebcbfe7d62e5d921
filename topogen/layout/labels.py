"""The floor view of every cable: each end's rack and U, length, media, SKUs and a printable label.

One view for every renderer (``cabling.csv``, the pull sheets). Labels are
TIA-606 style and name both ends, lower end first: ``<rack>-U<u> <port> /
<rack>-U<u> <port>``, e.g. ``B03-U10 gpu5-nic0 / B09-U04 p12``. A GPU's port is
its NIC interface (``gpu<rank>-nic<plane>``, as in the NetBox and Slurm
files), which is unique in its tray; a switch's port is ``p<n>``. Since every
port holds one cable, every label is unique.

Columns come as CSV fields (:meth:`FloorView.columns`), gathered from tables
formatted once (racks, U numbers, media, SKUs; device and port names from
:func:`topogen.view.view`); only the label is formatted per cable.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..model import Fabric
from ..naming import width
from ..view import csv_field, csv_table, int_texts, number_texts, text_table, view
from . import Layout

COLUMNS = ("a_rack", "a_u", "z_rack", "z_u", "length_m", "media", "cable_sku", "a_transceiver_sku", "z_transceiver_sku", "label")


class FloorView:
    """Per-cable floor columns of one fabric, formatted in chunks of rows."""

    def __init__(self, fabric: Fabric, lay: Layout, bom=None):
        self.fabric, self.lay = fabric, lay
        self.names = view(fabric)
        self.racks = text_table(lay.racks.name)
        self.csv_racks = csv_table(lay.racks.name)
        self.uw = width(lay.spec.rack_u + 1)
        self.rw = width(fabric.hb_domain)
        lm = getattr(bom, "link_media", None)
        self.lm = lm
        if lm is not None:
            self.media = csv_table(m.name for m in lm.media)
            self.sw_tx = csv_table(m.transceiver.sku if m.transceiver else "" for m in lm.media)
            self.gpu_tx = csv_table((m.gpu_transceiver or m.transceiver).sku if (m.gpu_transceiver or m.transceiver) else "" for m in lm.media)
            self.skus = csv_table([c.sku for c in lm.cables] + [""])  # index -1: no cable SKU

    def port_names(self, dev: np.ndarray, port: np.ndarray) -> np.ndarray:
        """``gpu<rank>-nic<plane>`` for GPU ends, ``p<n>`` for switch ends."""
        return self.names.interfaces(dev, port)

    @cached_property
    def _ends(self) -> np.ndarray:
        """``<rack>-U<u> `` of every device: the start of its end of a label."""
        p = self.lay.placement
        uw = self.uw
        return np.asarray([f"{r}-U{u:0{uw}d} " for r, u in zip(self.racks[p.rack].tolist(), p.u.tolist())], dtype=object)

    @cached_property
    def _u_texts(self) -> np.ndarray:
        return int_texts(self.lay.placement.u)

    def labels(self, sl: slice) -> list[str]:
        """The label of each cable of ``sl`` (plain text, not CSV-quoted)."""
        L = self.fabric.links
        a, z = L.a_dev[sl], L.z_dev[sl]
        ea, ez = self._ends[a].tolist(), self._ends[z].tolist()
        pa, pz = self.port_names(a, L.a_port[sl]).tolist(), self.port_names(z, L.z_port[sl]).tolist()
        return [f"{e1}{p1} / {e2}{p2}" for e1, p1, e2, p2 in zip(ea, pa, ez, pz)]

    def columns(self, sl: slice) -> list:
        """The :data:`COLUMNS` of the cables of ``sl`` as CSV fields (lists or object arrays)."""
        L = self.fabric.links
        p = self.lay.placement
        a, z = L.a_dev[sl], L.z_dev[sl]
        rows = len(a)
        if self.lm is not None:
            idx = self.lm.index[sl]
            media = self.media[idx]
            sku = self.skus[self.lm.cable[sl]]
            a_tx = np.where(a < self.fabric.gpus, self.gpu_tx[idx], self.sw_tx[idx])
            z_tx = self.sw_tx[idx]
        else:
            media = sku = a_tx = z_tx = ""
        labels = self.labels(sl)
        if not self.plain_labels:
            labels = [csv_field(x) for x in labels]
        return [self.csv_racks[p.rack[a]], self._u_texts[a], self.csv_racks[p.rack[z]], self._u_texts[z], number_texts(self.lay.length_m[sl]), media, sku, a_tx, z_tx, labels] if rows else [[] for _ in COLUMNS]

    @cached_property
    def plain_labels(self) -> bool:
        """No label needs CSV quoting: rack and port names hold no ``," CR LF`` (always so when generated)."""
        texts = list(self.racks.tolist()) + list(self.names.interface_names.tolist())
        return all(csv_field(t + " /") == t + " /" for t in texts)
