"""Addresses and switch configurations that an expansion changes, and only those.

The address plan (:mod:`topogen.config.addressing`: loopbacks, ASNs, a /31 per
switch-to-switch link, the GPU NICs' addresses) is computed on the installed wiring
against the installed phase's spec, in cable-id order (a kept or moved cable keeps its
id, new cables take the next ones). The final wiring's plan is **pinned** over it
(:func:`pinned`): the new spec's own plan, with

* every kept cable's addresses (a switch link's /31, a GPU NIC's address and its
  gateway) as installed; new and moved switch links take the lowest free /31s of the
  ``fabric`` pool;
* every installed switch's loopback and ASN as installed; new switches take the lowest
  free loopbacks, and ASNs by the new plan's groups (``rfc7938``: a new spine joins its
  group's installed ASN; a new group or leaf takes the lowest free ASN);
* the GPU pool kept in the installed layout (slot per leaf and rail, block per plane and
  rail): an installed leaf's new GPU ports take free addresses of its slot, a new leaf a
  free slot of its rail's block, else (rail-optimized: the GPUs route the whole pool) a
  slot past the installed blocks. Rail-only GPUs route their rail's block as one prefix:
  when a rail's block has no free slot for its new leaves, the blocks double (as often
  as needed) and the installed GPU NICs keep their place within their rail's block but
  take the wider block's prefix (counted as renumbered);

every address unique (:func:`collisions`), and every pool checked. The pinned plan is
written as ``addressing-pinned.csv`` (:func:`pinned_lines`); when the installed phase is
an expansion's output, that file is its plan (:func:`read_pinned`), not its spec's rules.
The two plans are compared

* link by link (cable id): a kept cable whose ends get other addresses is
  **renumbered**; a moved cable gets the addresses of its new place; a new cable is
  **new**; a removed one's addresses are freed;
* switch by switch (device identity): loopback and ASN.

The configurations compared are the FRR files (:func:`topogen.config.frr.generate_texts`)
of both wirings, switch by switch: a switch whose file differs (a cable, an
address, a neighbour, a loopback or ASN) is **changed** and its new file is written;
the others keep theirs. Where the switches do not take FRR (an InfiniBand fabric,
:mod:`topogen.config.technology`), only the addresses are compared.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from topogen.asbuilt import wiring
from topogen.config import addressing, frr
from topogen.config.paths import switch_dirs
from topogen.fabric.view import csv_header
from topogen.growth.phase import bad_row, expansion_rows
from topogen.growth.rewire import Wire, identity
from topogen.util.errors import InputError, Problem
from topogen.util.text import csv_line

LINK_COLUMNS = ("cable", "change", "a_device", "a_port", "z_device", "z_port", "a_address_was", "z_address_was", "a_address", "z_address")
SWITCH_COLUMNS = ("switch", "loopback_was", "loopback", "asn_was", "asn")


@dataclass
class AddressDelta:
    """What the expansion changes in the address plan and the switches' configurations."""

    links: list[tuple]  # LINK_COLUMNS rows, changed links only (cable-id order)
    switches: dict[str, tuple]  # new switch name -> (loopback was, loopback, asn was, asn), loopback or ASN changed (or new)
    kept_same: int  # kept cables whose addresses stay
    kept_renumbered: int  # kept cables whose addresses change
    gpu_nics_renumbered: int  # installed GPU NIC links (kept) whose GPU address changes
    configs: dict[str, str] = field(default_factory=dict)  # switch -> its new FRR text, for switches whose file changes
    config_dirs: dict[str, str] = field(default_factory=dict)  # switch -> folder under frr/
    configs_same: int = 0  # installed switches whose FRR file stays byte for byte
    compared_configs: bool = False  # False: the switches take no FRR (InfiniBand): addresses only
    fabric: Any = None  # the final wiring as a Fabric (cable-id order), and its pinned plan
    plan: Any = None
    cables: Any = None  # the cable id of each link row of ``fabric``

    def figures(self) -> dict[str, Any]:
        return {
            "links_kept_same": self.kept_same,
            "links_kept_renumbered": self.kept_renumbered,
            "gpu_nics_renumbered": self.gpu_nics_renumbered,
            "links_changed": len(self.links),
            "loopbacks_changed": sum(1 for v in self.switches.values() if v[0] and v[0] != v[1]),
            "asns_changed": sum(1 for v in self.switches.values() if v[2] and v[2] != v[3]),
            **({"configs_changed": len(self.configs), "configs_same": self.configs_same} if self.compared_configs else {}),
        }


