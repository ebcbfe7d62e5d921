"""Hardware catalogs: the bundled ones load and cite their figures; bad catalogs fail clearly.

Each bad-input case is its own test with the exact message (exit code 2 through the CLI,
nothing written).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen.spec import catalog
from topogen.cli import main
from topogen.spec.cluster import available_catalogs, build_spec
from topogen.util.errors import InputError
from topogen.util.resources import template_path

REALISTIC = ("ndr-400g", "xdr-800g")


def load_text(tmp_path: Path, text: str, name: str = "cat.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


MINIMAL = """\
    name: tiny
    switches:
      - sku: sw64
        ports:
          - {speed: 400, radix: 64, per_cage: 2}
        price_usd: 1000
        power_w: 100
    transceivers:
      - sku: twin
        speed: 400
        reach_m: 50
        ports_per_module: 2
        price_usd: 10
        power_w: 1
      - sku: single
        speed: 400
        reach_m: 50
        price_usd: 6
    cables:
      - sku: fib15
        kind: fiber
        length_m: 15
        price_usd: 1
      - sku: fib30
        kind: fiber
        length_m: 30
        price_usd: 2
    media:
      - tier: gpu-leaf
        transceiver: twin
        gpu_transceiver: single
        cable: [fib30, fib15]
      - transceiver: twin
        cable: [fib15, fib30]
"""


def parse(text: str) -> catalog.Catalog:
    return catalog.parse_catalog(yaml.safe_load(textwrap.dedent(text)), label="t")


def problems(text: str) -> list[str]:
    with pytest.raises(InputError) as exc:
        parse(text)
    return [p.render() for p in exc.value.problems]


def spec_problems(cat: catalog.Catalog, **kw) -> list[str]:
    spec = build_spec({"gpus": 1024, "hb_domain": 8, "radix": 64, **kw})
    tiers = {"rail-optimized": 2, "rail-only": 2}
    with pytest.raises(InputError) as exc:
        catalog.check_spec(cat, spec, tiers)
    return [p.render() for p in exc.value.problems]


# --- bundled catalogs ---------------------------------------------------------------


def test_bundled_catalogs_are_listed():
    assert {"paper", *REALISTIC} <= set(available_catalogs())


@pytest.mark.parametrize("name", available_catalogs())
def test_bundled_catalog_loads(name):
    cat = catalog.load_catalog(name)
    assert cat.name == name
    assert cat.switches and cat.rules


@pytest.mark.parametrize("name", available_catalogs())
def test_every_price_and_power_line_carries_a_comment(name):
    """The issue's rule: every price and power figure has a source comment or is marked an estimate."""
    bare = []
    for n, line in enumerate(template_path("catalogs", name).read_text().splitlines(), 1):
        if re.match(r"^\s*(price_usd|price_per_port_usd|power_w|reach_m)\s*:", line) and "#" not in line:
            bare.append(n)
    assert bare == []


@pytest.mark.parametrize("name", REALISTIC)
def test_realistic_catalog_names_a_source_for_every_figure(name):
    cat = catalog.load_catalog(name)
    items = [*cat.switches, *cat.transceivers.values(), *cat.cables.values(), *cat.nics]
    assert items
    for item in items:
        assert item.price_source, item.sku
        assert item.power_source, item.sku
        for text in (item.price_source, item.power_source):
            assert "estimate" in text or re.search(r"\b(19|20)\d\d\b", text) or "0 W" in text, (item.sku, text)


@pytest.mark.parametrize("name", available_catalogs())
def test_sources_are_stated_one_way(name):
    """Every price source starts "estimate" or names a dated document; every reach comment is a source, an estimate or another SKU's figure.

    One wording across the catalogs (no "list price estimate" beside "estimate: ..."), so
    a reader of the BOM's price_source column can tell a guess from a document.
    """
    text = template_path("catalogs", name).read_text()
    for src in re.findall(r'^\s*price_source: "([^"]*)"', text, re.M):
        assert src.startswith("estimate") or re.search(r"\((?:[A-Za-z ]+ )?(19|20)\d\d\)", src), src
    for note in re.findall(r"^\s*reach_m: [0-9.]+ +# (.*)$", text, re.M):
        assert note.startswith(("source: ", "estimate", "as ")), note
        if note.startswith("source: "):
            assert re.search(r"\b(19|20)\d\d\b", note) and "not re-checked" in note, note


