"""Boot a build's FRR configurations in Linux network namespaces and prove the fabric routes as designed.

:func:`run` reads what ``topogen build --formats cabling,addressing,frr`` wrote
for one architecture (``cabling.csv``, ``addressing.csv``, ``frr/**.conf``) and:

1. makes a network namespace per switch and per sampled GPU NIC, and a veth
   pair per cable between them (cabled from ``cabling.csv``; a cable to a GPU
   left out of the sample is left out); switches answer ARP only on the port
   owning the address, so crossed cables fail as on a switch; the kernel's
   neighbour tables (one ARP and one NDP table for every namespace, 1,024
   entries by default) are first raised to what the cables need
   (:mod:`.emulation.neigh`), or the run refused when they cannot be;
2. starts the FRR daemons (Debian's ``frr``) each switch's file needs (``zebra``;
   ``bgpd``, ``bfdd``, ``staticd`` for its ``router bgp``, ``bfd``, ``ip route``)
   in its namespace, each with its pid file, vty sockets and log in a temporary
   directory, and loads the switch's ``frr.conf`` unchanged through ``vtysh -f``;
   the GPU NICs get their address and their route to the fabric as in
   ``addressing.csv``;
3. checks each file against the plan, waits until every switch of every tier
   holds a route to every GPU it should reach with its full ECMP width (the
   *convergence time*), then checks (:class:`Report`): every BGP session
   Established; each sampled GPU reaches every sampled GPU of its rail (and,
   rail-optimized, of every rail) by ``ip route get`` and an ICMP echo; the ECMP
   next hops at every router (a leaf's equal its uplinks; a leaf pair: its ISLs
   to the other leaf); rail-only: no route between rails, at the GPU and at its
   leaf; several planes: no route from one plane's switches to another's NICs;
   each failure's cause named by switch (:mod:`.emulation.blame`);
4. takes one leaf uplink (a leaf pair: one ISL) down, waits for the routes one next hop narrower
   (the reconvergence time) and checks reachability again, then brings the link
   back and waits for the full width;
5. removes every daemon (by pid) and namespace it made, on success, failure,
   exception and SIGINT/SIGTERM; a run killed outright leaves a state file that
   the next run reads to remove its leftovers.

A switch carrying several rails (``vrf rail<r>`` sections) runs as one router
per VRF when the kernel has no VRF devices (``CONFIG_NET_VRF``): each VRF's
interfaces and ``router bgp ... vrf`` become their own namespace and FRR
instance, the isolation a VRF gives. The unchanged file is first checked by
``vtysh --dryrun``.

Library code: never prints; ``progress(text)`` hears each step. Bad input (not
root, no FRR, a build without the files, a fabric bigger than the machine
holds) raises :class:`~topogen.errors.InputError`.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Callable

from topogen.config.emulation.blame import Blame
from topogen.config.emulation.checks import Checks
from topogen.config.emulation.daemons import Daemons
from topogen.config.emulation.ecmp import Ecmp
from topogen.config.emulation.flap import LinkFlap
from topogen.config.emulation.lab import Host, Lab, Port, Router, bgp_mismatches, load_lab, sample_gpus, split_vrfs
from topogen.config.emulation.machine import capacity_problems, environment_problems
from topogen.config.emulation.neigh import raise_limits, table_fulls
from topogen.config.emulation.report import Report
from topogen.config.emulation.resources import Resources, ns_tag, remove_leftovers
from topogen.config.emulation.wiring import Wiring
from topogen.util import interrupts
from topogen.util.errors import InputError

__all__ = ["Emulation", "Host", "Lab", "Port", "Report", "Router", "bgp_mismatches", "load_lab", "run", "sample_gpus", "split_vrfs"]


class Emulation(Wiring, Daemons, Ecmp, Checks, Blame, LinkFlap):
    """One run: the lab, the resources it made, the checks (each part in its module of :mod:`topogen.config.emulation`)."""

    def __init__(self, lab: Lab, timeout_s: float, progress: Callable[[str], None]):
        self.lab = lab
        self.timeout_s = timeout_s
        self.progress = progress
        self.res = Resources(f"{os.getpid()}")
        tag = ns_tag(os.getpid())
        for i, r in enumerate(lab.routers):
            r.ns = f"{tag}s{i}"
        for i, h in enumerate(lab.hosts):
            h.ns = f"{tag}g{i}"
        self.router_of_port = {(p.device, p.name): r for r in lab.routers for p in r.ports}
        self.host_of_port = {(h.gpu, h.nic): h for h in lab.hosts}
        self._widths: dict[frozenset, dict] = {}
        self.report = Report(lab.arch, len(lab.configs), len(lab.routers), lab.gpus_total, len(lab.hosts), 0)
        self.neigh_fulls = table_fulls()  # the kernel's count of full neighbour tables, to tell a machine's lost echo from a config's

    def fail(self, text: str) -> None:
        self.report.failures.append(text)

    # -- set-up

    def dry_run(self) -> None:
        """``vtysh --dryrun`` on every switch's file as built that is not loaded unchanged (split into VRFs)."""
        split = sorted({r.switch for r in self.lab.routers if r.vrf})
        for i, s in enumerate(split):
            copy = self.res.private_file(f"dryrun{i}.conf", self.lab.texts[s])  # the checked text, never the build's path
            res = subprocess.run(["vtysh", "--dryrun", "-f", str(copy)], capture_output=True, text=True)
            if res.returncode != 0:
                self.fail(f"{s}: FRR refuses its frr.conf: {(res.stdout + res.stderr).strip()[:500]}")

    def run(self) -> Report:
        p = self.progress
        p(f"{self.lab.arch}: {len(self.lab.routers)} routers ({len(self.lab.configs)} switches), {len(self.lab.hosts)} of {self.lab.gpus_total} GPU NICs")
        self.lint()
        self.dry_run()
        p("namespaces and cables")
        self.wire()
        p("starting FRR")
        t0 = time.monotonic()
        self.start_frr()
        self.report.load_s = time.monotonic() - t0
        p("waiting for convergence")
        t, left = self.wait("converge", lambda: self.sessions_down() + self.origins_missing() + self.ecmp_gaps())
        self.report.converge_s = None if t is None else time.monotonic() - t0
        if left:
            self.fail(f"no convergence within {self.timeout_s:.0f} s")
        p("checking sessions, reachability, ECMP, rails")
        self.check_sessions()
        reach, apart, planes = self.pairs()
        self.check_reach(reach, "reach")
        if apart:
            self.check_apart(apart)
        if planes:
            self.check_planes(planes)
        self.check_origins()
        self.check_ecmp()
        if not self.report.failures:
            p("link down and back up")
            self.link_flap()
        else:
            self.report.link_down = "none (the fabric failed the checks above)"
        return self.report


