"""System definitions (templates/systems/): the bundled ones load; a malformed one is refused naming the file and field."""

from __future__ import annotations

import pytest

from topogen.spec import systems
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

GOOD = {"name": "x", "gpus": 2, "height_u": 4, "compute": [{"gpu": 0, "cage": 1, "port": 1, "hca": "mlx5_0", "pci": "0000:18:00.0", "os_name": "enp24s0np0"}, {"gpu": 1, "cage": 1, "port": 2}]}


def test_bundled_systems_load():
    got = {n: systems.load(n) for n in systems.names()}
    assert got["dgx-h100"].height_u == 8 and got["dgx-b200"].height_u == 10
    for s in got.values():
        assert len(s.compute) == s.gpus and len({(p.cage, p.port) for p in s.compute}) == len(s.compute)
        assert sorted(p.gpu for p in s.compute) == list(range(s.gpus))
    h = got["dgx-h100"]
    assert h.renames and [p.label for p in h.compute[:3]] == ["cage1/p1", "cage1/p2", "cage2/p1"]
    assert len({p.hca for p in h.compute}) == 8 and len({p.pci for p in h.compute}) == 8


@pytest.mark.parametrize(
    "change,where,words",
    [
        ({"colour": "green"}, "colour", "unknown key"),
        ({"height_u": 0}, "height_u", "whole number"),
        ({"compute": []}, "compute", "non-empty"),
        ({"compute": [{"gpu": 0, "cage": 1, "port": 1, "speed": 400}]}, "compute[0].speed", "unknown key"),
        ({"compute": [{"gpu": 0, "cage": 1, "port": 1, "hca": "mlx0"}]}, "compute[0].hca", "mlx5_<n>"),
        ({"compute": [{"gpu": 0, "cage": 1, "port": 1, "pci": "18:00.0"}]}, "compute[0].pci", "dddd:bb:ss.f"),
        ({"compute": [{"gpu": 0, "cage": 1, "port": 1, "os_name": "a-name-longer-than-15"}]}, "compute[0].os_name", "1-15"),
        ({"compute": [{"gpu": 5, "cage": 1, "port": 1}]}, "compute[0].gpu", "0 to 1"),
        ({"compute": [{"gpu": 0, "cage": 1, "port": 1}, {"gpu": 1, "cage": 1, "port": 1}]}, "compute[1]", "also compute[0]"),
    ],
)
def test_a_malformed_system_is_refused_naming_the_field(change, where, words):
    with pytest.raises(InputError) as exc:
        systems.parse({**GOOD, **change}, "system t")
    text = str(exc.value)
    assert f"system t: {where}" in text and words in text


def test_the_spec_picks_the_system_from_its_gpu_and_node_size():
    def spec(**kw):
        return build_spec({"name": "s", "gpus": 64, "hb_domain": 8, "radix": 16, **kw})

    assert systems.for_spec(spec()) is None  # no GPU named: a generic node
    assert systems.for_spec(spec(workload={"model": "gpt-3-175b", "gpu": "b200"})).name == "dgx-b200"
    assert systems.for_spec(spec(workload={"model": "gpt-3-175b", "gpu": "h100"})).name == "dgx-h100"
    assert systems.for_spec(spec(workload={"model": "gpt-3-175b", "gpu": "h100"}, gpus_per_node=4)) is None  # not a DGX


@pytest.mark.parametrize("gpu,u", [("b200", 10), ("h100", 8), (None, 8)])
def test_the_layout_stands_the_systems_height(gpu, u):
    """A DGX B200 is 10 U in the racks, NetBox and the elevations (unless the layout says tray_u); a DGX H100 or a generic 8-GPU node 8 U."""
    from topogen import pipeline
    from topogen.exports.netbox.dcim import _heights

    extra = {"workload": {"model": "gpt-3-175b", "gpu": gpu}} if gpu else {}
    spec = build_spec({"name": "s", "gpus": 64, "hb_domain": 8, "radix": 16, **extra})
    ctx = pipeline.build(spec)
    for lay in ctx.layouts.values():
        assert lay.spec.tray_u == u
        assert lay.spec.first_u - 1 + lay.spec.gpus_per_rack // 8 * u <= lay.spec.rack_u
    assert _heights(spec)[0] == u
    told = build_spec({"name": "s", "gpus": 64, "hb_domain": 8, "radix": 16, **extra, "layout": {"tray_u": 6}})
    assert _heights(told)[0] == 6


def test_the_spec_field_names_the_system_over_the_default():
    from topogen.exports.netbox.dcim import _heights

    base = {"name": "s", "gpus": 64, "hb_domain": 8, "radix": 16}
    named = build_spec({**base, "system": "dgx-b200"})
    assert systems.for_spec(named).name == "dgx-b200" and _heights(named)[0] == 10
    over = build_spec({**base, "system": "dgx-h100", "workload": {"model": "gpt-3-175b", "gpu": "b200"}})
    assert systems.for_spec(over).name == "dgx-h100"
    assert "system" not in build_spec(base).to_dict()  # unset: the spec's hash is unchanged
    with pytest.raises(InputError, match="system: unknown system 'dgx-x'"):
        build_spec({**base, "system": "dgx-x"})