def fabric_of(wires: list[Wire], spec, arch: str):
    """``wires`` as a Fabric of ``spec`` whose link rows keep the wires' order, and each row's cable id."""
    ids = [w.cable for w in wires]
    raw = wiring.RawWiring(
        Path("cabling.csv"), "as-built", arch, None, None,
        [w.a for w in wires], [w.a_port for w in wires], [w.z for w in wires], [w.z_port for w in wires],
        [w.a_speed for w in wires], [w.z_speed for w in wires], ids, ids, loc_fmt="cable #{}",
    )
    got = wiring.to_fabric(raw, spec, arch)
    return got.fabric, np.asarray(got.labels.cable, np.int64)


def _ends(fab, ad, cables) -> dict[int, tuple]:
    """Cable id -> (a address, z address, prefix length) as CIDR text ('' unnumbered)."""
    a = addressing.cidr_text(ad.a_addr, ad.prefix_len)
    z = addressing.cidr_text(ad.z_addr, ad.prefix_len)
    num = ad.prefix_len > 0
    return {int(c): (a[i] if num[i] else "", z[i] if num[i] else "") for i, c in enumerate(cables.tolist())}


def _short(pool: str, net, need: int, why: str) -> InputError:
    return InputError([Problem(f"addressing.{pool}", f"pool {pool} {net} holds {net.num_addresses:,} addresses; keeping the installed addresses needs {need:,} ({why})", "give a larger pool in the new spec")])


def _lowest_free(used: np.ndarray, count: int, first: int = 0) -> np.ndarray:
    """The ``count`` lowest integers >= ``first`` not in ``used``."""
    cand = np.arange(first, first + count + len(used), dtype=np.int64)
    return np.setdiff1d(cand, used, assume_unique=False)[:count]


