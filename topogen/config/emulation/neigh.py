"""The kernel's neighbour tables (ARP for IPv4, NDP for IPv6): one per family for every network namespace.

Linux keeps a single ARP table and a single NDP table for all namespaces, capped
by ``net.ipv{4,6}.neigh.default.gc_thresh3`` (1,024 entries by default) and
pruned above ``gc_thresh2`` (512); only the first namespace can change them. Every
emulated cable puts an entry at each end (a switch resolves its BGP peer, a leaf
and a GPU NIC resolve each other), so a fabric of more than about 500 cables --
256 GPUs at radix 128 on the paper catalog has 512 leaf-spine cables and 1,024
BGP sessions -- fills the table with its sessions alone: they stay Established,
and then no GPU NIC can resolve its leaf (``sendmsg: No buffer space
available``), every echo is lost. :func:`raise_limits` raises both thresholds
before a run to what its cables need on top of what the machine already holds;
it never lowers them (another run may be relying on them), so they stay raised
until the next boot.
"""

from __future__ import annotations

from pathlib import Path

from topogen.util.errors import Problem

SYSCTL_ROOT = Path("/proc/sys/net")
FAMILIES = ("ipv4", "ipv6")
STAT = {"ipv4": Path("/proc/net/stat/arp_cache"), "ipv6": Path("/proc/net/stat/ndisc_cache")}
STEP = 1024  # limits are set in whole multiples of this


def needed_entries(cables: int) -> int:
    """Entries a run of ``cables`` emulated cables can hold in one family's table: one at each end of each cable."""
    return 2 * cables


def _path(family: str, n: int) -> Path:
    return SYSCTL_ROOT / family / "neigh" / "default" / f"gc_thresh{n}"


def read_limits() -> dict[str, tuple[int, int, int]]:
    """``family -> (gc_thresh1, gc_thresh2, gc_thresh3)`` of the families this kernel has."""
    out = {}
    for fam in FAMILIES:
        try:
            out[fam] = tuple(int(_path(fam, n).read_text().split()[0]) for n in (1, 2, 3))
        except (OSError, ValueError, IndexError):
            continue
    return out


def entries_in_use(family: str) -> int:
    """Entries the family's table holds now, every namespace counted (0 when the kernel does not say)."""
    try:
        lines = STAT[family].read_text().splitlines()
        return int(lines[1].split()[0], 16)
    except (OSError, ValueError, IndexError):
        return 0


def targets(cables: int, limits: dict[str, tuple[int, int, int]], in_use: dict[str, int]) -> dict[str, tuple[int, int]]:
    """``family -> (gc_thresh2, gc_thresh3)`` a run needs, only where higher than now: thresh2 holds what is in use plus the run's cables, thresh3 twice that (the kernel's own ratio)."""
    out = {}
    for fam, (_t1, t2, t3) in limits.items():
        need = in_use.get(fam, 0) + needed_entries(cables)
        want2 = max(t2, -(-need // STEP) * STEP)
        want3 = max(t3, 2 * want2)
        if (want2, want3) != (t2, t3):
            out[fam] = (want2, want3)
    return out


def raise_limits(cables: int) -> tuple[list[str], list[Problem]]:
    """Raise the neighbour-table limits to what ``cables`` need: (notes saying what changed, problems when the kernel refused)."""
    limits = read_limits()
    notes, problems = [], []
    for fam, (want2, want3) in targets(cables, limits, {f: entries_in_use(f) for f in limits}).items():
        _t1, t2, t3 = limits[fam]
        try:
            _path(fam, 3).write_text(f"{want3}\n")  # thresh3 first: thresh2 never above it
            _path(fam, 2).write_text(f"{want2}\n")
        except OSError as exc:
            name = f"net.{fam}.neigh.default.gc_thresh"
            problems.append(
                Problem(
                    "emulate",
                    f"the kernel's {'ARP' if fam == 'ipv4' else 'NDP'} table, shared by every network namespace, holds at most {t3:,} entries ({name}3) and this fabric's {cables:,} cables need about {needed_entries(cables):,}; setting it failed: {exc.strerror or exc}",
                    f"on the host as root: sysctl -w {name}3={want3} {name}2={want2}",
                )
            )
            continue
        notes.append(f"raised net.{fam}.neigh.default.gc_thresh2/3 from {t2}/{t3} to {want2}/{want3}: the kernel's neighbour table is shared by every namespace and {cables:,} cables need about {needed_entries(cables):,} entries (kept until reboot)")
    return notes, problems


def table_fulls() -> dict[str, int]:
    """``family -> times the table was found full`` since boot (the kernel's ``table_fulls``, every CPU summed)."""
    out = {}
    for fam, path in STAT.items():
        try:
            head, *cpus = path.read_text().splitlines()
            col = head.split().index("table_fulls")
            out[fam] = sum(int(line.split()[col], 16) for line in cpus if line.strip())
        except (OSError, ValueError, IndexError):
            continue
    return out


def overflow_failures(before: dict[str, int]) -> list[str]:
    """What to report when a family's table was found full since ``before`` (:func:`table_fulls`): echoes lost to the machine, not to a configuration."""
    limits = read_limits()
    return [
        f"the kernel's {'ARP' if fam == 'ipv4' else 'NDP'} table, shared by every network namespace, was full {n - before[fam]:,} time(s) during the run "
        f"(net.{fam}.neigh.default.gc_thresh3 = {limits.get(fam, (0, 0, 0))[2]:,}): lost echoes may be the machine's (another emulation running?), not the configurations'"
        for fam, n in table_fulls().items()
        if fam in before and n > before[fam]
    ]