def test_paper_catalog_is_the_papers_cost_model():
    cat = catalog.load_catalog("paper")
    sw, mode = cat.switch_for(400, 64)
    assert mode.radix is None
    for radix in (32, 64, 128, 256, 144):
        assert cat.switch_for(400, radix)[0].unit_price(radix) == 748 * radix
    (t,) = cat.transceivers.values()
    assert (t.price_usd, t.ports_per_module, t.power_w, sw.power_w) == (374, 1, 0, 0)
    assert cat.switch_for(800, 64) is None


def test_ndr_400g_fits_dgx_h100():
    """K=8, radix 64, 400G: twin-port modules on switches, SR4 at the NIC, DR4 above."""
    cat = catalog.load_catalog("ndr-400g")
    sw, mode = cat.switch_for(400, 64)
    assert mode.per_cage == 2
    spec = build_spec({"gpus": 4096, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g"})
    catalog.check_spec(cat, spec, {"rail-optimized": 3, "rail-only": 2})
    m1, _ = catalog.resolve_media(cat, 1, spec.domains, sw, mode, 400)
    m2, _ = catalog.resolve_media(cat, 2, spec.domains, sw, mode, 400)
    assert m1.transceiver.ports_per_module == 2 and m1.gpu_transceiver.ports_per_module == 1
    assert "multimode" in m1.transceiver.fiber and "single-mode" in m2.transceiver.fiber
    m0, _ = catalog.resolve_media(cat, 1, 1, sw, mode, 400)
    assert m0.kind == "copper" and m0.transceiver is None


def test_xdr_800g_switches():
    cat = catalog.load_catalog("xdr-800g")
    assert cat.switch_for(800, 144)[0].sku == "Q3400-RA"
    assert cat.switch_for(800, 64)[0].sku == "SN5600"
    assert cat.switch_for(400, 128)[0].sku == "SN5600"


def test_catalog_by_path(tmp_path):
    p = load_text(tmp_path, MINIMAL)
    cat = catalog.load_catalog(str(p))
    assert cat.name == "tiny" and cat.label == str(p)
    # media cables are tried shortest first, whatever the order written
    assert cat.rules[0].cables == ("fib15", "fib30")


def test_length_class_rule():
    assert [catalog.length_class(t, 128) for t in (1, 2, 3, 4, 5)] == ["in-row", "cross-row", "cross-hall", "building", "building"]
    assert catalog.length_class(1, 1) == "in-rack"
    assert catalog.LENGTH_CLASSES["in-row"] == 15


# --- bad catalogs: one test per case ---------------------------------------------------


def test_unknown_top_level_key():
    assert problems(MINIMAL + "    vendor: acme\n") == [
        "catalog t: vendor: unknown key 'vendor'; allowed keys: name, description, switches, transceivers, cables, nics, media, failure_rates"
    ]


def test_unknown_switch_key():
    text = MINIMAL.replace("        power_w: 100\n", "        power_w: 100\n        colour: blue\n")
    assert problems(text) == [
        "catalog t: switches[0].colour: unknown key 'colour'; allowed keys: sku, description, ports, price_usd, price_per_port_usd, power_w, interface_type, manufacturer, role, uplink_ports, nos, price_source, power_source"
    ]


def test_negative_switch_price():
    assert problems(MINIMAL.replace("price_usd: 1000", "price_usd: -5")) == [
        "catalog t: switches[0].price_usd: price_usd must be 0 or more, got -5; prices, power and lengths cannot be negative"
    ]


def test_negative_transceiver_power():
    assert problems(MINIMAL.replace("power_w: 1\n", "power_w: -1\n")) == [
        "catalog t: transceivers[0].power_w: power_w must be 0 or more, got -1; prices, power and lengths cannot be negative"
    ]


def test_bad_whole_number_hint_fits_the_field():
    assert problems(MINIMAL.replace("per_cage: 2}", "per_cage: 0}")) == [
        "catalog t: switches[0].ports[0].per_cage: per_cage must be a positive whole number, got 0; e.g. 1, or 2 when a cage runs as two ports through a breakout cable"
    ]
    assert problems(MINIMAL.replace("ports_per_module: 2", "ports_per_module: two")) == [
        "catalog t: transceivers[0].ports_per_module: ports_per_module must be a positive whole number, got 'two'; e.g. 1, or 2 for a twin-port module"
    ]


def test_price_not_a_number():
    assert problems(MINIMAL.replace("price_usd: 6", "price_usd: cheap")) == [
        "catalog t: transceivers[1].price_usd: price_usd must be a number, got 'cheap'; write a plain number such as 1500 or 17.5"
    ]


def test_unknown_transceiver_sku_in_media():
    assert problems(MINIMAL.replace("gpu_transceiver: single", "gpu_transceiver: singel")) == [
        "catalog t: media[0].gpu_transceiver: unknown transceiver SKU 'singel'; transceivers in this catalog: single, twin"
    ]


def test_unknown_cable_sku_in_media():
    assert problems(MINIMAL.replace("cable: [fib15, fib30]", "cable: [fib15, fib99]")) == [
        "catalog t: media[1].cable: unknown cable SKU 'fib99'; cables in this catalog: fib15, fib30"
    ]


def test_unknown_tier_and_length_in_media():
    text = MINIMAL.replace("      - tier: gpu-leaf\n", "      - tier: gpu-spine\n        length: far\n")
    assert problems(text) == [
        "catalog t: media[0].tier: unknown link tier 'gpu-spine'; valid tiers: gpu-leaf, leaf-spine, spine-core, core-tier4, tier4-tier5, tier5-tier6 (or 1 to 6, or any)",
        "catalog t: media[0].length: unknown length class 'far'; valid classes: in-rack (<= 3 m), in-row (<= 15 m), cross-row (<= 30 m), cross-hall (<= 50 m), building (<= 100 m)",
    ]


def test_duplicate_sku():
    assert problems(MINIMAL.replace("sku: single", "sku: twin")) == [
        "catalog t: transceivers[1].sku: sku 'twin' is already used by transceivers[0]; give every SKU a unique name",
        "catalog t: media[0].gpu_transceiver: unknown transceiver SKU 'single'; transceivers in this catalog: twin",
    ]


def test_switch_needs_exactly_one_price():
    text = MINIMAL.replace("price_usd: 1000", "price_usd: 1000\n        price_per_port_usd: 10")
    assert problems(text) == [
        "catalog t: switches[0].price_usd: give exactly one of price_usd (per box) and price_per_port_usd; price_per_port_usd prices a box as radix × it (the paper's model)"
    ]


def test_radix_not_whole_cages():
    assert problems(MINIMAL.replace("radix: 64, per_cage: 2", "radix: 63, per_cage: 2")) == [
        "catalog t: switches[0].ports[0].per_cage: radix 63 is not a whole number of cages of 2 ports; per_cage must divide radix"
    ]


def test_bad_cable_kind():
    assert problems(MINIMAL.replace("kind: fiber\n        length_m: 15", "kind: rope\n        length_m: 15")) == [
        "catalog t: cables[0].kind: unknown cable kind 'rope'; valid kinds: dac, acc, aec, cat6, fiber"
    ]


def test_rule_without_media():
    text = MINIMAL.replace("      - transceiver: twin\n        cable: [fib15, fib30]\n", "      - name: nothing\n")
    assert problems(text) == ["catalog t: media[1]: a media rule needs a transceiver, a cable, or both; e.g. transceiver: <sku> for optics, cable: <sku> for copper"]


WITH_DAC = MINIMAL.replace("    media:\n", "      - sku: dac3\n        kind: dac\n        length_m: 3\n        price_usd: 1\n    media:\n")


def test_rule_mixes_copper_and_fiber():
    text = WITH_DAC + "      - cable: [dac3, fib15]\n"
    assert problems(text) == ["catalog t: media[2].cable: a rule's cables must be all copper or all fiber; split copper and fiber into separate rules"]


def test_copper_cable_with_transceiver():
    text = WITH_DAC + "      - transceiver: twin\n        cable: dac3\n"
    assert problems(text) == ["catalog t: media[2].transceiver: copper cable 'dac3' needs no transceiver; drop transceiver for a copper link, or use a fiber cable"]


def test_gpu_transceiver_outside_gpu_leaf():
    text = MINIMAL.replace("      - tier: gpu-leaf\n", "      - tier: leaf-spine\n")
    assert problems(text) == [
        "catalog t: media[0].gpu_transceiver: gpu_transceiver applies to gpu-leaf links only, but this rule does not match tier gpu-leaf; remove it or add gpu-leaf to tier"
    ]


def test_missing_switches_and_media():
    assert problems("name: x\n") == [
        "catalog t: switches: switches is required; give a list of switches entries",
        "catalog t: media: media is required; give a list of media entries",
    ]


def test_catalog_not_a_mapping():
    assert problems("- a\n- b\n") == ["catalog t: the catalog holds a list, not a mapping; write keys from: name, description, switches, transceivers, cables, nics, media, failure_rates"]


def test_every_problem_reported_at_once():
    text = MINIMAL.replace("price_usd: 1000", "price_usd: -1").replace("price_usd: 6", "price_usd: -6").replace("    name: tiny\n", "    name: tiny\n    extra: 1\n")
    assert len(problems(text)) == 3


# --- catalog against a spec ---------------------------------------------------------------


def test_radix_the_catalog_cannot_supply():
    cat = catalog.load_catalog("ndr-400g")
    assert spec_problems(cat, radix=32) == ["radix: catalog ndr-400g has no 400G switch with radix 32; it supplies 200G: radix 128; 400G: radix 64"]


def test_link_speed_the_catalog_cannot_supply():
    cat = catalog.load_catalog("paper")
    assert spec_problems(cat, link_speed=800) == ["link_speed: catalog paper has no switch with 800G ports; it supplies 400G: any radix"]


def test_no_media_for_a_link_tier():
    cat = parse(MINIMAL.replace("      - transceiver: twin\n        cable: [fib15, fib30]\n", ""))
    assert spec_problems(cat) == [
        "catalog t: media: no media rule for link tier leaf-spine (cross-row, <= 30 m) at 400G on switch sw64; add a media rule matching tier: leaf-spine"
    ]


def test_module_ports_must_fit_the_cage():
    """No rule can build the only port mode's links: the loader refuses the catalog, naming the mode and why."""
    assert problems(MINIMAL.replace("per_cage: 2", "per_cage: 1")) == [
        "catalog t: switches[0].ports[0]: sw64 offers 400G ports, but no media rule builds 400G links on it at any length "
        "(media[0].transceiver: twin has 2 ports per module but sw64 has 1 port(s) per cage at 400G); "
        "add a media rule with speed: 400 (transceivers at 400G, or a 400G copper cable), or remove this port mode"
    ]


def test_reach_too_short():
    cat = parse(MINIMAL.replace("reach_m: 50\n        ports_per_module: 2", "reach_m: 20\n        ports_per_module: 2"))
    assert spec_problems(cat) == ["catalog t: media[1].transceiver: twin reaches 20 m but leaf-spine links are cross-row (up to 30 m); use a longer-reach module"]


def test_no_cable_long_enough():
    cat = parse(MINIMAL.replace("cable: [fib15, fib30]", "cable: [fib15]"))
    assert spec_problems(cat) == [
        "catalog t: media[1].cable: no cable of this rule is long enough for leaf-spine links (cross-row, up to 30 m); the longest is fib15 (15 m); add a cable of at least 30 m"
    ]


def test_transceiver_speed_mismatch():
    cat = parse(MINIMAL.replace("sku: single\n        speed: 400", "sku: single\n        speed: 800"))
    assert spec_problems(cat) == ["catalog t: media[0].gpu_transceiver: single runs at 800G but the gpu-leaf links run at 400G; use a 400G transceiver for this link speed"]


# --- through the CLI: exit 2, clear message, nothing written ---------------------------------


def run_build(tmp_path, *args):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["build", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--out", str(out), *args], catch_exceptions=False)
    return res, out


def test_cli_bad_catalog_file(tmp_path):
    p = load_text(tmp_path, MINIMAL.replace("price_usd: 1000", "price_usd: -5"))
    res, out = run_build(tmp_path, "--catalog", str(p))
    assert res.exit_code == 2
    assert res.stderr == f"error: catalog {p}: switches[0].price_usd: price_usd must be 0 or more, got -5; prices, power and lengths cannot be negative\n"
    assert not out.exists()


def test_cli_catalog_yaml_syntax_error(tmp_path):
    p = load_text(tmp_path, "name: x\nswitches: [\n")
    res, out = run_build(tmp_path, "--catalog", str(p))
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: catalog: YAML syntax error in catalog '{p}' at line 3")
    assert not out.exists()


def test_cli_radix_not_in_catalog(tmp_path):
    res, out = run_build(tmp_path, "--catalog", "ndr-400g", "--radix", "128")
    assert res.exit_code == 2
    assert res.stderr == "error: radix: catalog ndr-400g has no 400G switch with radix 128; it supplies 200G: radix 128; 400G: radix 64\n"
    assert not out.exists()


def test_cli_catalog_without_media_for_a_tier(tmp_path):
    p = load_text(tmp_path, MINIMAL.replace("      - transceiver: twin\n        cable: [fib15, fib30]\n", ""))
    res, out = run_build(tmp_path, "--catalog", str(p))
    assert res.exit_code == 2
    assert res.stderr == f"error: catalog {p}: media: no media rule for link tier leaf-spine (cross-row, <= 30 m) at 400G on switch sw64; add a media rule matching tier: leaf-spine\n"
    assert not out.exists()


def test_manufacturer_and_interface_type_are_read():
    text = MINIMAL.replace("        power_w: 100\n", "        power_w: 100\n        manufacturer: NVIDIA\n        interface_type: infiniband-ndr\n")
    cat = catalog.parse_catalog(yaml.safe_load(text), "t")
    assert (cat.switches[0].manufacturer, cat.switches[0].interface_type) == ("NVIDIA", "infiniband-ndr")


def test_bad_interface_type():
    text = MINIMAL.replace("        power_w: 100\n", "        power_w: 100\n        interface_type: InfiniBand NDR\n")
    assert problems(text) == [
        "catalog t: switches[0].interface_type: 'InfiniBand NDR' is not a NetBox interface type slug; lower-case letters, digits, '.' and '-', e.g. infiniband-ndr or 400gbase-x-osfp"
    ]


def test_management_switches_never_serve_the_compute_fabric(tmp_path):
    """A role: management switch (the in-band SN4600C at 100G) is not picked for a 100G GPU fabric, nor offered in hints."""
    res = CliRunner().invoke(main, ["build", "demo", "--catalog", "ndr-400g", "--link-speed", "100", "--radix", "64", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.exception is None or isinstance(res.exception, SystemExit)
    assert "catalog ndr-400g has no switch with 100G ports" in res.output and "1G" not in res.output
    assert not (tmp_path / "o").exists()


def test_switch_role_is_checked():
    bad = {"name": "t", "switches": [{"sku": "S", "ports": [{"speed": 400, "radix": 64}], "price_usd": 1, "role": "spine"}], "media": []}
    with pytest.raises(InputError) as e:
        catalog.parse_catalog(bad, "t")
    assert any(p.path.endswith("switches[0].role") and "valid roles: compute" in p.hint for p in e.value.problems)
