"""The ECMP widths BGP should give each leaf (valley-free shortest paths on the cabled routers) and the gaps from them."""

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
        """Sampled GPUs leaf ``r`` should route to over its uplinks (not its own; its plane only; rail-only: its rails only)."""
        local = {(p.peer, p.peer_port) for p in r.ports}
        rails = None
        if self.lab.arch == "rail-only":
            rails = {h.rail for h in self.lab.hosts if h.leaf == r.switch and (h.gpu, h.nic) in local} or None
        mine = self.parts()[r.name]
        return [h for h in self.lab.hosts if (h.gpu, h.nic) not in local and (rails is None or h.rail in rails) and self.host_part(h) == mine]

    def widths(self, down: set[tuple[str, str]] = frozenset()) -> dict[tuple[str, str], int]:
        """ECMP width BGP should give each leaf toward each other leaf: ``(leaf, target leaf) -> next hops``.

        Valley-free shortest paths on the cabled routers (what eBGP with RFC 7938
        ASNs computes): a switch above the target reaches it down; any other goes
        up to the nearest such switch. A leaf's width is the number of its uplink
        ports toward upper switches at the least distance (parallel links count,
        each is a session). A leaf joined to the target leaf by ISLs (a leaf
        pair, ``design: leaf-pair``) reaches it over them, one hop, shorter than
        any path up and down: its width is its ISLs to the target that are up.
        ``down``: ``(router, port)`` of links taken down.
        """
        lab = self.lab
        rank = {r.name: role_rank(r.role) for r in lab.routers}
        up: dict[str, list[tuple[str, str]]] = {r.name: [] for r in lab.routers}  # router -> [(upper router, port)]
        side: dict[str, list[str]] = {r.name: [] for r in lab.routers}  # router -> [same-tier router of each ISL]
        for r in lab.routers:
            for p in r.ports:
                peer = self.router_of_port.get((p.peer, p.peer_port))
                if peer is None or (r.name, p.name) in down or (peer.name, p.peer_port) in down:
                    continue
                if rank[peer.name] > rank[r.name]:
                    up[r.name].append((peer.name, p.name))
                elif rank[peer.name] == rank[r.name]:
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
            for x in order:  # the others go up first
                if x not in dist:
                    ds = [dist[y] for y, _ in up[x] if y in dist]
                    if ds:
                        dist[x] = 1 + min(ds)
            for leaf in leaves:
                if leaf == t:
                    continue
                isls = side[leaf].count(t)
                if isls:
                    out[(leaf, t)] = isls
                    continue
                ds = [dist[y] for y, _ in up[leaf] if y in dist]
                out[(leaf, t)] = 0 if not ds else sum(1 for y, _ in up[leaf] if dist.get(y) == min(ds))
        return out

    def ecmp_gaps(self, down: set[tuple[str, str]] = frozenset()) -> list[str]:
        """Leaf routes to sampled GPUs that are missing or not at the width :meth:`widths` gives."""
        gaps = []
        key = frozenset(down)
        if key not in self._widths:
            self._widths[key] = self.widths(down)
        width = self._widths[key]
        leaf_of = {(h.gpu, h.nic): self.router_of_port[(h.leaf, h.leaf_port)].name for h in self.lab.hosts if (h.leaf, h.leaf_port) in self.router_of_port}
        for r in self.lab.routers:
            if r.role != "leaf" or not r.exits(self.lab.roles):
                continue
            routes = self.leaf_routes(r)
            for h in self.targets(r):
                want = width.get((r.name, leaf_of.get((h.gpu, h.nic), "")), 0)
                net = str(ipaddress.ip_interface(h.address).network)
                got = routes.get(net, 0)
                if got != want:
                    gaps.append(f"{r.name}: {net} ({h.gpu}) has {got} next hops, expected {want}")
        return gaps

    def full_width(self) -> list[str]:
        """Every leaf's width toward every other leaf of its rails equals its uplinks (a non-blocking Clos), or its ISLs (a leaf pair)."""
        width = self.widths()
        bad = []
        for r in self.lab.routers:
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
