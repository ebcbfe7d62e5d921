"""The floor view of every cable: each end's rack and U, length, media, SKUs and a printable label.

One view for every renderer (``cabling.csv``, the pull sheets). Labels are
TIA-606 style and name both ends, lower end first: ``<rack>-U<u> <port> /
<rack>-U<u> <port>``, e.g. ``B03-U10 gpu5-nic0 / B09-U04 p12``. A GPU's port is
its NIC interface (``gpu<rank>-nic<plane>``, as in the NetBox and Slurm
files), which is unique in its tray; a switch's port is ``p<n>``. Since every
port holds one cable, every label is unique.

Columns come as CSV fields (:meth:`FloorView.columns`), gathered from tables
formatted once (racks, U numbers, media, SKUs; device and port names from
:func:`topogen.fabric.view.view`); only the label is formatted per cable.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from topogen.fabric.model import Fabric
from topogen.fabric.naming import width
from topogen.fabric.view import csv_table, int_texts, number_texts, text_table, view, writer_field
from topogen.layout import Layout

COLUMNS = ("a_rack", "a_u", "z_rack", "z_u", "length_m", "media", "cable_sku", "a_transceiver_sku", "z_transceiver_sku", "label")


class FloorView:
    """Per-cable floor columns of one fabric, formatted in chunks of rows."""

    def __init__(self, fabric: Fabric, lay: Layout, bom=None):
        self.fabric, self.lay = fabric, lay
        self.cables = fabric.cable_table()  # rows: the links, then a leaf pair's ISLs (as the layout's lengths)
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

    def labels(self, sl: slice) -> list[str]:
        """The label of each cable of ``sl`` (plain text, not CSV-quoted)."""
        L = self.cables
        a, z = L.a_dev[sl], L.z_dev[sl]
        ea, ez = self._ends[a].tolist(), self._ends[z].tolist()
        pa, pz = self.port_names(a, L.a_port[sl]).tolist(), self.port_names(z, L.z_port[sl]).tolist()
        return [f"{e1}{p1} / {e2}{p2}" for e1, p1, e2, p2 in zip(ea, pa, ez, pz)]

    def csv_labels(self, sl: slice) -> list[str]:
        """:meth:`labels` as CSV fields."""
        labels = self.labels(sl)
        return labels if self.plain_labels else [writer_field(x) for x in labels]

    @cached_property
    def _rack_u(self) -> np.ndarray:
        p = self.lay.placement
        return self.csv_racks[p.rack] + "," + int_texts(p.u)

    def rack_u(self, dev: np.ndarray) -> np.ndarray:
        """``<rack>,<U>`` of each device: two CSV fields in one piece (adjacent columns joined once)."""
        return self._rack_u[dev]

    @cached_property
    def _media_texts(self) -> tuple[np.ndarray, np.ndarray]:
        """``<media>,<cable SKU>`` and ``<media>,<cable SKU>,<a transceiver>,<z transceiver>`` by :meth:`_media_code`."""
        lm = self.lm
        two, four = [], []
        for i in range(len(lm.media)):
            for c in range(len(lm.cables) + 1):  # skus[-1]: no cable SKU
                for gpu in (False, True):
                    two.append(f"{self.media[i]},{self.skus[c - 1]}")
                    four.append(f"{two[-1]},{self.gpu_tx[i] if gpu else self.sw_tx[i]},{self.sw_tx[i]}")
        return text_table(two), text_table(four)

    def _media_code(self, sl) -> np.ndarray:
        lm = self.lm
        a = self.cables.a_dev[sl]
        return (lm.index[sl].astype(np.int64) * (len(lm.cables) + 1) + lm.cable[sl] + 1) * 2 + (a < self.fabric.gpus)

    def media_sku(self, sl) -> np.ndarray | str:
        """``<media>,<cable SKU>`` of each cable of ``sl`` (two CSV fields in one piece)."""
        return self._media_texts[0][self._media_code(sl)] if self.lm is not None else ","

    def columns(self, sl) -> list:
        """The :data:`COLUMNS` of the cables of ``sl`` (a slice or row indexes) as CSV text, adjacent fields of one
        device or one media choice joined in one piece: ``a_rack,a_u``, ``z_rack,z_u``, ``length_m``,
        ``media,cable_sku,a_transceiver_sku,z_transceiver_sku``, ``label``."""
        L = self.cables
        a, z = L.a_dev[sl], L.z_dev[sl]
        if not len(a):
            return [[] for _ in range(5)]
        media = self._media_texts[1][self._media_code(sl)] if self.lm is not None else ",,,"
        return [self.rack_u(a), self.rack_u(z), number_texts(self.lay.length_m[sl]), media, self.csv_labels(sl)]

    @cached_property
    def plain_labels(self) -> bool:
        """No label needs CSV quoting: rack and port names hold no ``," CR LF`` (always so when generated)."""
        texts = list(self.racks.tolist()) + list(self.names.interface_names.tolist())
        return all(writer_field(t + " /") == t + " /" for t in texts)
