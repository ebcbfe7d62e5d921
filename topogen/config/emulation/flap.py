"""The link flap: one leaf uplink (or, in a leaf pair, one ISL) down (routes one next hop narrower, reachability again), then back up."""

from __future__ import annotations

from topogen.config.emulation.resources import run_ip


class LinkFlap:
    """The link flap of :class:`~topogen.config.emulate.Emulation`."""

    def link_flap(self) -> None:
        """Take the first leaf uplink (a leaf pair: ISL) down (leaves with two or more), check, bring it back."""
        leaf = next((r for r in self.lab.routers if r.role == "leaf" and len(r.exits(self.lab.roles)) >= 2 and self.targets(r)), None)
        if leaf is None:
            self.report.link_down = "none (no leaf with two uplinks or ISLs)"
            return
        port = leaf.exits(self.lab.roles)[0]
        up = len(leaf.exits(self.lab.roles))
        self.report.link_down = f"{leaf.name} {port.name} -> {port.peer}:{port.peer_port}"
        run_ip(["-n", leaf.ns, "link", "set", port.name, "down"])
        down = {(leaf.name, port.name)}
        narrow = [w for (a, t), w in self.widths(down).items() if a == leaf.name and self._same_domain(a, t)]
        if any(w != up - 1 for w in narrow):
            self.fail(f"link down: {leaf.name} should route over {up - 1} links, the cabling gives {sorted(set(narrow))}")
        t, left = self.wait("down", lambda: self.ecmp_gaps(down))
        self.report.reconverge_down_s = t
        for g in left[:10]:
            self.fail(f"link down: {g}")
        mine = [h for h in self.lab.hosts if h.leaf == leaf.switch]
        self.check_reach([(a, b) for a in mine for b in self.targets(leaf)], "with the link down")
        self.report.ecmp_narrowed = len(narrow)
        run_ip(["-n", leaf.ns, "link", "set", port.name, "up"])
        t, left = self.wait("up", lambda: self.sessions_down() + self.ecmp_gaps())
        self.report.reconverge_up_s = t
        for g in left[:10]:
            self.fail(f"link back up: {g}")
