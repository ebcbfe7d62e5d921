"""Closed-form counts: switches and links per tier, without building a wiring.

This module holds the *design rules* shared with the generators (tier count,
leaf layout, balanced stripe width) and an independent arithmetic evaluation of
them that never materialises a device or a cable. It runs in microseconds for
any N, so sweeps (``topogen compare``) use it, and the tests assert that the
explicit wiring of :mod:`topogen.fabric.clos` agrees with it.

Folded-Clos facts used (radix k, h = k/2, full bisection):

* a t-tier Clos serves ``k * h**(t-1)`` endpoints (k, k²/2, k³/4 ...);
* below the top tier a switch has h ports down and h up; the top uses all k down;
* a block of tier j (j < t) joins up to h blocks of tier j-1; the top tier joins
  up to k blocks of tier t-1 ("pods");
* within a block, the switches at position p of each sub-block form *stripe p*
  and connect only to the upper switches of that stripe (classic fat-tree
  striping), each with the same number of parallel links to each of them.

Fully populated, that gives ``(2t-1)·P/k`` switches and ``t·P`` links.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from math import ceil

import numpy as np

from topogen.spec import leafpair
from topogen.util.figures import plural_noun

TIER_ROLES = {1: "leaf", 2: "spine", 3: "core"}


def tier_role(tier: int) -> str:
    """Role name of a switch tier: leaf, spine, core, then ``tier4`` and up."""
    return TIER_ROLES.get(tier, f"tier{tier}")


def link_tier_name(tier: int) -> str:
    """Human name of a link tier: ``gpu-leaf``, ``leaf-spine``, ``spine-core``..."""
    lower = "gpu" if tier == 1 else tier_role(tier - 1)
    return f"{lower}-{tier_role(tier)}"


MAX_TIERS = 6
UNBOUNDED = 10**6  # tier count reported when no number of tiers can fit (radix < 4)


@dataclass(frozen=True, slots=True)
class Shape:
    """Per-tier switch radix and uplink ports of one fabric plane.

    ``radix[j-1]`` is tier j's radix (leaf first); the last entry repeats for
    higher tiers. ``ups[j-1]`` is tier j's uplink port count when that tier is
    below the top (``None`` or missing: ``radix/2``, a 1:1 tier); the top tier
    uses every port down. A uniform fabric is ``Shape((k,))``.
    """

    radix: tuple[int, ...]
    ups: tuple[int | None, ...] = ()
    speeds: tuple[int, ...] = ()  # Gb/s per link tier (GPU-leaf first, the last repeats); () = one speed

    def radix_at(self, tier: int) -> int:
        return self.radix[min(tier, len(self.radix)) - 1]

    def speed_at(self, link_tier: int) -> int:
        """Gb/s of link tier ``link_tier`` (0 when the shape holds no speeds: one speed throughout)."""
        return self.speeds[min(link_tier, len(self.speeds)) - 1] if self.speeds else 0

    def factor(self, tier: int) -> int:
        """Ports of switch tier ``tier`` (counted at its downlink speed) that one of its uplinks takes."""
        return self.speed_at(tier + 1) // self.speed_at(tier) if self.speeds else 1

    def split(self, tier: int) -> tuple[int, int]:
        """(downlink ports, uplinks) of a tier-``tier`` switch below the top.

        An uplink ``f`` times faster than the downlinks takes ``f`` ports, so a
        1:1 tier balances bandwidth: ``radix/2`` down and ``radix/(2f)`` up.
        """
        r, f = self.radix_at(tier), self.factor(tier)
        up = self.ups[tier - 1] if tier <= len(self.ups) and self.ups[tier - 1] is not None else r // (2 * f)
        return r - f * up, up

    def down_at(self, tier: int, top: int) -> int:
        """Downlink ports of a tier-``tier`` switch in a ``top``-tier fabric."""
        return self.radix_at(tier) if tier == top else self.split(tier)[0]

    @property
    def depth(self) -> int:
        """Tiers after which every tier is alike (the lists' lengths)."""
        return max(len(self.radix), len(self.ups))


def shape_of(radix: tuple[int, ...], ratios: tuple[str, ...] | list[str], speeds: tuple[int, ...] = ()) -> Shape:
    """A :class:`Shape` from per-tier radixes, down:up ratios (bandwidth, leaf first) and link speeds.

    A d:u tier of radix r whose uplinks are f times faster than its downlinks has
    ``r·u/(f·(d+u))`` uplinks (the spec checks the division is exact).
    """
    sh = Shape(tuple(radix), (), tuple(speeds))
    ups: list[int | None] = []
    for j, text in enumerate(ratios, start=1):
        d, u = (int(x) for x in text.split(":"))
        ups.append(None if d == u else sh.radix_at(j) * u // (sh.factor(j) * (d + u)))
    while ups and ups[-1] is None:
        ups.pop()
    return Shape(tuple(radix), tuple(ups), tuple(speeds))


@dataclass(frozen=True, slots=True)
class Units:
    """Scalable units of one fabric (spec ``scalable_unit``, ``max_scalable_units``, ``reserved_leaf_ports``).

    ``domains``: HB domains per SU; leaves are built per SU (one per rail per SU in
    rail-optimized, each rail's leaves per SU in rail-only); 0 groups HB domains by a
    leaf's downlinks as before. ``max``: SUs the top tier is sized for (0: the SUs
    present). ``reserved``: downlink ports kept free on each leaf of the last group
    (the last SU), for management or fabric-manager (UFM) links; on each leaf of
    every SU when ``every`` (``reserved_leaf_ports_per: su``).
    """

    domains: int = 0
    max: int = 0
    reserved: int = 0
    every: bool = False

    def sized_domains(self, domains: int) -> int:
        """HB domains the design is sized for: the declared maximum of SUs, else those present."""
        return self.max * self.domains if self.max else domains


NO_UNITS = Units()


def as_shape(radix: "int | Shape", leaf_up: int | None = None) -> Shape:
    """A :class:`Shape` from a uniform radix (and an optional leaf uplink count), or the shape itself."""
    if isinstance(radix, Shape):
        return radix
    return Shape((radix,), (leaf_up,) if leaf_up is not None else ())


def leaf_split(radix: "int | Shape", leaf_up: int | None = None) -> tuple[int, int]:
    """A leaf's (downlink, uplink) ports: ``radix/2`` each at 1:1, else ``radix - u`` and ``u``."""
    return as_shape(radix, leaf_up).split(1)


def clos_capacity(radix: "int | Shape", tiers: int, leaf_up: int | None = None) -> int:
    """Endpoints a folded Clos of ``tiers`` tiers can serve: ``R_t · d_1 · ... · d_(t-1)``.

    ``R_t`` is the top tier's radix and ``d_j`` the downlinks of tier j; with a
    uniform 1:1 radix k that is the full-bisection ``k·(k/2)^(t-1)``.
    """
    sh = as_shape(radix, leaf_up)
    cap = sh.radix_at(tiers)
    for j in range(1, tiers):
        cap *= sh.split(j)[0]
    return cap


def _fewest(need: int, capacity, first: int, depth: int) -> int:
    """Fewest tiers t >= ``first`` with ``capacity(t) >= need``; UNBOUNDED when it stops growing."""
    t = first
    while capacity(t) < need:
        if t > depth + 1 and capacity(t + 1) <= capacity(t):
            return UNBOUNDED
        t += 1
        if t > 64:
            break
    return t


def tiers_for_endpoints(endpoints: int, radix: "int | Shape", leaf_up: int | None = None) -> int:
    """Fewest tiers whose Clos serves ``endpoints`` (may exceed MAX_TIERS)."""
    sh = as_shape(radix, leaf_up)
    return _fewest(endpoints, lambda t: clos_capacity(sh, t), 1, sh.depth)


def tiers_for_leaves(leaves: int, radix: "int | Shape") -> int:
    """Fewest tiers (>= 2) whose upper tiers can join ``leaves`` leaves: ``R_t · d_2 · ... · d_(t-1)``."""
    sh = as_shape(radix)

    def joined(t: int) -> int:
        cap = sh.radix_at(t)
        for j in range(2, t):
            cap *= sh.split(j)[0]
        return cap

    return _fewest(leaves, joined, 2, sh.depth)


@lru_cache(maxsize=4096)
def divisors(n: int) -> tuple[int, ...]:
    """The divisors of ``n`` in increasing order, in O(sqrt n) steps."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(small + [n // d for d in reversed(small) if d * d != n])


@lru_cache(maxsize=65536)
def stripe_width(used: tuple[int, ...], h: int, down: int, full: bool, top: bool = True, cap: int | None = None) -> tuple[int, tuple[int, ...]]:
    """Balanced striping of one stripe: how many upper switches, and each lower's uplinks.

    ``used`` holds the used downlinks of each lower switch in the stripe, ``h``
    their uplink ports, ``down`` the downlink ports of an upper switch, ``cap``
    their downlink ports (``h`` at 1:1; an oversubscribed leaf has more down
    than up, and a partly filled one needs ``used·h/cap`` uplinks).

    * Top tier: the upper switch count ``s`` is the smallest divisor of ``h``
      whose ports suffice, so every lower switch has the same number
      (``uplinks / s``) of parallel links to each upper switch. With ``full``
      provisioning every lower switch builds all ``h`` uplinks; otherwise only
      enough for its used downlinks, rounded up to a multiple of ``s``.
    * Below the top every block keeps all ``h`` stripe switches, one link from
      each member to each, even when the block is partly filled. A partly filled
      pod with fewer positions would reach only some top-tier stripes, and a
      max-flow check finds cuts below full bisection (e.g. 38 endpoints on
      radix 8: 17 < 19); with every position present each stripe spans every
      pod and the fabric stays non-blocking.
    """
    if not top:
        return h, (h,) * len(used)
    for s in divisors(h):
        ups = stripe_ups(used, h, s, full, cap)
        if sum(ups) <= s * down:
            return s, ups
    raise ValueError(f"no balanced striping for {len(used)} lower switches (h={h}, down={down})")


def stripe_ups(used: tuple[int, ...], h: int, s: int, full: bool, cap: int | None = None) -> tuple[int, ...]:
    """Uplinks of each lower switch of a top stripe of ``s`` upper switches (see :func:`stripe_width`)."""
    if full:
        return (h,) * len(used)
    c = h if cap is None else cap
    return tuple(min(h, ceil(ceil(u * h / c) / s) * s) for u in used)


@dataclass(frozen=True, slots=True)
class TopGroup:
    """Stripe positions ``first .. first+count-1`` of a ``striping: minimal`` top tier, sharing ``s`` upper switches.

    Every lower switch of those stripes spreads its uplinks over all ``s`` upper
    switches, as evenly as its count allows (parallel links per pair differ by at
    most one), so each still reaches every upper switch of its group.
    """

    first: int
    count: int
    s: int


def _needs(used: tuple[int, ...], h: int, cap: int) -> dict[int, int]:
    """Uplinks each lower switch needs for its used downlinks, as {need: lower switches}."""
    out: dict[int, int] = {}
    for u in used:
        nd = min(h, ceil(u * h / cap))
        out[nd] = out.get(nd, 0) + 1
    return out


def _group_width(needs: list[dict[int, int]], h: int, down: int, full: bool) -> int | None:
    """Fewest upper switches for lower switches with these needs, each reaching all of them (``None``: none fits).

    With ``full`` every lower switch cables all ``h`` uplinks; otherwise its need,
    raised to ``s`` so that it reaches each of the ``s`` upper switches: the least
    ``s`` with ``ceil(sum(uplinks(s)) / down) <= s`` (a monotone fixed point, found
    from below), at most ``h``.
    """
    lowers = sum(c for d in needs for c in d.values())
    if full:
        s = max(1, ceil(lowers * h / down))
        return s if s <= h else None
    s = max(1, ceil(sum(nd * c for d in needs for nd, c in d.items()) / down))
    while s <= h:
        nxt = max(1, ceil(sum(min(h, max(nd, s)) * c for d in needs for nd, c in d.items()) / down))
        if nxt <= s:
            return s
        s = nxt
    return None


@lru_cache(maxsize=4096)
def minimal_groups(stripes: tuple[tuple[int, ...], ...], h: int, down: int, full: bool, cap: int | None = None) -> tuple[TopGroup, ...]:
    """``striping: minimal`` at the top tier: the fewest upper switches the ports need.

    ``stripes[p]`` holds the used downlinks of the lower switches at stripe
    position p (one per pod), ``h`` their uplink ports, ``cap`` their downlink
    ports, ``down`` an upper switch's ports. Consecutive stripes are joined into
    groups of ``m`` (the last may be smaller) that share ``ceil(uplinks / down)``
    upper switches; ``m`` is the smallest that gives the fewest switches, with
    every lower switch reaching every upper switch of its group (``s <= h``).
    ``m = 1`` (stripes kept apart) always fits and never needs more switches than
    balanced striping; joining stripes lets ``9 x 32`` uplinks per stripe share
    9 switches per pair of stripes where one stripe alone needs 5 (4.5 rounded up).
    """
    c = h if cap is None else cap
    needs = [_needs(st, h, c) for st in stripes]
    floor = max(1, ceil(sum((h if full else nd) * k for d in needs for nd, k in d.items()) / down))
    best: tuple[TopGroup, ...] = ()
    best_total = 0
    for m in range(1, len(stripes) + 1):
        groups, total = [], 0
        for first in range(0, len(stripes), m):
            cnt = min(m, len(stripes) - first)
            s = _group_width(needs[first : first + cnt], h, down, full)
            if s is None or (best and total + s >= best_total):
                groups = []
                break
            groups.append(TopGroup(first, cnt, s))
            total += s
        if groups and (not best or total < best_total):
            best, best_total = tuple(groups), total
            if total <= floor:
                break
    return best


def group_ups(stripes: tuple[tuple[int, ...], ...], group: TopGroup, h: int, full: bool, cap: int | None = None) -> tuple[int, ...]:
    """Uplinks of each lower switch of a minimal-striping group, position-major (see :func:`minimal_groups`)."""
    if full:
        return (h,) * sum(len(stripes[p]) for p in range(group.first, group.first + group.count))
    c = h if cap is None else cap
    return tuple(min(h, max(ceil(u * h / c), group.s)) for p in range(group.first, group.first + group.count) for u in stripes[p])


def spread(ups: tuple[int, ...] | list[int], s: int) -> list[tuple[int, int, int]]:
    """Parallel links of each lower switch to the ``s`` upper switches of its group: ``(base, extra, offset)`` per lower.

    A lower switch with ``u`` uplinks has ``base = u // s`` links to every upper
    switch and one more to the ``extra = u % s`` upper switches ``offset, offset+1
    .. (mod s)``; the offsets run on from one lower switch to the next, so the
    upper switches' totals differ by at most one too (none exceeds ``ceil(sum/s)``).
    """
    out, off = [], 0
    for u in ups:
        b, r = divmod(u, s)
        out.append((b, r, off))
        off = (off + r) % s
    return out


def spread_matrix(ups: tuple[int, ...] | list[int], s: int) -> np.ndarray:
    """:func:`spread` as a (lower switches x ``s``) matrix of parallel links, without a Python loop."""
    u = np.asarray(ups, np.int64)
    b, r = np.divmod(u, s)
    off = (np.cumsum(r) - r) % s
    return b[:, None] + (((np.arange(s)[None, :] - off[:, None]) % s) < r[:, None])


def pair_shares(ups: tuple[int, ...] | list[int], s: int) -> tuple[float, float, int]:
    """Shares of line rate between the lower switches of one group when traffic is sprayed per link: (worst, sum, pairs).

    Source ``l`` sends ``x[l,q] / u[l]`` of its traffic through upper switch ``q``;
    destination ``m`` takes ``x[m,q] / u[m]`` of its capacity from ``q``. A flow
    from ``l`` to ``m`` at full rate fits only if the first is at most the second
    for every ``q``, so the pair reaches ``min_q (x[m,q]/u[m]) / (x[l,q]/u[l])`` of
    line rate: ``floor(u/s) / ceil(u/s)`` for the worst pair of equal switches (3
    of 4 links: 75%), 1 when ``s`` divides the uplinks. Returns the worst share
    over ordered pairs of distinct lower switches, the sum of the shares and the
    number of such pairs (the mean is sum / pairs). Lower switches with the same
    links are counted once with their multiplicity.
    """
    kinds: dict[tuple[int, int, int], int] = {}
    for (_b, r, off), u in zip(spread(ups, s), ups):
        key = (u, r, off if r else 0)
        kinds[key] = kinds.get(key, 0) + 1
    keys = sorted(kinds)
    mult = np.asarray([kinds[k] for k in keys], np.float64)
    u, r, off = (np.asarray(col, np.int64) for col in zip(*keys))
    x = u[:, None] // s + (((np.arange(s)[None, :] - off[:, None]) % s) < r[:, None])  # links of each kind to each upper switch
    a = x / u[:, None]
    worst, total = 1.0, 0.0
    for lo in range(0, len(keys), 64):  # (chunk x kinds x s) at a time: bounded memory for wide groups
        share = (a[None, :, :] / a[lo : lo + 64, None, :]).min(axis=2)  # [source kind, destination kind]
        w = mult[lo : lo + 64, None] * mult[None, :]
        w[np.arange(share.shape[0]), lo + np.arange(share.shape[0])] -= mult[lo : lo + 64]  # a switch is not its own pair
        if (w > 0).any():
            worst = min(worst, float(share[w > 0].min()))
        total += float((w * share).sum())
    n = int(mult.sum())
    return worst, total, n * (n - 1)


@dataclass(frozen=True, slots=True)
class Spread:
    """How a ``striping: minimal`` top tier spreads the uplinks below it (one plane; one rail in rail-only).

    ``links`` is the (fewest, most) parallel links of a lower-upper pair. The
    shares are what traffic sprayed per link from one lower switch to another of
    its group reaches of line rate (:func:`pair_shares`): ``worst_share`` over all
    such pairs, ``mean_share`` their mean. Balanced striping has 1 for both; the
    cut capacity (max-flow bisection) is the same either way, since every link is
    still there: the cost is in how evenly traffic can use it.
    """

    tier: int
    switches: int
    groups: int
    stripes: tuple[int, ...]  # distinct stripes per group
    links: tuple[int, int]
    worst_share: float
    mean_share: float

    @property
    def uneven(self) -> bool:
        """Whether the minimal top differs from balanced striping's shape: joined stripes or uneven pairs."""
        return self.links[0] != self.links[1] or self.stripes != (1,)

    def to_dict(self) -> dict:
        return {
            "tier": tier_role(self.tier),
            "groups": self.groups,
            "stripes_per_group": list(self.stripes),
            "parallel_links_per_pair": list(self.links),
            "worst_pair_share": round(self.worst_share, 4),
            "mean_pair_share": round(self.mean_share, 4),
        }

    def note(self) -> str:
        role, lower = tier_role(self.tier), tier_role(self.tier - 1)
        joined = f"groups of {'/'.join(map(str, self.stripes))} stripe(s)" if self.stripes != (1,) else "one per stripe"
        a, b = self.links
        pairs = f"{a} to {b} parallel links per {lower}-{role} pair (uneven by design, by at most one)" if a != b else f"{a} parallel link(s) per {lower}-{role} pair"
        return (
            f"striping: minimal: {self.switches} {plural_role(role)} in {self.groups} group(s) ({joined}), the fewest the ports need; "
            f"each {lower} spreads its uplinks over every {role} of its group, {pairs}; traffic sprayed per link from one {lower} to another of its group "
            f"reaches at worst {self.worst_share:.1%} of line rate (mean over {lower} pairs {self.mean_share:.1%}; 100% with balanced striping); "
            "single-path routing (D-mod-K, ECMP hashing) can lose more: topogen simulate measures it"
        )


def spread_of(tier: int, groups: tuple[TopGroup, ...], ups: list[tuple[int, ...]]) -> Spread:
    """The :class:`Spread` of a minimal top tier from its groups and each group's lower-switch uplinks."""
    shares = [pair_shares(u, g.s) for g, u in zip(groups, ups)]
    pairs = sum(x[2] for x in shares)
    lo = min(x // g.s for g, u in zip(groups, ups) for x in u)
    hi = max(-(-x // g.s) for g, u in zip(groups, ups) for x in u)
    return Spread(tier, sum(g.s for g in groups), len(groups), tuple(sorted({g.count for g in groups})), (lo, hi), min(x[0] for x in shares), sum(x[1] for x in shares) / pairs if pairs else 1.0)


class TierExtra:
    """Why a tier has more switches than its ports alone need; fed stripe by stripe.

    Ports alone: every lower switch needs ``ceil(used·up/cap)`` uplinks for its
    used downlinks, and an upper switch takes ``down`` of them. Three rules add
    switches beyond that, and :meth:`notes` names each one that did, with numbers:
    ``provision: full`` (partly filled switches cable every uplink), balanced
    striping at the top (a stripe's switch count divides each lower switch's
    uplinks) and full stripes below the top (a partly filled block keeps every
    stripe position, so it reaches every stripe above).
    """

    def __init__(self, tier: int, up: int, cap: int, down: int, top: bool, full: bool, minimal: bool = False):
        self.tier, self.up, self.cap, self.down, self.top, self.full = tier, up, cap, down, top, full
        self.minimal = minimal and top  # striping: minimal: the top tier's groups of stripes (fed group by group)
        self.needed = self.built = self.switches = self.stripes = self.by_ports = 0
        self.wider = 0  # top stripes with more switches than their built uplinks need
        self.example: tuple[int, int, int, int] | None = None  # (members, uplinks, s, by ports) of a wider stripe
        self.rounded: dict[tuple[int, int, int, int], int] = {}  # minimal provisioning: (used, needed, built, s) -> lower switches
        self.sized = ""  # a top tier sized for more scalable units than present: the note that says so

    def add(self, used: tuple[int, ...], s: int, ups: tuple[int, ...]) -> None:
        need = [ceil(u * self.up / self.cap) for u in used]
        self.needed += sum(need)
        self.built += sum(ups)
        self.switches += s
        self.stripes += 1
        by_ports = ceil(sum(ups) / self.down)
        self.by_ports += by_ports
        if self.top and s > by_ports:
            self.wider += 1
            if self.example is None:
                self.example = (len(used), sum(ups), s, by_ports)
        if not self.full:
            for u, nd, b in zip(used, need, ups):
                if b > nd:
                    self.rounded[(u, nd, b, s)] = self.rounded.get((u, nd, b, s), 0) + 1

    def notes(self) -> list[str]:
        role, lower = tier_role(self.tier), tier_role(self.tier - 1)
        roles, lowers = _plural(role), _plural(lower)
        out = []
        minimum = ceil(self.needed / self.down)
        if self.sized:
            out.append(self.sized)
        elif self.switches > minimum:
            why = []
            if self.built > self.needed:
                why.append(f"provision: full cables all {self.built} uplinks of the {lowers}, {self.built - self.needed} of them for downlinks still empty (partly filled {lowers}), so the fabric grows without recabling")
            if self.top and self.wider:
                m, upl, s, bp = self.example  # type: ignore[misc]
                why.append(
                    f"balanced striping: the number of {roles} in a stripe must divide each {lower}'s {self.up} uplinks (the same number of parallel links to each); "
                    f"{self.wider} of {self.stripes} stripe(s) use more {roles} than their ports need, e.g. {m} {lowers} with {upl} uplinks fill {bp} {role}(s) of {self.down} ports but get {s}"
                )
            if not self.top and self.switches > self.by_ports:
                why.append(f"every block keeps all {self.up} positions of each stripe (one link from each member to each), so a partly filled block reaches every stripe above")
            if not why:
                why.append(f"the {_plural(role)} split into stripes and blocks that cannot share switches")
            out.append(f"{role}: {self.switches} switches where ports alone need {minimum} ({self.needed} uplinks, {self.down} down ports each): " + "; ".join(why))
        for (u, nd, b, st), cnt in sorted(self.rounded.items()):
            if self.minimal:
                out.append(
                    f"striping: minimal: {cnt} {lower}(s) with {u} downlink(s) in use need {nd} uplink(s) but get {b}: "
                    f"each reaches every one of the {st} {roles} of its group, so it has at least {st} uplinks"
                )
                continue
            out.append(
                f"provision: minimal: {cnt} {lower}(s) with {u} downlink(s) in use need {nd} uplink(s) but get {b}: balanced striping gives each the same number of "
                f"parallel links to each of the {st} {roles} of its stripe, so its uplinks round up to a multiple of {st}"
            )
        return out


def plural_role(role: str) -> str:
    """``leaves``, ``spines``, ``tier4 switches``."""
    return _plural(role)


def _plural(role: str) -> str:
    """``leaves``, ``spines``, ``tier4 switches``."""
    return plural_noun(f"{role} switch" if role.startswith("tier") else role)


# --- leaf layouts ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeafRun:
    """``count`` consecutive leaves, each serving ``rails`` rails of ``per_rail`` GPUs."""

    count: int
    rails: int
    per_rail: int

    @property
    def used(self) -> int:
        return self.rails * self.per_rail


def rail_optimized_groups(domains: int, hb: int, radix: "int | Shape", shared: bool, leaf_up: int | None = None, units: Units = NO_UNITS) -> list[tuple[int, int, int]]:
    """Groups of HB domains of a rail-optimized fabric, with their rail packing.

    Returns ``(domains_in_group, rails_per_leaf, leaves_in_group)`` per group.
    A group holds as many domains as a leaf has downlinks (radix/2 at 1:1; the
    last group may hold fewer); leaf (group, rail) serves that rank of each
    domain in the group. With ``shared`` packing a partly filled group packs
    ``downlinks // domains_in_group`` whole rails on one leaf. With scalable units
    a group is one SU (``units.domains`` HB domains).
    """
    h = leaf_split(radix, leaf_up)[0]
    size = units.domains or h
    out = []
    g0 = 0
    while g0 < domains:
        d = min(size, domains - g0)
        rho = max(1, min(hb, (h - units.reserved) // d)) if shared else 1
        out.append((d, rho, ceil(hb / rho)))
        g0 += d
    return out


def rail_optimized_leaves(domains: int, hb: int, radix: "int | Shape", shared: bool, leaf_up: int | None = None, units: Units = NO_UNITS) -> list[LeafRun]:
    """Leaf runs of a rail-optimized fabric, in leaf order (group-major, rail-minor).

    Groups alike (every full group, then a partial last one) whose rails pack
    evenly on their leaves make one run each, without a pass over the groups
    (a search counts thousands of 100,000-GPU designs); the runs are those the
    group-by-group loop below gives.
    """
    h = leaf_split(radix, leaf_up)[0]
    size = units.domains or h
    full, rest = divmod(domains, size)
    alike = [(d, n, max(1, min(hb, (h - units.reserved) // d)) if shared else 1) for d, n in ((size, full), (rest, 1)) if n and d]
    if all(hb % rho == 0 for _d, _n, rho in alike):
        return _merge_runs([LeafRun(n * (hb // rho), rho, d) for d, n, rho in alike])
    runs: list[LeafRun] = []
    for d, rho, nleaves in rail_optimized_groups(domains, hb, radix, shared, leaf_up, units):
        full_leaves = hb // rho
        if full_leaves:
            runs.append(LeafRun(full_leaves, rho, d))
        if hb % rho:
            runs.append(LeafRun(1, hb % rho, d))
    return _merge_runs(runs)


def rail_only_leaves(domains: int, radix: "int | Shape", leaf_up: int | None = None, units: Units = NO_UNITS) -> list[LeafRun]:
    """Leaf runs of one rail of a multi-tier rail-only fabric (one leaf per SU with scalable units)."""
    h = units.domains or leaf_split(radix, leaf_up)[0]
    runs = []
    if domains // h:
        runs.append(LeafRun(domains // h, 1, h))
    if domains % h:
        runs.append(LeafRun(1, 1, domains % h))
    return runs


def _merge_runs(runs: list[LeafRun]) -> list[LeafRun]:
    merged: list[LeafRun] = []
    for r in runs:
        if merged and (merged[-1].rails, merged[-1].per_rail) == (r.rails, r.per_rail):
            merged[-1] = LeafRun(merged[-1].count + r.count, r.rails, r.per_rail)
        else:
            merged.append(r)
    return merged


def homed(runs: list[LeafRun], homes: int) -> list[LeafRun]:
    """The leaf runs of a fabric whose GPUs reach ``homes`` leaves per plane (dual-homing: 2).

    Each home is a full copy of the single-homed leaf layer, home-major: the
    first leaves of every group and rail, then their partners (the two leaves of
    a pair serve the same GPUs, on their NIC ports 0 and 1). The copies share the
    tiers above, which stripe over all of them as usual.
    """
    return _merge_runs(runs * homes)


def rail_optimized_tiers(gpus: int, hb: int, radix: "int | Shape", shared: bool, leaf_up: int | None = None, homes: int = 1, units: Units = NO_UNITS) -> int:
    """Tier count of the rail-optimized fabric.

    One switch when the whole cluster fits on it (a one-switch cluster has no
    tier to align: its rails share the switch, as every small field design does);
    otherwise the fewest tiers (>= 2) whose upper tiers join all leaves (one per
    rail per group, or packed when ``shared``; ``homes`` per rail and group when
    dual-homed, which always needs a tier above the leaf pairs). With a declared
    maximum of scalable units, the tiers of the full design.
    """
    sh = as_shape(radix, leaf_up)
    domains = units.sized_domains(gpus // hb)
    if domains * hb <= sh.radix_at(1) and homes == 1:
        return 1
    leaves = sum(r.count for r in rail_optimized_leaves(domains, hb, sh, shared, units=units))
    return tiers_for_leaves(leaves * homes, sh)


def rail_only_tiers(gpus: int, hb: int, radix: "int | Shape", leaf_up: int | None = None, homes: int = 1, units: Units = NO_UNITS) -> int:
    """Tier count of each rail of the rail-only fabric (all rails are alike); >= 2 when dual-homed."""
    if homes == 1 and not units.domains:
        return tiers_for_endpoints(gpus // hb, radix, leaf_up)
    sh = as_shape(radix, leaf_up)
    domains = units.sized_domains(gpus // hb)
    if homes == 1 and domains <= sh.radix_at(1):
        return 1
    return tiers_for_leaves(homes * sum(r.count for r in rail_only_leaves(domains, sh, units=units)), sh)


def last_leaf_use(arch: str, gpus: int, hb: int, radix: "int | Shape", shared: bool, units: Units = NO_UNITS, homes: int = 1) -> tuple[int, int]:
    """(GPU ports used, downlink ports) of a leaf of the last group: where ``reserved_leaf_ports`` go.

    The last group is the last SU (or the last leaf group of a rail); a one-switch
    fabric's switch is its own last group. With ``units.every`` (ports reserved in
    every SU) the busiest leaf of any group.
    """
    sh = as_shape(radix)
    domains = gpus // hb
    if arch == "rail-optimized":
        if rail_optimized_tiers(gpus, hb, sh, shared, homes=homes, units=units) == 1:
            return gpus, sh.radix_at(1)
        groups = rail_optimized_groups(domains, hb, sh, shared, units=units)
        return max(d * min(rho, hb) for d, rho, _n in (groups if units.every else groups[-1:])), sh.split(1)[0]
    if rail_only_tiers(gpus, hb, sh, homes=homes, units=units) == 1:
        return rails_per_switch(gpus, hb, sh.radix_at(1), shared) * domains, sh.radix_at(1)
    runs = rail_only_leaves(domains, sh, units=units)
    return max(r.per_rail for r in (runs if units.every else runs[-1:])), sh.split(1)[0]


def rails_per_switch(gpus: int, hb: int, radix: int, shared: bool) -> int:
    """Whole rails packed on one single-tier rail-only switch (1 when dedicated)."""
    per_rail = gpus // hb
    if not shared or per_rail > radix:
        return 1
    return max(1, min(hb, radix // per_rail))


# --- closed-form evaluation -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Counts:
    """Per-plane-summed counts of one architecture (lists start at tier 1)."""

    arch: str
    tiers: int
    switches_per_tier: tuple[int, ...]
    links_per_tier: tuple[int, ...]
    switch_ports: int
    up_ports: tuple[int, ...] = ()  # per switch tier: ports one uplink takes (a faster uplink takes several); () = 1 each
    isls: int = 0  # inter-switch links between the leaves of a pair (design: leaf-pair), not in links_per_tier

    @property
    def switches(self) -> int:
        return sum(self.switches_per_tier)

    @property
    def links(self) -> int:
        """Every cable: the links of each tier and the inter-switch links."""
        return sum(self.links_per_tier) + self.isls

    @property
    def unused_switch_ports(self) -> int:
        f = self.up_ports or (1,) * len(self.links_per_tier)
        used = self.links_per_tier[0] + sum((1 + f[j - 1]) * x for j, x in enumerate(self.links_per_tier[1:], start=1))
        return self.switch_ports - used - 2 * self.isls


def _chunk_runs(runs: list[tuple[int, object]], size: int) -> list[tuple[int, tuple]]:
    """Split a run-length list of sub-blocks into chunks of ``size``, run-length encoded."""
    out: list[tuple[int, tuple]] = []
    pending: list[object] = []
    for count, item in runs:
        while count:
            if pending:
                take = min(count, size - len(pending))
                pending.extend([item] * take)
                count -= take
                if len(pending) == size:
                    out.append((1, tuple(pending)))
                    pending = []
            else:
                full = count // size
                if full:
                    out.append((full, (item,) * size))
                    count -= full * size
                if count:
                    pending.extend([item] * count)
                    count = 0
    if pending:
        out.append((1, tuple(pending)))
    merged: list[tuple[int, tuple]] = []
    for m, chunk in out:
        if merged and merged[-1][1] == chunk:
            merged[-1] = (merged[-1][0] + m, chunk)
        else:
            merged.append((m, chunk))
    return merged


def top_stripes(chunk) -> tuple[tuple[int, ...], ...]:
    """The stripes of a top block: per position, the used downlinks of the sub-blocks' switches there."""
    return tuple(tuple(sb[p] for sb in chunk if len(sb) > p) for p in range(max(len(sb) for sb in chunk)))


def top_plan(stripes: tuple[tuple[int, ...], ...], h: int, down: int, full: bool, cap: int, widths: tuple | None = None) -> tuple[TopGroup, ...]:
    """The groups of a ``striping: minimal`` top tier: ``widths`` (a design sized for more SUs) or the fewest switches."""
    return widths if widths is not None else minimal_groups(stripes, h, down, full, cap)


@lru_cache(maxsize=4096)
def _block(chunk: tuple[tuple[int, ...], ...], h: int, down: int, full: bool, top: bool, cap: int, widths: tuple | None = None, minimal: bool = False) -> tuple[tuple[int, ...], int, int]:
    """One block built over ``chunk`` (each item: used downlinks of a sub-block's switches).

    ``h`` and ``cap`` are the sub-block switches' uplink and downlink ports;
    ``widths`` (top only) fixes each stripe's switch count (sized for more SUs),
    or with ``minimal`` (``striping: minimal``, top only) its :class:`TopGroup` list.

    Returns (used downlinks of the new block's switches in position order,
    number of new switches, number of links from the sub-blocks into them).
    """
    if top and minimal:
        stripes = top_stripes(chunk)
        groups = top_plan(stripes, h, down, full, cap, widths)
        ups = [group_ups(stripes, g, h, full, cap) for g in groups]
        per_upper = [-(-sum(u) // g.s) for g, u in zip(groups, ups)]  # the busiest upper switch of each group
        return tuple(x for g, pu in zip(groups, per_upper) for x in (pu,) * g.s), sum(g.s for g in groups), sum(sum(u) for u in ups)
    maxpos = max(len(sb) for sb in chunk)
    new_used: list[int] = []
    links = 0
    for p in range(maxpos):
        used = tuple(sb[p] for sb in chunk if len(sb) > p)
        if widths is None:
            s, ups = stripe_width(used, h, down, full, top, cap)
        else:
            s, ups = widths[p], stripe_ups(used, h, widths[p], full, cap)
        links += sum(ups)
        per_upper = sum(u // s for u in ups)
        new_used.extend([per_upper] * s)
    return tuple(new_used), len(new_used), links


def _levels_below_top(leaves: list[LeafRun], tiers: int, sh: Shape, full: bool):
    """Yield ``(tier, switches, links, level)`` for tiers 2..t-1; ``level`` is the run-length list of blocks."""
    level: list[tuple[int, object]] = [(r.count, (r.used,)) for r in leaves]
    for j in range(2, tiers):
        down = sh.down_at(j, tiers)
        cap, up = sh.split(j - 1)  # ports of the switches below
        nsw = nlk = 0
        new_level: list[tuple[int, object]] = []
        for mult, chunk in _chunk_runs(level, down):
            used, s, lk = _block(chunk, up, down, full, False, cap)
            nsw += mult * s
            nlk += mult * lk
            new_level.append((mult, used))
        yield j, nsw, nlk, new_level
        level = new_level
    yield tiers, 0, 0, level


def _top_chunk(level: list[tuple[int, object]]) -> tuple:
    items: list[object] = []
    for count, item in level:
        items.extend([item] * count)
    return tuple(items)


def top_widths(leaves: list[LeafRun], tiers: int, radix: "int | Shape", full: bool, minimal: bool = False) -> tuple:
    """Switches of each top-tier stripe of the design over ``leaves`` (the full SUs a top tier is sized for).

    With ``minimal`` (``striping: minimal``) the design's :class:`TopGroup` list instead.
    """
    sh = as_shape(radix)
    *_, (_, _, _, level) = _levels_below_top(leaves, tiers, sh, full)
    chunk = _top_chunk(level)
    cap, up = sh.split(tiers - 1)
    down = sh.down_at(tiers, tiers)
    if minimal:
        return minimal_groups(top_stripes(chunk), up, down, full, cap)
    widths = []
    for p in range(max(len(sb) for sb in chunk)):
        widths.append(stripe_width(tuple(sb[p] for sb in chunk if len(sb) > p), up, down, full, True, cap)[0])
    return tuple(widths)


def clos_upper_counts(leaves: list[LeafRun], tiers: int, radix: "int | Shape", full: bool, leaf_up: int | None = None, sized: list[LeafRun] | None = None, minimal: bool = False) -> tuple[list[int], list[int]]:
    """Switches and links of tiers 2..t above the given leaves, by arithmetic only.

    ``sized``: the leaves of the full design the top tier is bought for (``max_scalable_units``);
    the top tier then has that design's stripes, and only the present leaves' cables.
    """
    sh = as_shape(radix, leaf_up)
    widths = top_widths(sized, tiers, sh, full, minimal) if sized is not None else None
    switches: list[int] = []
    links: list[int] = []
    for j, nsw, nlk, level in _levels_below_top(leaves, tiers, sh, full):
        if j < tiers:
            switches.append(nsw)
            links.append(nlk)
            continue
        cap, up = sh.split(j - 1)
        _used, s, lk = _block(_top_chunk(level), up, sh.down_at(j, tiers), full, True, cap, widths, minimal)
        switches.append(s)
        links.append(lk)
    return switches, links


def top_spread(spec, arch: str) -> Spread | None:
    """The closed-form :class:`Spread` of ``arch``'s top tier under ``striping: minimal`` (``None``: one tier, or balanced)."""
    if spec.striping != "minimal":
        return None
    sh, u, homes, full = spec.shape, spec.units, spec.homes, spec.provision == "full"
    domains = spec.gpus // spec.hb_domain
    if arch == "rail-optimized":
        shared = spec.packs_rails(arch)
        t = rail_optimized_tiers(spec.gpus, spec.hb_domain, sh, shared, homes=homes, units=u)
        leaves = homed(rail_optimized_leaves(domains, spec.hb_domain, sh, shared, units=u), homes)
        sized = homed(rail_optimized_leaves(u.sized_domains(domains), spec.hb_domain, sh, shared, units=u), homes) if u.max else None
    else:
        t = rail_only_tiers(spec.gpus, spec.hb_domain, sh, homes=homes, units=u)
        leaves = homed(rail_only_leaves(domains, sh, units=u), homes)
        sized = homed(rail_only_leaves(u.sized_domains(domains), sh, units=u), homes) if u.max else None
    if t == 1:
        return None
    *_, (_, _, _, level) = _levels_below_top(leaves, t, sh, full)
    stripes = top_stripes(_top_chunk(level))
    cap, up = sh.split(t - 1)
    widths = top_widths(sized, t, sh, full, True) if sized is not None else None
    groups = top_plan(stripes, up, sh.down_at(t, t), full, cap, widths)
    return spread_of(t, groups, [group_ups(stripes, g, up, full, cap) for g in groups])


def _ports(sh: Shape, per_tier: list[int]) -> int:
    return sum(c * sh.radix_at(j) for j, c in enumerate(per_tier, start=1))


def _up_ports(sh: Shape, tiers: int) -> tuple[int, ...]:
    return tuple(sh.factor(j) for j in range(1, tiers + 1)) if sh.speeds else ()


def rail_optimized_counts(gpus: int, hb: int, radix: "int | Shape", shared: bool, full: bool, planes: int = 1, leaf_up: int | None = None, homes: int = 1, units: Units = NO_UNITS, minimal: bool = False) -> Counts:
    sh = as_shape(radix, leaf_up)
    t = rail_optimized_tiers(gpus, hb, sh, shared, homes=homes, units=units)
    if t == 1:
        return Counts("rail-optimized", 1, (planes,), (gpus * planes,), sh.radix_at(1) * planes)
    leaves = homed(rail_optimized_leaves(gpus // hb, hb, sh, shared, units=units), homes)
    nleaves = sum(r.count for r in leaves)
    sized = homed(rail_optimized_leaves(units.sized_domains(gpus // hb), hb, sh, shared, units=units), homes) if units.max else None
    up_sw, up_lk = clos_upper_counts(leaves, t, sh, full, sized=sized, minimal=minimal)
    sw = [nleaves, *up_sw]
    lk = [gpus * homes, *up_lk]
    return Counts(
        "rail-optimized",
        t,
        tuple(planes * x for x in sw),
        tuple(planes * x for x in lk),
        planes * _ports(sh, sw),
        _up_ports(sh, t),
    )


def rail_only_counts(gpus: int, hb: int, radix: "int | Shape", shared: bool, full: bool, planes: int = 1, leaf_up: int | None = None, homes: int = 1, units: Units = NO_UNITS, minimal: bool = False) -> Counts:
    sh = as_shape(radix, leaf_up)
    domains = gpus // hb
    t = rail_only_tiers(gpus, hb, sh, homes=homes, units=units)
    if t == 1:
        rho = rails_per_switch(gpus, hb, sh.radix_at(1), shared)
        nsw = ceil(hb / rho)
        return Counts("rail-only", 1, (planes * nsw,), (planes * gpus,), planes * sh.radix_at(1) * nsw)
    leaves = homed(rail_only_leaves(domains, sh, units=units), homes)
    sized = homed(rail_only_leaves(units.sized_domains(domains), sh, units=units), homes) if units.max else None
    up_sw, up_lk = clos_upper_counts(leaves, t, sh, full, sized=sized, minimal=minimal)
    sw = [sum(r.count for r in leaves), *up_sw]
    lk = [domains * homes, *up_lk]
    return Counts(
        "rail-only",
        t,
        tuple(planes * hb * x for x in sw),
        tuple(planes * hb * x for x in lk),
        planes * hb * _ports(sh, sw),
        _up_ports(sh, t),
    )


def arch_counts(spec, arch: str) -> Counts:
    """Closed-form counts of ``arch`` for a resolved spec."""
    shared = spec.packs_rails(arch)
    full = spec.provision == "full"
    minimal = spec.striping == "minimal"
    if spec.design == "leaf-pair":
        return leaf_pair_counts(spec, arch)
    if arch == "rail-optimized":
        return rail_optimized_counts(spec.gpus, spec.hb_domain, spec.shape, shared, full, spec.planes, homes=spec.homes, units=spec.units, minimal=minimal)
    if arch == "rail-only":
        return rail_only_counts(spec.gpus, spec.hb_domain, spec.shape, shared, full, spec.planes, homes=spec.homes, units=spec.units, minimal=minimal)
    raise ValueError(f"unknown architecture {arch!r}")


def leaf_pair_counts(spec, arch: str) -> Counts:
    """Closed form of ``design: leaf-pair`` (:mod:`topogen.spec.leafpair`): two leaves per plane, every GPU on one, ISLs between them."""
    if arch not in ("rail-optimized", "rail-only"):
        raise ValueError(f"unknown architecture {arch!r}")
    lp = leafpair.plan(spec.gpus, spec.radix, spec.oversubscription, arch == "rail-only", spec.reserved_leaf_ports or 0)
    p = spec.planes
    return Counts(arch, 1, (2 * p,), (spec.gpus * p,), 2 * p * spec.radix, (), p * lp.isls)


MAX_SENSIBLE_TIERS = 4  # deployed GPU fabrics stop at 3 tiers; 4 serve 2,097,152 GPUs on 64-port switches


def depth_warnings(spec) -> list[str]:
    """One line per architecture deeper than :data:`MAX_SENSIBLE_TIERS` switch tiers (closed form, nothing built).

    Such a design is far from sensible: every extra tier adds two switches to the
    worst path (``2t - 1`` switches in all) and a layer of switches and optics, and
    comes from a radix too small for the GPU count (``--radix 16`` at 131,072
    GPUs: 6 tiers, 90,112 switches, 11 switches on the worst path). The line names
    the smallest larger radix (doubling, up to 512) that stays within the limit.
    """
    out = []
    for arch in spec.arches:
        c = arch_counts(spec, arch)
        if c.tiers <= MAX_SENSIBLE_TIERS:
            continue
        line = (
            f"{arch}: radix {spec.radix_text()} gives {c.tiers} switch tiers, {c.switches:,} switches and up to {2 * c.tiers - 1} switches on a GPU-to-GPU path "
            f"for {spec.gpus:,} GPUs, far from a sensible design (more than {MAX_SENSIBLE_TIERS} tiers)"
        )
        better = _shallower_radix(spec, arch)
        if better is not None:
            r, cb = better
            line += f"; radix {r} would need {cb.tiers} tiers and {cb.switches:,} switches"
        out.append(line)
    return out


def _shallower_radix(spec, arch: str) -> tuple[int, Counts] | None:
    """The smallest doubling of a uniform radix (up to 512) giving at most :data:`MAX_SENSIBLE_TIERS` tiers, with its counts."""
    if spec.tier_radix or spec.tier_speed:
        return None  # per-tier radix or speeds: no single number to suggest
    r = spec.radix * 2
    while r <= 512:
        try:
            c = arch_counts(replace(spec, radix=r), arch)
        except (ValueError, ArithmeticError):
            return None
        if c.tiers <= MAX_SENSIBLE_TIERS:
            return r, c
        r *= 2
    return None
