"""The ECMP widths BGP should give every router, each tier's (valley-free shortest paths on the cabled routers), and the gaps from them."""

from __future__ import annotations

import ipaddress

from topogen.config.emulation.lab import Host, Port, Router, role_rank


class Ecmp:
    """Expected widths and the leaves' routes against them, for :class:`~topogen.config.emulate.Emulation`."""

    def expected_sessions(self, r: Router) -> list[Port]:
        return [p for p in r.ports if self.lab.roles.get(p.peer, "gpu") != "gpu"]

    def parts(self) -> dict[str, int]:
        """Router name -> its part of the cabled routers (connected through switch-to-switch cables).

        One part per plane (and per rail in rail-only): planes are separate
        networks, so no route is expected between two parts.
        """
        if getattr(self, "_parts", None) is None:
            part: dict[str, int] = {}
            for r in self.lab.routers:
                if r.name in part:
                    continue
                part[r.name] = len(set(part.values()))
                stack = [r]
                while stack:
                    x = stack.pop()
                    for p in x.ports:
                        y = self.router_of_port.get((p.peer, p.peer_port))
                        if y is not None and y.name not in part:
                            part[y.name] = part[r.name]
                            stack.append(y)
            self._parts = part
        return self._parts

    def host_part(self, h: Host) -> int:
        """The part of the leaf (router) of GPU NIC ``h`` (-1: its leaf is not emulated)."""
        r = self.router_of_port.get((h.leaf, h.leaf_port))
        return -1 if r is None else self.parts()[r.name]

    def targets(self, r: Router) -> list[Host]:
        """Sampled GPUs router ``r`` should route to over other switches (not its own; its plane only; rail-only: its rails only)."""
        local = {(p.peer, p.peer_port) for p in r.ports}
        if r.role != "leaf":
            mine = self.parts()[r.name]
            return [h for h in self.lab.hosts if (h.gpu, h.nic) not in local and self.host_part(h) == mine]
        rails = None
        if self.lab.arch == "rail-only":
            rails = {h.rail for h in self.lab.hosts if h.leaf == r.switch and (h.gpu, h.nic) in local} or None
        mine = self.parts()[r.name]
        return [h for h in self.lab.hosts if (h.gpu, h.nic) not in local and (rails is None or h.rail in rails) and self.host_part(h) == mine]

    def widths(self, down: set[tuple[str, str]] = frozenset()) -> dict[tuple[str, str], int]:
        """ECMP width BGP should give each router toward each leaf: ``(router, target leaf) -> next hops``."""
        return {k: w for k, (w, _) in self.paths(down).items()}

    def paths(self, down: set[tuple[str, str]] = frozenset()) -> dict[tuple[str, str], tuple[int, frozenset]]:
        """``(router, target leaf) -> (ECMP width, the routers of those next hops)`` for every router of every tier.

        Valley-free shortest paths on the cabled routers (what eBGP with RFC 7938
        ASNs computes): a switch above the target reaches it down, over its down
        ports to the switches one step nearer (the target leaf itself, or its
        ancestors); any other goes up to the nearest such switch. Parallel links
        count, each is a session. A leaf joined to the target leaf by ISLs (a leaf
        pair, ``design: leaf-pair``) reaches it over them, one hop, shorter than
        any path up and down: its width is its ISLs to the target that are up.
        ``down``: ``(router, port)`` of links taken down.
        """
        key = frozenset(down)
        if key in self._widths:
            return self._widths[key]
        lab = self.lab
        rank = {r.name: role_rank(r.role) for r in lab.routers}
        up: dict[str, list[tuple[str, str]]] = {r.name: [] for r in lab.routers}  # router -> [(upper router, port)]
        below: dict[str, list[tuple[str, str]]] = {r.name: [] for r in lab.routers}  # router -> [(lower router, port)]
        side: dict[str, list[str]] = {r.name: [] for r in lab.routers}  # router -> [same-tier router of each ISL]
        for r in lab.routers:
            for p in r.ports:
                peer = self.router_of_port.get((p.peer, p.peer_port))
                if peer is None or (r.name, p.name) in down or (peer.name, p.peer_port) in down:
                    continue
                if rank[peer.name] > rank[r.name]:
                    up[r.name].append((peer.name, p.name))
                elif rank[peer.name] < rank[r.name]:
                    below[r.name].append((peer.name, p.name))
                else:
                    side[r.name].append(peer.name)
        leaves = [r.name for r in lab.routers if r.role == "leaf"]
        order = sorted(up, key=lambda n: -rank[n])  # top tier first
        out = {}
        for t in leaves:
            dist = {t: 0}
            frontier = [t]
            while frontier:  # ancestors of t: reach it going down
                nxt = []
                for x in frontier:
                    for y, _ in up[x]:
                        if y not in dist:
                            dist[y] = dist[x] + 1
                            nxt.append(y)
                frontier = nxt
            above = set(dist)
            for x in order:  # the others go up first
                if x not in dist:
                    ds = [dist[y] for y, _ in up[x] if y in dist]
                    if ds:
                        dist[x] = 1 + min(ds)
            for x in up:
                if x == t:
                    continue
                isls = side[x].count(t)
                if isls and rank[x] == rank[t]:
                    out[(x, t)] = (isls, frozenset([t]))
                elif x in above:
                    hops = [y for y, _ in below[x] if y in above and dist[y] == dist[x] - 1]
                    out[(x, t)] = (len(hops), frozenset(hops))
                else:
                    ds = [dist[y] for y, _ in up[x] if y in dist]
                    hops = [] if not ds else [y for y, _ in up[x] if dist.get(y) == min(ds)]
                    out[(x, t)] = (len(hops), frozenset(hops))
        self._widths[key] = out
        return out

    def routes(self) -> dict[str, dict[str, int]]:
        """Router name -> its FIB (prefix -> next hops), read once from every zebra."""
        return {r.name: self.leaf_routes(r) for r in self.lab.routers}

    def ecmp_gaps(self, down: set[tuple[str, str]] = frozenset(), fib: dict[str, dict[str, int]] | None = None, tally: dict[str, int] | None = None) -> list[str]:
        """Routes of every router (leaves, spines, cores) to sampled GPUs that are missing or not at the width :meth:`paths` gives."""
        gaps = []
        width = self.widths(down)
        leaf_of = self.leaf_of()
        for r in self.lab.routers:
            if not r.ports or (r.role == "leaf" and not r.exits(self.lab.roles)):
                continue
            routes = fib[r.name] if fib is not None else self.leaf_routes(r)
            for h in self.targets(r):
                if (r.name, leaf_of.get((h.gpu, h.nic), "")) not in width:
                    continue
                want = width[(r.name, leaf_of[(h.gpu, h.nic)])]
                net = str(ipaddress.ip_interface(h.address).network)
                got = routes.get(net, 0)
                if tally is not None:
                    tally[r.role] = tally.get(r.role, 0) + 1
                if got != want:
                    gaps.append(f"{r.name}: {net} ({h.gpu}) has {got} next hops, expected {want}")
        return gaps

    def leaf_of(self) -> dict[tuple[str, str], str]:
        """(GPU, NIC) -> the router of its leaf."""
        return {(h.gpu, h.nic): self.router_of_port[(h.leaf, h.leaf_port)].name for h in self.lab.hosts if (h.leaf, h.leaf_port) in self.router_of_port}

    def full_width(self) -> list[str]:
        """Every leaf's width toward every other leaf of its rails equals its uplinks (a non-blocking Clos), or its ISLs (a leaf pair)."""
        width = self.widths()
        bad = []
        for r in self.lab.routers:
            if r.role != "leaf":
                continue
            ups = len(r.exits(self.lab.roles))
            for (leaf, t), w in width.items():
                if leaf == r.name and ups and w != ups and self._same_domain(leaf, t):
                    bad.append(f"{leaf} -> {t}: {w} equal-cost links of {ups}")
        return bad

    def _same_domain(self, a: str, b: str) -> bool:
        """Both leaves route to each other: one plane (rail-only: and a common rail)."""
        parts = self.parts()
        if parts.get(a) != parts.get(b):
            return False
        if self.lab.arch != "rail-only":
            return True
        rails = {}
        for h in self.lab.hosts:
            rr = self.router_of_port.get((h.leaf, h.leaf_port))
            if rr is not None:
                rails.setdefault(rr.name, set()).add(h.rail)
        return bool(rails.get(a, set()) & rails.get(b, set()))
