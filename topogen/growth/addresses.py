"""Addresses and switch configurations that an expansion changes, and only those.

The address plan (:mod:`topogen.config.addressing`: loopbacks, ASNs, a /31 per
switch-to-switch link, the GPU NICs' addresses) is computed twice: on the installed
wiring against the installed phase's spec, and on the expansion's final wiring
against the new spec, each in cable-id order (a kept or moved cable keeps its id, new
cables take the next ones). The two are compared

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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from topogen.asbuilt import wiring
from topogen.config import addressing, frr
from topogen.config.paths import switch_dirs
from topogen.fabric.view import csv_header
from topogen.growth.rewire import Wire, identity
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


def compare(installed: list[Wire], final: list[Wire], moved: set[int], added: set[int], removed: set[int], old_spec, new_spec, arch: str, frr_too: bool) -> AddressDelta:
    """The address plans (and with ``frr_too`` the FRR files) of the installed and the final wiring compared (see the module)."""
    fab0, cab0 = fabric_of(sorted(installed, key=lambda w: w.cable), old_spec, arch)
    fab1, cab1 = fabric_of(final, new_spec, arch)
    ad0, ad1 = addressing.plan(fab0), addressing.plan(fab1)
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
    out = AddressDelta(links, switches, same, renumbered, int(gpus))
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