def pinned(fab0, cab0, ad0, fab1, cab1, ad1, new_cables: set[int]):
    """The final wiring's plan ``ad1`` with the installed plan ``ad0`` kept (see the module); also installed as ``plan(fab1)``.

    ``new_cables``: cables of the final wiring that are not kept (moved or new): they take free addresses.
    Raises :class:`InputError` naming the pool when the kept addresses and the new ones do not fit.
    """
    spec = ad1.spec
    L1, n1 = fab1.cable_table(), fab1.gpus
    row0 = {int(c): i for i, c in enumerate(cab0.tolist())}
    kept1 = np.array([i for i, c in enumerate(cab1.tolist()) if c in row0 and c not in new_cables], np.int64)
    kept0 = np.array([row0[int(cab1[i])] for i in kept1.tolist()], np.int64)
    a, z, plen = ad1.a_addr.copy(), ad1.z_addr.copy(), ad1.prefix_len.copy()
    route, rlen = ad1.gpu_route.copy(), ad1.gpu_route_len.copy()

    # switch-to-switch links: kept /31s stay, the others take the lowest free ones
    sw1 = L1.a_dev >= n1
    keep_sw = kept1[sw1[kept1] & (ad0.prefix_len[kept0] > 0) & (plen[kept1] > 0)] if len(kept1) else kept1
    keep_sw0 = kept0[np.isin(kept1, keep_sw)] if len(kept1) else kept0
    if ad1.numbered:
        net = spec.pool("fabric")
        fb = int(net.network_address)
        a[keep_sw], z[keep_sw] = ad0.a_addr[keep_sw0], ad0.z_addr[keep_sw0]
        rest = np.setdiff1d(np.flatnonzero(sw1 & (plen > 0)), keep_sw)
        used = (ad0.z_addr[keep_sw0].astype(np.int64) - fb) // 2
        free = _lowest_free(used, len(rest))
        if len(free) and 2 * int(free.max()) + 2 > net.num_addresses:
            raise _short("fabric", net, 2 * int(free.max()) + 2, f"{len(keep_sw):,} kept /31s and {len(rest):,} new ones")
        z[rest] = (fb + 2 * free).astype(np.uint32)
        a[rest] = z[rest] + np.uint32(1)

    # loopbacks and ASNs of the installed switches stay
    old_sw = {identity(s.name): i for i, s in enumerate(fab0.switches)}
    nsw = len(fab1.switches)
    was = np.array([old_sw.get(identity(s.name), -1) for s in fab1.switches], np.int64)
    inst = np.flatnonzero(was >= 0)
    lo = ad1.loopback.copy()
    lnet = spec.pool("loopbacks")
    lb = int(lnet.network_address)
    lo[inst] = ad0.loopback[was[inst]]
    fresh = np.flatnonzero(was < 0)
    free = _lowest_free(ad0.loopback[was[inst]].astype(np.int64) - lb, len(fresh), 1)
    if len(free) and int(free.max()) >= lnet.num_addresses:
        raise _short("loopbacks", lnet, int(free.max()) + 1, f"{len(inst):,} kept loopbacks and {len(fresh):,} new ones")
    lo[fresh] = (lb + free).astype(np.uint32)
    asn = ad1.asn.copy()
    groups: dict[int, list[int]] = {}
    for s, g in enumerate(ad1.asn.tolist()):
        groups.setdefault(g, []).append(s)
    taken: set[int] = set()
    open_groups = []
    for g, members in groups.items():  # first appearance order
        olds = Counter(int(ad0.asn[was[s]]) for s in members if was[s] >= 0)
        pick = next((x for x, _ in sorted(olds.items(), key=lambda t: (-t[1], t[0])) if x not in taken), None)
        if pick is None:
            open_groups.append(g)
        else:
            taken.add(pick)
            asn[members] = pick
    first, last = spec.asn_range
    nxt = first
    for g in open_groups:
        while nxt in taken:
            nxt += 1
        if nxt > last:
            raise InputError([Problem("addressing.asn_pool", f"asn_pool {spec.asn_pool} holds {last - first + 1:,} ASNs; keeping the installed ASNs needs more ({len(taken):,} kept, {len(open_groups):,} new)", "widen the range, e.g. 4200000000-4294967294")])
        asn[groups[g]] = nxt
        taken.add(nxt)

    # GPU NICs
    g1 = np.flatnonzero(L1.a_dev < n1)
    if len(g1):
        _gpu_pin(fab0, ad0, fab1, ad1, kept0, kept1, g1, a, z, plen, route, rlen)
    return addressing.pin(fab1, ad1, loopback=lo, asn=asn, a_addr=a, z_addr=z, prefix_len=plen, gpu_route=route, gpu_route_len=rlen)


