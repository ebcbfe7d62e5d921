"""The named view of a fabric that the exporters read: names formatted once, cables chunk by chunk.

Every exporter prints device and port names: cabling.csv, the pull sheets,
NetBox, topology.json, GraphML, ibnetdiscover. A :class:`FabricView` formats
them once per fabric and process (:func:`view`): the name of every device
(GPU names ``hb<d>-gpu<r>`` and switch names, by device id), the role of
every device, and tables of port names (``nic<plane>``; a switch port by its
model's own name, :mod:`topogen.fabric.ports`) and NIC
interfaces (``gpu<rank>-nic<plane>``) looked up by a code per cable end. An
exporter then gathers a chunk of cable rows (:meth:`FabricView.chunks`) from
those tables with numpy fancy indexing: no Python formatting per cable for
anything but what is unique to a cable (its id, its label).

CSV text is built the same way (:func:`csv_lines`): every distinct value is
formatted once by topogen's one CSV rule (:func:`writer_field`, which is
:func:`topogen.util.text.csv_field`: formula starts neutralised, quoted when
it holds ``" , ; tab CR LF``), and a chunk's lines are one ``join`` over the
columns. For generated names the bytes equal ``csv.writer``'s.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Iterable, Iterator, Sequence

import numpy as np

from topogen.fabric.model import CHUNK, Fabric
from topogen.fabric.naming import GpuNames, NodeNames, width
from topogen.fabric.ports import SwitchPorts, switch_ports
from topogen.util.text import csv_field

KEEP = 4  # views kept per process (both architectures of a build, and the next build's)
_CACHE: dict[int, tuple[Fabric, "FabricView"]] = {}


def writer_field(value) -> str:
    """``value`` as one CSV field: :func:`topogen.util.text.csv_field`, the one CSV rule."""
    return csv_field(value)


def csv_table(values: Iterable) -> np.ndarray:
    """An object array of :func:`writer_field` of each value (for gathering by index)."""
    vals = list(values)
    out = np.empty(len(vals), dtype=object)
    out[:] = [writer_field(v) for v in vals]
    return out


def text_table(values: Iterable[str]) -> np.ndarray:
    """An object array of strings, for gathering by index."""
    vals = list(values)
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return out


_INTS = text_table(str(i) for i in range(4096))


def int_texts(values: np.ndarray) -> np.ndarray:
    """Decimal text of an integer column (a table lookup for small non-negative values)."""
    values = np.asarray(values)
    if len(values) == 0:
        return np.empty(0, dtype=object)
    lo, hi = int(values.min()), int(values.max())
    if lo >= 0 and hi < len(_INTS):
        return _INTS[values]
    uniq, inv = np.unique(values, return_inverse=True)
    return text_table(map(str, uniq.tolist()))[inv]


def number_texts(values: np.ndarray) -> np.ndarray:
    """CSV text of a float column: whole numbers as ints (``5``), others as Python writes them (``2.5``)."""
    values = np.asarray(values, dtype=np.float64)
    uniq, inv = np.unique(values, return_inverse=True)
    return csv_table(int(x) if x.is_integer() else x for x in uniq.tolist())[inv.reshape(-1)]


def csv_header(columns: Iterable[str]) -> str:
    """The header line of a CSV file."""
    return ",".join(writer_field(c) for c in columns) + "\n"


def csv_lines(columns: Sequence, rows: int | None = None) -> str:
    """CSV text (``\\n`` ends) of rows given column by column; each column already CSV fields.

    A column is a sequence of strings or one string (the same in every row).
    """
    if rows is None:
        rows = next(len(c) for c in columns if not isinstance(c, str))
    if rows == 0:
        return ""
    cols = [[c] * rows if isinstance(c, str) else (c.tolist() if isinstance(c, np.ndarray) else c) for c in columns]
    return "\n".join(map(",".join, zip(*cols))) + "\n"


def _is_column(c) -> bool:
    return isinstance(c, (list, tuple, np.ndarray, map, range))


def column_rows(columns: Sequence) -> Iterator[tuple]:
    """Rows (tuples) of columns given as sequences, or one value for every row."""
    rows = next(len(c) for c in columns if isinstance(c, (list, np.ndarray)))
    return zip(*[(c.tolist() if isinstance(c, np.ndarray) else c) if _is_column(c) else [c] * rows for c in columns])


_QUOTED = ',"\n\r;\t'  # a field holding one of these is quoted (and a cell may start inside it)
_STARTS = re.compile('\0[-=+@ ]')  # a field (after the NUL of the join below) starting as a formula or a blank


def _plain(text: str) -> bool:
    """Fields joined by NUL (``text``) that the CSV rule leaves as they are: no quoting, no formula start."""
    return not any(c in text for c in _QUOTED) and text[:1] not in ("-", "=", "+", "@", " ") and _STARTS.search(text) is None


def csv_column(column, rows: int) -> list[str]:
    """A column (see :func:`column_rows`) as CSV fields (:func:`writer_field`): unchanged when the rule leaves every value so."""
    if not _is_column(column):
        return [writer_field(column)] * rows
    column = column.tolist() if isinstance(column, np.ndarray) else list(column)
    try:
        text = "\0".join(column)
    except TypeError:  # not all text
        return [writer_field(x) for x in column]
    return column if _plain(text) else [writer_field(x) for x in column]


def csv_records(columns: Sequence) -> list[str]:
    """The CSV records (lines without their end) of columns (see :func:`column_rows` and :func:`csv_column`)."""
    rows = next(len(c) for c in columns if _is_column(c) and not isinstance(c, map))
    return list(map(",".join, zip(*[csv_column(c, rows) for c in columns])))


class FabricView:
    """Names of one fabric's devices and ports, formatted once; see the module docstring."""

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.gpus = fabric.gpus
        self.hb = fabric.hb_domain
        L = fabric.links
        top = max([int(L.a_port.max()) if len(L) else 0, int(L.z_port.max()) if len(L) else 0, max((s.radix for s in fabric.switches), default=0), fabric.spec.planes])
        self.max_port = top  # switch ports p0 .. p<top>, NIC ports nic0 .. nic<top>

    @cached_property
    def device(self) -> np.ndarray:
        """Name of every device, by device id (GPUs, then switches)."""
        n, k = self.gpus, self.hb
        gn = GpuNames.of(self.fabric.spec)
        if gn.template is not None:  # the site's names (naming.gpu)
            return text_table(gn.many(np.arange(n)).tolist() + [s.name for s in self.fabric.switches])
        dw, rw = max(2, width(n // k)), width(k)
        ranks = [f"-gpu{r:0{rw}d}" for r in range(k)]
        gpus = [f"hb{d:0{dw}d}{r}" for d in range((n + k - 1) // k) for r in ranks][:n]
        return text_table(gpus + [s.name for s in self.fabric.switches])

    @cached_property
    def plain(self) -> bool:
        """No switch name or role needs quoting in CSV (always so for generated names)."""
        return all(writer_field(s.name) == s.name and writer_field(s.role) == s.role for s in self.fabric.switches)

    @cached_property
    def csv_device(self) -> np.ndarray:
        """:attr:`device` as CSV fields."""
        if self.plain:
            return self.device
        out = self.device.copy()
        out[self.gpus :] = csv_table(s.name for s in self.fabric.switches)
        return out

    @cached_property
    def role(self) -> np.ndarray:
        """Role of every device (``gpu``, ``leaf``, ``spine``...), by device id."""
        return text_table(["gpu"] * self.gpus + [s.role for s in self.fabric.switches])

    @cached_property
    def csv_role(self) -> np.ndarray:
        if self.plain:
            return self.role
        return csv_table(self.role.tolist())

    @cached_property
    def csv_device_role(self) -> np.ndarray:
        """``<device>,<role>`` of every device: two adjacent CSV fields as one (fewer columns to join)."""
        return self.csv_device + "," + self.csv_role

    @cached_property
    def native(self) -> SwitchPorts:
        """Every switch port's name as its model's operating system gives it (:mod:`topogen.fabric.ports`)."""
        return switch_ports(self.fabric)

    @cached_property
    def _port_table(self) -> np.ndarray:
        """NIC port names ``nic0 ..``, then every switch port's name (:attr:`native`'s table)."""
        return np.concatenate([text_table([f"nic{p}" for p in range(self.max_port + 1)]), self.native.table])

    def _codes(self, dev: np.ndarray, port: np.ndarray, gpu_off: np.ndarray | int, sw_off: int) -> np.ndarray:
        """``gpu_off + port`` at a GPU end, ``sw_off`` + the switch's block + ``port`` at a switch end."""
        dev = np.asarray(dev, np.int64)
        port = np.asarray(port, np.int64)
        gpu = dev < self.gpus
        base = self.native.base
        off = base[np.where(gpu, 0, dev - self.gpus)] if len(base) else 0
        return np.where(gpu, gpu_off + port, sw_off + off + port)

    def ports(self, dev: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Port names of cable ends: ``nic<plane>`` at a GPU, the switch's own name (``p<n>``, ``Ethernet8``, ``1/2``...) at a switch."""
        return self._port_table[self._codes(dev, port, 0, self.max_port + 1)]

    def switch_ports(self, switch: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Names of ports ``port`` of switches ``switch`` (0-based switch indexes)."""
        return self.native.of(np.asarray(switch, np.int64), np.asarray(port, np.int64))

    @cached_property
    def _interface_table(self) -> np.ndarray:
        """Switch port names (:attr:`native`'s table), then ``gpu<rank>-nic<plane>`` by rank and plane."""
        t, rw = self.max_port + 1, width(self.hb)
        nn = NodeNames.of(self.fabric.spec)
        if nn.iface is not None:  # the site's names (naming.interface)
            return np.concatenate([self.native.table, text_table([nn.interface(r, p) for r in range(self.hb) for p in range(t)])])
        return np.concatenate([self.native.table, text_table([f"gpu{r:0{rw}d}-nic{p}" for r in range(self.hb) for p in range(t)])])

    def interface_codes(self, dev: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Index of each end's interface name in :attr:`interface_names`."""
        t = self.max_port + 1
        return self._codes(dev, port, len(self.native.table) + (np.asarray(dev, np.int64) % self.hb) * t, 0)

    @property
    def interface_names(self) -> np.ndarray:
        return self._interface_table

    def interfaces(self, dev: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Interface names of cable ends: ``gpu<rank>-nic<plane>`` at a GPU, the switch's own port name at a switch."""
        return self._interface_table[self.interface_codes(dev, port)]

    def chunks(self, rows: int | None = None, size: int = CHUNK) -> Iterator[slice]:
        """Slices of ``size`` cable rows (of ``rows`` rows, default every cable)."""
        rows = len(self.fabric.links) if rows is None else rows
        for start in range(0, rows, size):
            yield slice(start, min(start + size, rows))


def view(fabric: Fabric) -> FabricView:
    """The fabric's view, made once per process and fabric."""
    got = _CACHE.get(id(fabric))
    if got is None or got[0] is not fabric:
        while len(_CACHE) >= KEEP:  # the oldest first: a process building many fabrics keeps few alive
            del _CACHE[next(iter(_CACHE))]
        got = _CACHE[id(fabric)] = (fabric, FabricView(fabric))
    return got[1]
