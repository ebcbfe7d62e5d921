"""Which day-0 files a fabric gets, from its switch SKU's technology in the catalog.

A compute fabric's switches speak InfiniBand when the catalog's SKU has an
``infiniband-*`` ``interface_type`` (or runs only ``mlnx-os``): it gets the
subnet manager's files (``opensm``: partitions, routing engine, root and CN
GUIDs, node name map) and no routing configuration, since an InfiniBand
fabric has no BGP, no IP on its switch ports and no ASNs. An Ethernet fabric
gets the routing configurations its switches' network operating systems read
(the SKU's ``nos``): ``frr`` and the address plan for any of them, ``sonic``
for SONiC, ``nvue`` and ``air`` (NVIDIA Air simulates Cumulus) for Cumulus,
``avd`` (Arista AVD's inputs) for EOS;
no ``opensm``. A SKU that states neither (the ``paper`` catalog's generic
switch) gets every format, as before the catalog said.

:func:`skipped` lists what a build leaves out and why, for the CLI to print;
the exporters ask :func:`writes` per architecture.
"""

from __future__ import annotations

from typing import NamedTuple

# format -> the Ethernet NOS it serves (None: any routed Ethernet fabric)
ROUTED: dict[str, str | None] = {"addressing": None, "frr": None, "sonic": "sonic", "nvue": "cumulus", "air": "cumulus", "avd": "eos", "ipam": None}
SUBNET_MANAGER = ("opensm",)


class Technology(NamedTuple):
    """What one architecture's compute fabric is built of, as the catalog says."""

    sku: str  # the leaf tier's switch SKU ("" without a catalog entry)
    kind: str  # "infiniband", "ethernet" or "" (not stated: every format)
    runs: tuple[str, ...]  # Ethernet NOSes the SKUs run (every tier's)


def technology(ctx, arch: str) -> Technology:
    """The technology of ``arch``'s compute fabric: from the switch SKUs of its BOM's tiers."""
    bom = (getattr(ctx, "boms", None) or {}).get(arch)
    hw = getattr(ctx, "catalog", None)
    if bom is None or hw is None:
        return Technology("", "", ())
    by_sku = {s.sku: s for s in hw.switches}
    skus = [by_sku.get(x) for x in dict.fromkeys(bom.switch_skus or [bom.switch_sku])]
    skus = [s for s in skus if s is not None]
    if not skus:
        return Technology(bom.switch_sku, "", ())
    if any(s.infiniband for s in skus):
        return Technology(skus[0].sku, "infiniband", ())
    stated = any(s.interface_type or s.nos is not None for s in skus)
    runs = tuple(x for x in skus[0].runs if all(x in s.runs for s in skus))  # what every tier runs
    return Technology(skus[0].sku, "ethernet" if stated else "", runs)


def writes(ctx, arch: str, fmt: str) -> bool:
    """Whether format ``fmt`` belongs to ``arch``'s compute fabric."""
    return _why_not(technology(ctx, arch), fmt) == ""


def _why_not(t: Technology, fmt: str) -> str:
    if t.kind == "":
        return ""
    if t.kind == "infiniband":
        return "InfiniBand: no BGP or IP routing on its switches; the subnet manager's files are in opensm/" if fmt in ROUTED else ""
    if fmt in SUBNET_MANAGER:
        return "Ethernet: no subnet manager; its routing configs are frr/ and the NOS formats"
    need = ROUTED.get(fmt)
    if need is not None and need not in t.runs:
        return f"its catalog nos is [{', '.join(t.runs)}], not {need}"
    return ""


def skipped(ctx, formats: list[str]) -> list[str]:
    """One note per architecture whose compute fabric leaves out some of ``formats``: which, and why."""
    notes = []
    for arch in getattr(ctx, "fabrics", {}):
        t = technology(ctx, arch)
        why: dict[str, list[str]] = {}
        for fmt in formats:
            reason = _why_not(t, fmt)
            if reason:
                why.setdefault(reason, []).append(fmt)
        for reason, fmts in why.items():
            notes.append(f"{arch}: skipped {', '.join(fmts)} for the compute fabric of {t.sku} switches ({reason})")
    return notes
