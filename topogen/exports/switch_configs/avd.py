"""``<arch>/avd/``: Arista AVD ``eos_designs`` inputs of a fabric of EOS switches (:mod:`topogen.config.avd`).

Two files per architecture whose switches run Arista EOS (catalog ``manufacturer: Arista``), laid
out as an AVD project reads them:

* ``inventory.yml``: the fabric group ``<SPEC>_<ARCH>`` and under it one group per node type
  (``..._L3LEAVES``, ``..._SPINES``, ``..._SUPER_SPINES``) whose ``type`` variable is the AVD node
  type, every switch a host;
* ``group_vars/<SPEC>_<ARCH>.yml``: the design: ``fabric_name``, eBGP underlay, no overlay, the
  node types with their nodes (id, ASN, platform, loopback pool), the routing policy and every
  cable as an ``l3_edge.p2p_links`` entry.

``pyavd.get_avd_facts`` / ``get_device_structured_config`` / ``get_device_config`` render each
switch's EOS configuration from them (the Ansible collection ``arista.avd`` reads the same files).
An architecture AVD cannot carry (another vendor's switches, rails sharing a switch, rail subnets,
unnumbered links, more than 3 tiers: :func:`topogen.config.avd.unsupported`) gets no files.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from topogen.config import avd
from topogen.exports.files import arch_dir, open_output


class _Dumper(yaml.SafeDumper):
    """safe_dump without anchors and aliases: every node type's defaults written out in full."""

    def ignore_aliases(self, data) -> bool:
        return True


def _dump(data) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


def _q(text: str) -> str:
    """A YAML single-quoted scalar (a quote inside is doubled)."""
    return "'" + str(text).replace("'", "''") + "'"


def _links(links: list[dict]) -> str:
    """``l3_edge.p2p_links`` as one flow mapping per line (yaml.dump is slow for a million of them)."""
    out = []
    for ln in links:
        parts = [f"nodes: [{', '.join(map(_q, ln['nodes']))}]", f"interfaces: [{', '.join(map(_q, ln['interfaces']))}]", f"ip: [{', '.join(map(_q, ln['ip']))}]"]
        if "as" in ln:
            parts.append(f"as: [{', '.join(map(_q, ln['as']))}]")
        parts.append(f"include_in_underlay_protocol: {'true' if ln['include_in_underlay_protocol'] else 'false'}")
        out.append("    - {" + ", ".join(parts) + "}\n")
    return "".join(out)


def group_vars_text(data: dict) -> str:
    """The group variables file: the design keys through PyYAML's safe dumper, then the links streamed."""
    head = {k: v for k, v in data.items() if k != "l3_edge"}
    return _dump(head) + "l3_edge:\n  p2p_links:\n" + _links(data["l3_edge"]["p2p_links"])


def inventory_text(fabric, spec_name: str) -> str:
    name = avd.fabric_name(spec_name, fabric.arch)
    children = {g: {"vars": {"type": avd.node_type_of(g)}, "hosts": {h: None for h in hosts}} for g, hosts in avd.groups(fabric, spec_name).items()}
    return _dump({"all": {"children": {name: {"children": children}}}})


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        if avd.unsupported(ctx, fabric):
            continue
        d = arch_dir(dest, arch, "avd")
        name = avd.fabric_name(ctx.spec.name, arch)
        p = d / "inventory.yml"
        with open_output(p, newline="\n") as fh:
            fh.write(inventory_text(fabric, ctx.spec.name))
        paths.append(p)
        (d / "group_vars").mkdir(exist_ok=True)
        p = d / "group_vars" / f"{name}.yml"
        with open_output(p, newline="\n") as fh:
            fh.write(group_vars_text(avd.inputs(ctx, fabric, ctx.spec.name)))
        paths.append(p)
    return paths
