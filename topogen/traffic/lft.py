"""OpenSM's forwarding tables as a routing: the LFTs the subnet manager programs, followed hop by hop.

``--routing opensm`` (``opensm:<engine>``, ``opensm:<engine>:lmc=<L>``)
routes every flow the way an InfiniBand fabric forwards it: each switch looks
the destination LID up in its linear forwarding table (LFT) and sends the
packet out of the port it finds. The tables are OpenSM's own, computed by
its routing engine for the exported fabric under the ``ibsim`` simulator
(:mod:`topogen.exports.infiniband.opensm_routes` runs the tools; this module only reads
and follows what they produced, so it stays in the traffic phase).

Nodes are numbered as the ibnetdiscover export numbers them: GPUs
``0..N-1``, switches ``N..N+S-1``, then the switch ASICs of directors (a
director's internal links cross no cable of the plan, and are not links of
the flow network). A flow from NIC port ``p`` of GPU ``s`` to GPU ``d``
starts at the node its NIC cable lands on and follows
``lft[node][dlid]`` until it reaches a GPU: ``dlid`` is the base LID of
``d``'s port ``p`` plus, with LMC ``L > 0``, ``q mod 2^L`` for the flow's
queue pair ``q`` (OpenSM gives each port ``2^L`` LIDs and routes each; a
transport spreads queue pairs over them). Routing is destination-based:
every queue pair on the same DLID takes the same path. A flow whose table
entry is missing, that loops, or that reaches another GPU has no path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from topogen.util.errors import InputError, Problem
from topogen.traffic.routing import Segments

PREFIX = "opensm"
ENGINES = ("ftree", "updn", "dnup", "minhop", "sssp")  # deadlock-free engines that need no VL set-up in ibsim
DEFAULT_ENGINE = "ftree"
MAX_LMC = 7
MAX_UNICAST_LID = 0xBFFF  # 49,151: the unicast LID space every port and switch of a subnet must fit in
NO_PORT = 255  # an LFT entry with no route
MAX_HOPS = 64  # a path longer than any fabric's diameter: a loop


@dataclass(frozen=True, slots=True)
class Choice:
    """One ``--routing opensm...``: OpenSM's routing engine and its LMC."""

    engine: str = DEFAULT_ENGINE
    lmc: int = 0

    @property
    def label(self) -> str:
        return f"{PREFIX}:{self.engine}" + (f":lmc={self.lmc}" if self.lmc else "")

    @property
    def lids(self) -> int:
        """LIDs per CA port (``2^LMC``)."""
        return 1 << self.lmc


def is_opensm(routing: str) -> bool:
    return routing == PREFIX or routing.startswith(PREFIX + ":")


def parse(routing: str) -> Choice:
    """``opensm``, ``opensm:<engine>`` or ``opensm:<engine>:lmc=<0..7>`` (an InputError naming ``routing`` otherwise)."""
    parts = routing.split(":")
    hint = f"use opensm, opensm:<engine> or opensm:<engine>:lmc=<0-{MAX_LMC}>, engine one of {', '.join(ENGINES)}"
    if parts[0] != PREFIX or len(parts) > 3:
        raise InputError([Problem("routing", f"unknown routing {routing!r:.60}", hint)])
    engine = parts[1] if len(parts) > 1 else DEFAULT_ENGINE
    if engine not in ENGINES:
        raise InputError([Problem("routing", f"unknown OpenSM routing engine {engine!r:.40}", hint)])
    lmc = 0
    if len(parts) == 3:
        m = re.fullmatch(r"lmc=([0-9])", parts[2])
        if not m or int(m.group(1)) > MAX_LMC:
            raise InputError([Problem("routing", f"bad LMC {parts[2]!r:.40} in {routing!r:.60}", hint)])
        lmc = int(m.group(1))
    return Choice(engine, lmc)


