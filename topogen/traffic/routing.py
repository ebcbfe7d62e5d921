"""Routing: the links each flow crosses between its source leaf and its destination leaf, and in what share.

Paths are valley-free (up, then down), as a Clos routes them with BGP or
InfiniBand's ftree: a switch with the destination leaf below it forwards down,
to the children that have it below; any other switch forwards up, to the
parents that still reach it, and only to parents that have it below when some
do (the shortest turn). A leaf pair's ISLs are upward links of both its
leaves (:mod:`.network`): a flow to the partner leaf's GPUs takes one of the
parallel ISLs and is there. Among those equal-cost next hops:

* ``spray``: every next hop gets an even share, hop by hop (oblivious per-packet
  spraying: on an intact fabric adaptive routing's upper bound; after a failure a
  switch still splits evenly, unaware of a lost link further on, which adaptive
  routing would steer around). Flows that share a source and a
  destination leaf share their shares, so they are routed once per leaf pair.
* ``ecmp``: one next hop per flow, picked by a hash of the flow (its source,
  destination, NIC port and queue pair) and the hop, as a switch hashes the
  5-tuple; the hash takes a number (``--seed`` of the hash function).
* ``dmodk``: one next hop per flow, picked by the destination's host number
  (leaf by leaf, port by port, as ftree numbers LIDs): at each hop the index
  ``(host // d) mod count``, ``d`` the product of the counts chosen from on
  the way up (InfiniBand ftree's destination-mod-k); going down from tier t,
  ``d`` drops the factor taken going up from tier t-1, so parallel links down
  are chosen by the same digit as the way up.

All of it is vectorised over the flows (or leaf pairs) hop by hop; nothing
loops in Python over flows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topogen.traffic.network import Network

ROUTINGS = ("spray", "ecmp", "dmodk")
M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass
class Segments:
    """Middle links of routed items: entry ``i`` puts share ``frac[i]`` of item ``row[i]`` on ``link[i]``."""

    row: np.ndarray
    link: np.ndarray
    frac: np.ndarray
    dead: np.ndarray  # bool per item: no path (a failure cut it off)


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a well-spread 64-bit hash of each value (wrapping arithmetic)."""
    z = np.asarray(x, np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


def route(net: Network, src_sw: np.ndarray, dst_leaf: np.ndarray, mode: str, key: np.ndarray | None = None, host: np.ndarray | None = None) -> Segments:
    """Route items from switch ``src_sw[i]`` to leaf index ``dst_leaf[i]`` (see the module).

    ``key`` (uint64 per item) drives ``ecmp``; ``host`` (destination host number)
    drives ``dmodk``. Items already at their leaf cross no middle link.
    """
    n = net.gpus
    items = len(src_sw)
    rows, links, fracs = [], [], []
    dead = np.zeros(items, bool)
    row = np.arange(items, dtype=np.int64)
    cur = np.asarray(src_sw, np.int64).copy()
    frac = np.ones(items)
    div = np.ones(items, np.int64)
    sw_tier = net.fabric.switch_tiers().astype(np.int64) if len(net.fabric.switches) else np.zeros(0, np.int64)
    fac = np.ones((items, int(sw_tier.max(initial=0)) + 2), np.int64) if mode == "dmodk" else None
    dl_all = np.asarray(dst_leaf, np.int64)
    hops = np.concatenate([net.up_link, net.down_link])
    for hop in range(2 * max(net.fabric.tiers, 1) + 2):
        live = net.leaf_of_switch[cur] != dl_all[row]
        row, cur, frac, div = row[live], cur[live], frac[live], div[live]
        if fac is not None:
            fac = fac[live]
        if not len(row):
            break
        dl = dl_all[row]
        if mode == "spray":
            down, rep, link, nxt, valid, count = _next_hops(net, hops, cur, dl)
            stuck = count == 0
            dead[row[stuck]] = True
            keep = valid
            share = frac[rep[keep]] / count[rep[keep]]
        else:
            # the next hops depend on (switch, destination leaf) only: found once per distinct pair
            width = int(net.below.shape[1]) * 64
            uk, inv = np.unique(cur * width + dl, return_inverse=True)
            inv = inv.reshape(-1)
            udown, ucount, vlink, vnxt = _valid_hops(net, hops, uk // width, uk % width)
            vptr = np.r_[0, np.cumsum(ucount)]
            down, count = udown[inv], ucount[inv]
            stuck = count == 0
            dead[row[stuck]] = True
            c = np.maximum(count, 1)
            if mode == "ecmp":
                pick = (mix(key[row] ^ mix(np.full(len(row), hop + 1, np.uint64))) % c.astype(np.uint64)).astype(np.int64)
            else:  # going down from tier t undoes the factor taken going up from tier t-1, so parallel down links mirror the way up
                t = sw_tier[cur]
                at = np.arange(len(row))
                div = np.where(down, div // fac[at, np.maximum(t - 1, 0)], div)
                pick = (host[row] // div) % c
                fac[at[~down], t[~down]] = c[~down]
                div = np.where(down, div, div * c)
            keep = ~stuck
            chosen = vptr[inv[keep]] + pick[keep]
            rep = np.arange(len(row))
            link, nxt = np.zeros(len(row), np.int64), np.zeros(len(row), np.int64)
            link[keep], nxt[keep] = vlink[chosen], vnxt[chosen]
            share = frac[keep]
        r, lk, nx = row[rep[keep]], link[keep], nxt[keep]
        rows.append(r)
        links.append(lk)
        fracs.append(share)
        if mode == "spray":  # merge the shares that meet on one switch
            k = r * max(len(net.fabric.switches), 1) + nx
            uk, inv = np.unique(k, return_inverse=True)
            row, cur = uk // max(len(net.fabric.switches), 1), uk % max(len(net.fabric.switches), 1)
            frac = np.bincount(inv, weights=share, minlength=len(uk))
            div = np.ones(len(uk), np.int64)
        else:
            row, cur, frac, div = r, nx, share, div[rep[keep]]
            if fac is not None:
                fac = fac[rep[keep]]
    else:
        live = net.leaf_of_switch[cur] != dl_all[row]
        dead[row[live]] = True  # a loop: cannot happen on a layered fabric, kept as a guard
    cat = lambda xs, t: np.concatenate(xs).astype(t) if xs else np.zeros(0, t)  # noqa: E731
    r, lk, fr = cat(rows, np.int64), cat(links, np.int64), cat(fracs, np.float64)
    bad = dead[r]
    return Segments(r[~bad], lk[~bad], fr[~bad], dead)


CHUNK = 1 << 16  # items whose candidate next hops are checked at once (up to the radix each): bounded memory


def _valid_hops(net: Network, hops: np.ndarray, cur: np.ndarray, dl: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_next_hops` in chunks of items, keeping only the valid hops: ``down`` and ``count`` per item, and the valid links and the switches they reach, grouped by item."""
    parts = []
    for a in range(0, len(cur), CHUNK):
        down, _, link, nxt, valid, count = _next_hops(net, hops, cur[a : a + CHUNK], dl[a : a + CHUNK])
        parts.append((down, count, link[valid], nxt[valid]))
    if not parts:
        return np.zeros(0, bool), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))  # type: ignore[return-value]


def _next_hops(net: Network, hops: np.ndarray, cur: np.ndarray, dl: np.ndarray):
    """The equal-cost next hops of items at switch ``cur[i]`` bound for leaf ``dl[i]``.

    Returns ``down`` (per item: going down), and per candidate link (grouped by
    item, in port order) its item ``rep``, ``link``, the switch it reaches
    ``nxt`` and whether it is ``valid``, and per item the ``count`` of valid ones.
    """
    n = net.gpus
    down = net.has_leaf(net.below, cur, dl)
    ptr = np.where(down, net.down_ptr[cur] + len(net.up_link), net.up_ptr[cur])
    deg = np.where(down, net.down_ptr[cur + 1] - net.down_ptr[cur], net.up_ptr[cur + 1] - net.up_ptr[cur])
    rep = np.repeat(np.arange(len(cur)), deg)
    start = np.cumsum(deg) - deg
    link = hops[ptr[rep] + np.arange(len(rep)) - start[rep]]
    nxt = net.head(link) - n
    dlr = dl[rep]
    below = net.has_leaf(net.below, nxt, dlr)
    dr = down[rep]
    valid = below.copy()
    up = np.flatnonzero(~dr)
    valid[up] = net.has_leaf(net.reach, nxt[up], dlr[up])
    turn = below & valid & ~dr
    has_turn = np.bincount(rep[turn], minlength=len(cur)) > 0
    valid &= ~has_turn[rep] | turn
    count = np.bincount(rep[valid], minlength=len(cur))
    return down, rep, link, nxt, valid, count
