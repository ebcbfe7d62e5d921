"""As-built switch ports in the plan's names: ``[3]`` of ibnetdiscover, ``Ethernet8`` of LLDP, ``p3`` of an old file.

The plan names a switch port as its model does (:mod:`topogen.fabric.ports`:
``Ethernet8``, ``swp2s1``, ``Ethernet1/5``, ``1/2``); what the floor reports
names the same port its own way: ibnetdiscover by number (read as ``p<n>``),
LLDP by the switch's interface name, a hand-written sheet by either. Before
devices are matched, every switch end is put in the plan's name of that
port: by the switch's own table when the device has a plan name, else by
the name every switch model of the plan agrees on (a factory-named QM9700's
``p3`` is ``2/1`` on every QM9700 of the plan). A name no switch of the plan
has is left as read, for the diff to report.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from topogen.asbuilt import Cable, End, Found, lldp
from topogen.fabric import clos
from topogen.fabric.ports import SwitchPorts, generic, switch_ports


def _agreed(sp: SwitchPorts) -> dict[str, str]:
    """Port text -> the plan's name, where every switch class of the plan that has the text names it alike."""
    bases: dict[int, int] = {}
    for k, b in zip(sp.klass.tolist(), sp.base.tolist()):
        bases.setdefault(k, b)
    seen: dict[str, set[str]] = {}
    for k, b in bases.items():
        for text, i in sp.aliases[k].items():
            seen.setdefault(text, set()).add(str(sp.table[b + i]))
    return {t: next(iter(v)) for t, v in seen.items() if len(v) == 1}


def in_plan_names(found: Found, spec, arch: str | None, plan_devices: set[str]) -> Found:
    """``found`` with every switch port named as the plan names it (see the module docstring).

    Without the plan's spec, or when its catalog's switches are all generic
    (``p<n>``), the short forms a generic switch shows (``swp<n>``, ``Eth1/<n>``)
    are read as ``p<n>``, without generating the plan's wiring.
    """
    if spec is None or arch is None or generic(spec):
        return _mapped(found, lambda e: End(e.device, lldp.legacy(e.port)) if not e.port.startswith("nic") else e)
    fabric = clos.generate(spec, arch)
    sp = switch_ports(fabric)
    index = {s.name: i for i, s in enumerate(fabric.switches)}
    agreed = _agreed(sp)
    memo: dict[End, End] = {}

    def fix(e: End) -> End:
        got = memo.get(e)
        if got is not None:
            return got
        i = index.get(e.device)
        if i is not None:
            name = sp.name(i, e.port)
        elif e.port.startswith("nic"):
            name = None  # a GPU: its ports as read
        elif e.device in plan_devices:
            name = lldp.legacy(e.port)  # a device of another network: those keep topogen's p<n>, which a switch shows as swp<n> or Eth1/<n>
        else:
            name = agreed.get(e.port)
        got = memo[e] = End(e.device, name) if name is not None and name != e.port else e
        return got

    return _mapped(found, fix)


def _mapped(found: Found, fix) -> Found:
    cables = [Cable(fix(c.a), fix(c.z), c.where, c.speeds) for c in found.cables]
    dups = [(Cable(fix(a.a), fix(a.z), a.where, a.speeds), Cable(fix(b.a), fix(b.z), b.where, b.speeds)) for a, b in found.duplicates]
    port_ids = {fix(e): v for e, v in found.port_ids.items()}
    return replace(found, cables=cables, duplicates=dups, port_ids=port_ids)


def fabric_port(spec, arch: str | None) -> Callable[[str, str], int | None] | None:
    """The 1-based port of a compute switch read by its model's name (or ``p<n>``), for the networks' checks; None when the plan's switches keep ``p<n>``."""
    if spec is None or arch is None or generic(spec):
        return None
    fabric = clos.generate(spec, arch)
    sp = switch_ports(fabric)
    index = {s.name: i for i, s in enumerate(fabric.switches)}

    def port(device: str, text: str) -> int | None:
        i = index.get(device)
        return None if i is None else sp.index(i, text)

    return port