@dataclass
class Tables:
    """The forwarding state of one fabric, as OpenSM programmed it (see the module).

    Attributes:
        choice: the engine and LMC asked for.
        gpus: N; switch node ``x`` is row ``x - N`` of ``peer``/``link`` and of ``lft_base``.
        lft: out port per (switch node, LID), every switch's row after another (``NO_PORT`` where none).
        lft_base, lft_len: where each switch node's row starts in ``lft`` and how long it is (-1, 0: none).
        peer: node at the other end of (switch node, port); -1 where nothing is cabled.
        link: directed link of the flow network that leaving by (switch node, port) crosses; -1 for a director's internal link.
        nic_peer: node the NIC cable of (GPU, port) lands on; -1 where absent.
        lid: base LID of each (GPU, NIC port) in its subnet; -1 where absent.
        engines: routing engine OpenSM reports having used, per subnet (with its reason when not the one asked).
        seconds: wall time of the tools (simulator start, OpenSM, dump).
    """

    choice: Choice
    gpus: int
    lft: np.ndarray
    lft_base: np.ndarray
    lft_len: np.ndarray
    peer: np.ndarray
    link: np.ndarray
    nic_peer: np.ndarray
    lid: np.ndarray
    engines: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def notes(self) -> list[str]:
        """What the run did: the tables' source, and where OpenSM used another engine than asked (times stay out: outputs are deterministic)."""
        out = []
        other = {s: e for s, e in self.engines.items() if e.split(" ")[0] != self.choice.engine}
        if other:
            shown = "; ".join(f"{s}: {e}" for s, e in list(other.items())[:3]) + (f"; and {len(other) - 3} more" if len(other) > 3 else "")
            out.append(f"{self.choice.label}: OpenSM routed {len(other)} of {len(self.engines)} subnet(s) with another engine: {shown}")
        out.append(f"{self.choice.label}: OpenSM's forwarding tables, computed under ibsim for {len(self.engines)} subnet(s)")
        return out


BLOCK = 1 << 26  # bytes of the dump parsed at a time: numpy's temporaries stay bounded whatever the fabric


def read_lfts(source: bytes | Path, block: int = BLOCK) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """OpenSM's ``opensm-lfts.dump`` (its bytes, or its path): (switch node GUIDs, then per entry: the switch's index in that list, LID, port).

    The dump holds a header per switch (``Unicast lids [0-<top>] of switch
    Lid <lid> guid 0x<guid> ('<name>'):``) and a line per routed LID
    (``0x<lid:04x> <port:03d> # ...``); the fixed columns are read with numpy,
    ``block`` bytes at a time (cut at a line end), so a dump of 20 million
    lines takes seconds and its entries 7 bytes each (int32 switch, uint16
    LID, uint8 port).
    """
    guids: list[int] = []
    sws, lids, ports = [], [], []
    carry = b""
    for piece in _pieces(source, block):
        buf = carry + piece
        cut = buf.rfind(b"\n") + 1 if piece else len(buf)
        buf, carry = buf[:cut], buf[cut:]
        g, sw, lid, port = _read_block(buf, len(guids))
        guids += g
        sws.append(sw)
        lids.append(lid)
        ports.append(port)
        if not piece:
            break
    cat = lambda xs, t: np.concatenate(xs).astype(t, copy=False) if xs else np.zeros(0, t)  # noqa: E731
    return guids, cat(sws, np.int32), cat(lids, np.uint16), cat(ports, np.uint8)


def _pieces(source: bytes | Path, block: int):
    """The dump in pieces of ``block`` bytes, then an empty piece (the end)."""
    if isinstance(source, (bytes, bytearray)):
        for lo in range(0, len(source), block):
            yield bytes(source[lo : lo + block])
    else:
        with open(source, "rb") as fh:
            while piece := fh.read(block):
                yield piece
    yield b""