def run(build: Path, arch: str | None = None, max_gpus: int = 64, timeout_s: float = 60.0, progress: Callable[[str], None] | None = None, notes: list[str] | None = None) -> Report:
    """Emulate one architecture of ``build`` (see the module docstring); always removes what it made."""
    step = progress or (lambda _t: None)
    lab = load_lab(Path(build), arch, max_gpus)  # the build passes the grammar first (nothing is run before)
    problems = environment_problems()
    if problems:
        raise InputError(problems)
    problems = capacity_problems(lab)
    if problems:
        raise InputError(problems)
    for n in remove_leftovers():
        (notes if notes is not None else []).append(n)
    sampled = {h.gpu for h in lab.hosts}
    cables = sum(1 for a, _, z, _ in lab.cables if all(lab.roles.get(d) != "gpu" or d in sampled for d in (a, z)))  # those wired
    raised, problems = raise_limits(cables)  # one ARP/NDP table for every namespace: 1,024 entries by default
    if problems:
        raise InputError(problems)
    for n in raised:
        (notes if notes is not None else []).append(n)
    emu = None
    try:
        emu = Emulation(lab, timeout_s, step)
        return emu.run()
    finally:
        if emu is not None:
            step("cleaning up")
            with interrupts.held():  # a second Ctrl-C waits until all is removed
                errors = emu.res.cleanup()
            if errors:
                emu.report.failures += [f"clean-up: {e}" for e in errors]
