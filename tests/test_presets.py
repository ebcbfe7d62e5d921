"""The rack-scale and SuperPOD presets match their published designs (and say where the numbers come from)."""

from __future__ import annotations

import pytest

from topogen import pipeline
from topogen.spec.cluster import load_spec
from topogen.util import resources


def gpu_end(bom) -> dict[str, int]:
    return {x.sku: x.quantity for x in bom.lines if x.end == "gpu"}


def test_dgx_h100_takes_twin_port_flat_top_modules_four_per_node():
    ctx = pipeline.build(load_spec("dgx-h100-superpod"))
    for bom in ctx.boms.values():
        assert gpu_end(bom) == {"MMA4Z00-NS-FLT": 127 * 4}  # 8 NIC ports in 4 twin-port cages per DGX


@pytest.mark.parametrize(("preset", "speed", "catalog", "gpu_module"), [("gb200-nvl72", 400, "ndr-400g", "MMA4Z00-NS400"), ("gb300-nvl72", 800, "xdr-800g", "OSFP-800G-DR4")])
def test_nvl72_presets(preset, speed, catalog, gpu_module):
    """GB200 compute trays: 4 ConnectX-7 at 400G NDR; GB300: ConnectX-8 at 800G. One single-port module per GPU."""
    spec = load_spec(preset)
    assert (spec.gpus, spec.hb_domain, spec.gpus_per_node, spec.link_speed, spec.catalog) == (9216, 72, 4, speed, catalog)
    ctx = pipeline.build(spec)
    for bom in ctx.boms.values():
        assert gpu_end(bom) == {gpu_module: 9216}


@pytest.mark.parametrize("preset", ["dgx-h100-superpod", "gb200-nvl72", "gb300-nvl72", "alibaba-hpn"])
def test_preset_comment_names_its_source(preset):
    head = resources.template_path("clusters", preset).read_text().split("\nname:")[0]
    assert "Source" in head or "source" in head
    assert any(ch.isdigit() for ch in head)