def _read_block(text: bytes, before: int) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """One piece of whole lines: its headers' GUIDs and its entries, switches numbered after the ``before`` already read."""
    data = np.frombuffer(text, np.uint8)
    if not len(data):
        return [], np.zeros(0, np.int32), np.zeros(0, np.uint16), np.zeros(0, np.uint8)
    nl = np.flatnonzero(data == 10)
    starts = np.r_[0, nl + 1]
    starts = starts[starts < len(data)]
    heads = starts[data[starts] == ord("U")]
    guids = []
    for h in heads.tolist():
        end = text.find(b"\n", h)
        line = text[h : end if end >= 0 else len(text)].decode("ascii", "replace")
        m = re.search(r"of switch Lid \d+ guid 0x([0-9a-fA-F]+)", line)
        if not m:
            raise ValueError(f"unreadable opensm-lfts.dump header: {line[:120]!r}")
        guids.append(int(m.group(1), 16))
    starts = starts[starts + 10 < len(data)]
    rows = starts[(data[starts] == ord("0")) & (data[starts + 1] == ord("x"))]
    sw = np.searchsorted(heads, rows) - 1 + before
    if len(rows) and sw.min() < 0:
        raise ValueError("opensm-lfts.dump: an LFT line before any switch header")
    hexv = np.full(256, -1, np.int32)
    for i, c in enumerate(b"0123456789abcdef"):
        hexv[c] = i
    for i, c in enumerate(b"ABCDEF"):
        hexv[c] = 10 + i
    lid = np.zeros(len(rows), np.int32)
    for k in range(2, 6):
        lid = lid * 16 + hexv[data[rows + k]]
    port = np.zeros(len(rows), np.int32)
    for k in range(7, 10):
        port = port * 10 + (data[rows + k].astype(np.int32) - ord("0"))
    if len(rows) and (lid.min() < 0 or port.min() < 0 or port.max() > 255 or (data[rows + 6] != ord(" ")).any()):
        raise ValueError("opensm-lfts.dump: an LFT line not in OpenSM's '0x<lid> <port> #' columns")
    return guids, sw.astype(np.int32), lid.astype(np.uint16), port.astype(np.uint8)


def read_guid2lid(text: str) -> dict[int, int]:
    """OpenSM's ``guid2lid`` cache: port GUID -> base LID."""
    return {int(g, 16): int(lo, 16) for g, lo in re.findall(r"^0x([0-9a-fA-F]+) 0x([0-9a-fA-F]+) 0x[0-9a-fA-F]+", text, re.M)}


def walk(t: Tables, gpu: np.ndarray, port: np.ndarray, dst: np.ndarray, qp: np.ndarray, last: np.ndarray) -> Segments:
    """Middle links of flows leaving GPU ``gpu[i]`` by NIC port ``port[i]`` for GPU ``dst[i]`` (queue pair ``qp[i]``).

    The NIC cable out and ``last`` (the directed link into the destination's
    NIC) are the caller's; a flow that arrives by another link, at another
    GPU, or not at all, is dead. Vectorised: one numpy step per hop.
    """
    n = t.gpus
    items = len(gpu)
    dead = np.zeros(items, bool)
    base = t.lid[dst, port]
    dlid = base + np.asarray(qp, np.int64) % t.choice.lids
    cur = t.nic_peer[gpu, port]
    row = np.flatnonzero((base >= 0) & (cur >= n))
    dead[np.setdiff1d(np.arange(items), row)] = True
    cur = cur[row]
    rows, links = [], []
    for _hop in range(MAX_HOPS):
        if not len(row):
            break
        sw = cur - n
        b, ln, d = t.lft_base[sw], t.lft_len[sw], dlid[row]
        ok = (b >= 0) & (d < ln)
        out = np.full(len(row), NO_PORT, np.int64)
        out[ok] = t.lft[b[ok] + d[ok]]
        ok &= (out > 0) & (out < t.peer.shape[1])
        out = np.where(ok, out, 0)
        nxt = np.where(ok, t.peer[sw, out], -1)
        lk = np.where(ok, t.link[sw, out], -1)
        ok &= nxt >= 0
        dead[row[~ok]] = True
        arrived = ok & (nxt < n)
        dead[row[arrived & ((nxt != dst[row]) | (lk != last[row]))]] = True
        go = ok & ~arrived
        keep = go & (lk >= 0)
        rows.append(row[keep])
        links.append(lk[keep])
        row, cur = row[go], nxt[go]
    else:
        dead[row] = True  # still travelling after MAX_HOPS: a loop
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    lk = np.concatenate(links) if links else np.zeros(0, np.int64)
    good = ~dead[r]
    return Segments(r[good], lk[good], np.ones(int(good.sum())), dead)
