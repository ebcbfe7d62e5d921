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

import numpy as np
import yaml

from topogen.config import avd
from topogen.exports.files import arch_dir, open_output


class _Dumper(yaml.SafeDumper):
    """safe_dump without anchors and aliases: every node type's defaults written out in full."""

    def ignore_aliases(self, data) -> bool:
        return True


def _dump(data) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


def _q(col: np.ndarray) -> np.ndarray:
    """YAML single-quoted scalars of a text column (a quote inside doubled; topogen's own names have none)."""
    col = col.astype(object)
    if any("'" in x for x in set(col.tolist())):
        col = np.array([x.replace("'", "''") for x in col.tolist()], dtype=object)
    return "'" + col + "'"


def _pair(key: str, a: np.ndarray, z: np.ndarray) -> np.ndarray:
    return f"{key}: [" + _q(a) + ", " + _q(z) + "]"


def links_text(ln: avd.Links) -> str:
    """``l3_edge.p2p_links`` as one flow mapping per line, built column-wise (yaml.dump is slow for a million)."""
    if not len(ln.bgp):
        return ""
    body = "    - {" + _pair("nodes", ln.a_node, ln.z_node) + ", " + _pair("interfaces", ln.a_if, ln.z_if) + ", " + _pair("ip", ln.a_ip, ln.z_ip)
    asn = np.where(ln.bgp, ", " + _pair("as", ln.a_as, ln.z_as), "")
    tail = np.where(ln.bgp, ", include_in_underlay_protocol: true}\n", ", include_in_underlay_protocol: false}\n")
    return "".join((body + asn + tail).tolist())


def group_vars_text(ctx, fabric, spec_name: str) -> str:
    """The group variables file: the design keys through PyYAML's safe dumper, then the links streamed."""
    d = avd.design(ctx, fabric, spec_name)
    nodes = {k: v.pop("nodes") for k, v in d.items() if isinstance(v, dict) and "nodes" in v}
    text = _dump({k: v for k, v in d.items() if k not in nodes})
    for key, rows in nodes.items():  # node types, their nodes one flow mapping a line (thousands of them)
        text += _dump({key: d[key]}) + "  nodes:\n" + "".join(f"  - {{name: '{r['name']}', id: {r['id']}, bgp_as: '{r['bgp_as']}'}}\n" for r in rows)
    return text + "l3_edge:\n  p2p_links:\n" + links_text(avd.links(ctx, fabric))


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
            fh.write(group_vars_text(ctx, fabric, ctx.spec.name))
        paths.append(p)
    return paths