def _gpu_pin(fab0, ad0, fab1, ad1, kept0, kept1, g1, a, z, plen, route, rlen) -> None:
    """The GPU links' addresses of the pinned plan, in place (see the module)."""
    spec = ad1.spec
    L1, n1, k = fab1.cable_table(), fab1.gpus, fab1.hb_domain
    net = spec.pool("gpus")
    P = int(net.network_address)
    link = spec.gpu_subnet == "link"
    S0, nb0, RB0 = addressing.gpu_layout(fab0)
    S1, nb1, RB1 = addressing.gpu_layout(fab1)
    same_rules = ad0.spec.gpu_subnet == spec.gpu_subnet and int(ad0.spec.pool("gpus").network_address) == P
    old_of = dict(zip(kept1.tolist(), kept0.tolist())) if same_rules else {}
    blk = (L1.plane[g1].astype(np.int64) * k + L1.a_dev[g1] % k).tolist()
    leaf = (L1.z_dev[g1] - n1).tolist()
    ports = L1.z_port[g1].tolist()
    pairs: dict[tuple[int, int], list[int]] = {}
    for i, r in enumerate(g1.tolist()):
        pairs.setdefault((blk[i], leaf[i]), []).append(r)
    port_of = dict(zip(g1.tolist(), ports))
    cap = (lambda S: S // 2) if link else (lambda S: S - 3)
    pos_of = (lambda r, base: (int(ad0.z_addr[r]) - base) // 2) if link else (lambda r, base: int(ad0.a_addr[r]) - base - 2)
    # pairs holding kept GPU NICs keep their installed slot when it has room for the pair's new ports
    slot: dict[tuple[int, int], tuple[int, int]] = {}  # pair -> (slot base relative to its block, size)
    used: dict[tuple[int, int], set[int]] = {}
    for key, rows in pairs.items():
        pinned_rows = [r for r in rows if r in old_of and ad0.prefix_len[old_of[r]] > 0]
        if not pinned_rows:
            continue
        b0 = int(ad0.z_addr[old_of[pinned_rows[0]]]) & ~(S0 - 1)
        if len(rows) > cap(S0) or {int(ad0.z_addr[old_of[r]]) & ~(S0 - 1) for r in pinned_rows} != {b0}:
            continue
        slot[key] = (b0 - P - key[0] * RB0, S0)
        used[key] = {pos_of(old_of[r], b0) for r in pinned_rows}
    railonly = fab1.arch == "rail-only"
    # rail-only: every rail's addresses in its block (one route); the blocks double until the new leaves fit
    RB = RB0 if same_rules else RB1
    blocks = sorted({key[0] for key in pairs})
    while True:
        place: dict[tuple[int, int], int] = {}  # pair -> absolute slot base
        over = P + max(nb0, nb1, max(blocks) + 1) * RB
        # past every kept slot too: a grown phase's plan (read back) has slots past its blocks
        over = max([over] + [P + key[0] * RB + b + size for key, (b, size) in slot.items()])
        fits = True
        for b in blocks:
            # every kept slot, relative to this block (a grown phase's slot may stand in another rail's block)
            taken = sorted(((key[0] - b) * RB + slot[key][0], (key[0] - b) * RB + slot[key][0] + slot[key][1]) for key in slot)
            starts = iter(x for x in range(0, RB - S1 + 1, S1) if not any(lo_ < x + S1 and x < hi for lo_, hi in taken))
            for key in (key for key in pairs if key[0] == b and key not in slot):
                x = next(starts, None)
                if x is None:
                    if railonly:
                        fits = False
                        break
                    over = (over + S1 - 1) // S1 * S1
                    place[key] = over
                    over += S1
                else:
                    place[key] = P + b * RB + x
            if not fits:
                break
        if fits or RB >= net.num_addresses:
            break
        RB *= 2
    for key, rows in pairs.items():
        rows = sorted(rows, key=lambda r: port_of[r])
        if key in slot:
            base, S = P + key[0] * RB + slot[key][0], slot[key][1]
            taken_pos = used[key]
            mine = [r for r in rows if r in old_of and ad0.prefix_len[old_of[r]] > 0]
            b0 = P + key[0] * RB0 + slot[key][0]
            pos = {r: pos_of(old_of[r], b0) for r in mine}
            free = iter(x for x in range(cap(S)) if x not in taken_pos)
            for r in rows:
                if r not in pos:
                    pos[r] = next(free)
        else:
            base, S = place[key], S1
            pos = {r: i for i, r in enumerate(rows)}
        for r in rows:
            if link:
                z[r] = base + 2 * pos[r]
                a[r] = z[r] + 1
                plen[r] = 31
            else:
                z[r] = base + 1
                a[r] = base + 2 + pos[r]
                plen[r] = 32 - (S - 1).bit_length()
            if railonly:
                route[r] = P + key[0] * RB
                rlen[r] = 32 - (RB - 1).bit_length()
    top = int(max(int(a[g1].max()), int(z[g1].max()))) - P + 1
    if top > net.num_addresses or (railonly and not fits):
        raise _short("gpus", net, max(top, len(blocks) * RB), f"the installed GPU NICs' slots and {len(pairs):,} leaf slots")


def collisions(fab, ad) -> list[int]:
    """Addresses held by more than one interface of ``fab``'s plan ``ad`` (a rail subnet's gateway counts once per leaf and rail)."""
    L = fab.cable_table()
    num = ad.prefix_len > 0
    gpu = L.a_dev < fab.gpus
    parts = [ad.loopback.astype(np.int64), ad.a_addr[num].astype(np.int64), ad.z_addr[num & ~gpu].astype(np.int64)]
    gz = num & gpu
    if ad.spec.gpu_subnet == "link":
        parts.append(ad.z_addr[gz].astype(np.int64))
    else:
        parts.append(np.unique(np.stack([L.z_dev[gz].astype(np.int64), ad.z_addr[gz].astype(np.int64)], 1), axis=0)[:, 1] if gz.any() else np.zeros(0, np.int64))
    allv = np.concatenate(parts)
    vals, counts = np.unique(allv, return_counts=True)
    return vals[counts > 1].tolist()


def compare(installed: list[Wire], final: list[Wire], moved: set[int], added: set[int], removed: set[int], old_spec, new_spec, arch: str, frr_too: bool, pinned_file: Path | None = None) -> AddressDelta:
    """The address plans (and with ``frr_too`` the FRR files) of the installed and the final wiring compared (see the module).

    ``pinned_file``: the installed phase's own plan when an expansion wrote it
    (:data:`PINNED_FILE`), read over its spec's rules (:func:`read_pinned`).
    """
    fab0, cab0 = fabric_of(sorted(installed, key=lambda w: w.cable), old_spec, arch)
    fab1, cab1 = fabric_of(final, new_spec, arch)
    ad0 = addressing.plan(fab0)
    if pinned_file is not None:
        ad0 = read_pinned(pinned_file, fab0, cab0, ad0)
    ad1 = pinned(fab0, cab0, ad0, fab1, cab1, addressing.plan(fab1), moved | added)
    dup = collisions(fab1, ad1)
    if dup:
        raise AssertionError(f"the pinned address plan gives {len(dup)} addresses twice, e.g. {addressing.ip_text(np.asarray(dup[:3], np.uint32)).tolist()}")
    was, now = _ends(fab0, ad0, cab0), _ends(fab1, ad1, cab1)
    by_cable = {w.cable: w for w in final}
    gone = {w.cable: w for w in installed}
    links, same, renumbered, gpus = [], 0, 0, 0
    for c in sorted(set(was) | set(now)):
        old, new = was.get(c, ("", "")), now.get(c, ("", ""))
        w = by_cable.get(c) or gone[c]
        change = "new" if c in added else "removed" if c in removed else "moved" if c in moved else "renumbered" if old != new else ""
        if change == "" :
            same += 1
            continue
        if change == "renumbered":
            renumbered += 1
            gpus += w.a_port.startswith("nic") and old[0] != new[0]
        links.append((c, change, w.a, w.a_port, w.z, w.z_port, *old, *(new if change != "removed" else ("", ""))))
    lo0, lo1 = addressing.ip_text(ad0.loopback), addressing.ip_text(ad1.loopback)
    old_sw = {identity(s.name): i for i, s in enumerate(fab0.switches)}
    switches = {}
    for j, s in enumerate(fab1.switches):
        i = old_sw.get(identity(s.name))
        prev = (lo0[i], int(ad0.asn[i])) if i is not None else ("", 0)
        cur = (lo1[j], int(ad1.asn[j]))
        if prev != cur:
            switches[s.name] = (prev[0], cur[0], prev[1] or "", cur[1])
    out = AddressDelta(links, switches, same, renumbered, int(gpus), fabric=fab1, plan=ad1, cables=cab1)
    if frr_too:
        out.compared_configs = True
        texts0 = {identity(fab0.switches[s].name): t for s, t in frr.generate_texts(fab0)}
        dirs = switch_dirs(fab1)
        for s, t in frr.generate_texts(fab1):
            name = fab1.switches[s].name
            if texts0.get(identity(name)) != t:
                out.configs[name] = t
                out.config_dirs[name] = dirs[s]
            else:
                out.configs_same += 1
    return out


def link_lines(d: AddressDelta) -> Iterator[str]:
    """addresses-delta.csv: every link whose addresses change (renumbered, moved, new, removed)."""
    yield csv_header(LINK_COLUMNS)
    for r in d.links:
        yield csv_line(r)


def switch_values(d: AddressDelta, name: str) -> tuple:
    """(loopback was, loopback, ASN was, ASN) of a switch, blanks when they stay."""
    return d.switches.get(name, ("", "", "", ""))


PINNED_FILE = "addressing-pinned.csv"
PINNED_COLUMNS = ("cable", "switch", "a_address", "z_address", "gpu_route", "loopback", "asn")


def pinned_lines(d: AddressDelta) -> Iterator[str]:
    """addressing-pinned.csv: the final wiring's plan as pinned, every link (by cable id: both ends' addresses, a GPU
    NIC's route), then every switch (loopback, ASN); the next expansion reads it as the installed plan (:func:`read_pinned`)."""
    fab, ad = d.fabric, d.plan
    num = ad.prefix_len > 0
    a = np.where(num, addressing.cidr_text(ad.a_addr, ad.prefix_len), "")
    z = np.where(num, addressing.cidr_text(ad.z_addr, ad.prefix_len), "")
    route = np.where(ad.gpu_route_len > 0, addressing.cidr_text(ad.gpu_route, ad.gpu_route_len), "")
    yield csv_header(PINNED_COLUMNS)
    for c, x, y, r in zip(d.cables.tolist(), a.tolist(), z.tolist(), route.tolist()):
        yield csv_line((c, "", x, y, r, "", ""))
    lo = addressing.ip_text(ad.loopback)
    for s, (l, asn) in enumerate(zip(lo.tolist(), ad.asn.tolist())):
        yield csv_line(("", fab.switches[s].name, "", "", "", l, asn))


def read_pinned(path: Path, fab, cables: np.ndarray, base):
    """``base`` (the plan of ``fab`` by its spec's rules) with the addresses an expansion pinned (``path``: :data:`PINNED_FILE`).

    Links by cable id (``cables``: each link row's), switches by identity; rows of
    cables or switches ``fab`` lacks are ignored, links and switches the file lacks keep
    ``base``'s. InputError naming the file and line when a row is malformed.
    """
    a, z, plen = base.a_addr.copy(), base.z_addr.copy(), base.prefix_len.copy()
    route, rlen = base.gpu_route.copy(), base.gpu_route_len.copy()
    lo, asn = base.loopback.copy(), base.asn.copy()
    row_of = {int(c): i for i, c in enumerate(np.asarray(cables).tolist())}
    sw_of = {identity(s.name): i for i, s in enumerate(fab.switches)}

    def iface(text: str):
        return ipaddress.IPv4Interface(text) if text else None

    for no, r in expansion_rows(path, PINNED_COLUMNS, PINNED_FILE):
        try:
            if r["cable"]:
                i = row_of.get(int(r["cable"]))
                x, y, g = iface(r["a_address"]), iface(r["z_address"]), iface(r["gpu_route"])
                if i is None:
                    continue
                if (x is None) != (y is None):
                    raise ValueError("one end numbered")
                if x is not None:
                    a[i], z[i], plen[i] = int(x.ip), int(y.ip), x.network.prefixlen
                else:
                    plen[i] = 0
                if g is not None:
                    route[i], rlen[i] = int(g.ip), g.network.prefixlen
            else:
                s = sw_of.get(identity(r["switch"]))
                l, n = ipaddress.IPv4Address(r["loopback"]), int(r["asn"])
                if s is not None:
                    lo[s], asn[s] = int(l), n
        except (KeyError, ValueError, TypeError) as err:
            raise bad_row(path, no, r, f"give the {PINNED_FILE} topogen expand wrote ({err})") from None
    return addressing.pin(fab, base, loopback=lo, asn=asn, a_addr=a, z_addr=z, prefix_len=plen, gpu_route=route, gpu_route_len=rlen)
