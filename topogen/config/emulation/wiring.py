"""Namespaces and veth pairs: one namespace per router and per sampled GPU NIC, one veth pair per cable between them."""

from __future__ import annotations

import subprocess

from topogen.config.emulation.resources import run_ip


# Linux answers ARP for any of its addresses on any port (arp_ignore 0): two cables swapped between
# the same two switches would still carry each session, through the other port. A switch ASIC
# answers only on the port that owns the address: arp_ignore 1 (reply only when the target address
# is on the port asked), arp_announce 2 (ask from the port's own address), so crossed cables fail.
ARP_STRICT = ("net.ipv4.conf.all.arp_ignore=1", "net.ipv4.conf.default.arp_ignore=1", "net.ipv4.conf.all.arp_announce=2", "net.ipv4.conf.default.arp_announce=2")


class Wiring:
    """The namespaces and cables of :class:`~topogen.config.emulate.Emulation`."""

    def wire(self) -> None:
        lab = self.lab
        self.res.add_namespaces([r.ns for r in lab.routers] + [h.ns for h in lab.hosts])
        lines = []
        for a, ap, z, zp in lab.cables:
            ea, ez = self._end(a, ap), self._end(z, zp)
            if ea is None or ez is None:
                continue
            lines.append(f"link add {ap} netns {ea} type veth peer name {zp} netns {ez}\n")
        self.report.cables = len(lines)
        run_ip([], "".join(lines))
        for r in lab.routers:
            cmds = ["link set lo up\n"]
            bridges: dict[str, list[str]] = {}
            for p in r.ports:
                if self._end(p.peer, p.peer_port) is None:
                    continue
                if p.vlan and p.address == "" and lab.roles.get(p.peer) == "gpu":
                    bridges.setdefault(f"vlan{p.vlan}", []).append(p.name)
                cmds.append(f"link set {p.name} up\n")
            for br, members in bridges.items():
                cmds.append(f"link add {br} type bridge\n")
                cmds += [f"link set {m} master {br}\n" for m in members]
                cmds.append(f"link set {br} up\n")
            run_ip(["-n", r.ns], "".join(cmds))
            subprocess.run(["ip", "netns", "exec", r.ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0", *ARP_STRICT], check=True, capture_output=True)
        for h in lab.hosts:
            run_ip(["-n", h.ns], f"link set lo up\nlink set {h.nic} up\naddr add {h.address} dev {h.nic}\nroute add {h.route} via {h.gateway} dev {h.nic}\n")

    def _end(self, dev: str, port: str) -> str | None:
        r = self.router_of_port.get((dev, port))
        if r is not None:
            return r.ns
        h = self.host_of_port.get((dev, port))
        return h.ns if h is not None else None
