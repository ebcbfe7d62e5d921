"""The JSON Schema of the spec and the catalog: generated from the parsers' field tables, shipped, used by the presets.

* every bundled preset and catalog validates against it (the ``jsonschema`` library);
* the schema has exactly the keys the parsers accept, section by section, and each field's
  example passes both the schema and the parser (so neither can drift from the other);
* ``topogen schema spec|catalog`` prints what ``templates/schema/`` ships, and each preset's
  first line names that file (VS Code's YAML extension reads it).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from topogen.spec import catalog as cat
from topogen.spec import cluster, layout, workload
from topogen.spec.cluster import build_spec
from topogen.spec.schema import spec_schema
from topogen.spec.yamlfile import read_yaml
from topogen.util.errors import InputError, Problem
from topogen.util.resources import template_dir, template_names

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
SPEC = spec_schema()
CATALOG = cat.catalog_schema()
BASE = {"name": "s", "gpus": 64, "hb_domain": 8, "radix": 16}


def _validator(schema):
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _load(kind: str, name: str):
    path = template_dir(kind).joinpath(name + ".yaml")
    return read_yaml(path, kind, name, Problem(kind, "missing", ""))


@pytest.mark.parametrize("name", template_names("clusters"))
def test_every_preset_validates(name):
    errors = sorted(_validator(SPEC).iter_errors(_load("clusters", name)), key=str)
    assert errors == [], [e.message for e in errors]


@pytest.mark.parametrize("name", template_names("catalogs"))
def test_every_catalog_validates(name):
    errors = sorted(_validator(CATALOG).iter_errors(_load("catalogs", name)), key=str)
    assert errors == [], [e.message for e in errors]


def _props(schema, section=None):
    node = schema if section is None else schema["$defs"][section]
    return tuple(node["properties"])


def test_spec_schema_has_exactly_the_parser_keys():
    assert _props(SPEC) == cluster.ALLOWED_KEYS
    spec_fields = {f.name for f in dataclasses.fields(cluster.Spec)}
    assert set(cluster.ALLOWED_KEYS) - {"nic_ports"} <= spec_fields  # nic_ports is folded into planes
    assert _props(SPEC, "workload") == workload.WORKLOAD_KEYS
    assert _props(SPEC, "model") == workload.MODEL_KEYS
    assert _props(SPEC, "moe") == workload.MOE_KEYS
    assert _props(SPEC, "gpu") == workload.GPU_KEYS
    assert _props(SPEC, "parallelism") == workload.PARALLEL_KEYS
    assert _props(SPEC, "checkpoint") == workload.CHECKPOINT_KEYS
    assert _props(SPEC, "layout") == tuple(f.name for f in dataclasses.fields(layout.LayoutSpec))
    assert tuple(SPEC["required"]) == cluster.REQUIRED


def test_catalog_schema_has_exactly_the_parser_keys():
    assert _props(CATALOG) == cat.TOP_KEYS
    assert _props(CATALOG, "switch") == cat.SWITCH_KEYS
    assert _props(CATALOG, "port") == cat.PORT_KEYS
    assert _props(CATALOG, "transceiver") == cat.TRANSCEIVER_KEYS
    assert _props(CATALOG, "cable") == cat.CABLE_KEYS
    assert _props(CATALOG, "nic") == cat.NIC_KEYS
    assert _props(CATALOG, "media") == cat.RULE_KEYS


def _unknown_key_rejected(parse, data):
    with pytest.raises(InputError) as exc:
        parse({**data, "no_such_field": 1})
    return any("no_such_field" in p.path or "no_such_field" in p.message for p in exc.value.problems)


def test_parser_and_schema_both_reject_a_key_outside_the_tables():
    assert _unknown_key_rejected(lambda d: build_spec(d), BASE)
    assert not _validator(SPEC).is_valid({**BASE, "no_such_field": 1})
    demo = _load("catalogs", "paper")
    assert _unknown_key_rejected(lambda d: cat.parse_catalog(d, "t"), demo)
    assert not _validator(CATALOG).is_valid({**demo, "no_such_field": 1})


SPEC_EXAMPLES = [
    ({"name": "dgx-h100-su"}, True),
    ({"radix": "16/32"}, True),
    ({"link_speed": "200/400", "radix": 32}, True),
    ({"oversubscription": "3:1"}, True),
    ({"oversubscription": ["3:1"]}, True),
    ({"oversubscription": {"leaf": "3:1"}}, True),
    ({"planes": 2}, True),
    ({"homing": "dual", "nic_ports": 2}, True),
    ({"gpus_per_node": 4}, True),
    ({"catalog": "ndr-400g"}, True),
    ({"layout": {"rack_u": 42, "lengths_m": [1, 3, 10, 30]}}, True),
    ({"workload": {"model": "gpt-3-175b", "batch": "512x2048", "parallelism": {"tp": 8, "dp": "zero1"}}}, True),
    ({"workload": {"model": "gpt-3-175b", "checkpoint": {"write_GBps": 273, "path": "storage-fabric"}}}, True),
    ({"arch": "rail-only", "rail_packing": "dedicated"}, True),
    ({"backup_nodes": 1}, True),
    # invalid for both
    ({"radixx": 16}, False),
    ({"arch": "fat-tree"}, False),
    ({"gpus": "many"}, False),
    ({"oversubscription": "three to one"}, False),
    ({"layout": {"leaf_racks": "left"}}, False),
    ({"workload": {"model": "gpt-3-175b", "parallelism": {"dp": "pipedream"}}}, False),
    ({"workload": {"model": "gpt-3-175b", "checkpoint": {"path": "nfs"}, "write_s": 5}}, False),
    ({"homing": "triple"}, False),
]


@pytest.mark.parametrize("extra, ok", SPEC_EXAMPLES, ids=[json.dumps(e)[:60] for e, _ in SPEC_EXAMPLES])
def test_schema_and_parser_agree_on_values(extra, ok):
    data = {**BASE, **extra}
    assert _validator(SPEC).is_valid(data) is ok
    try:
        build_spec(copy.deepcopy(data))
        parsed = True
    except InputError:
        parsed = False
    assert parsed is ok


def _examples(schema):
    for name, node in [(None, schema), *schema["$defs"].items()]:
        for key, prop in node["properties"].items():
            for ex in prop.get("examples", []):
                yield name, key, ex, prop


def test_every_example_validates_against_its_own_field():
    for schema in (SPEC, CATALOG):
        for section, key, ex, prop in _examples(schema):
            sub = {**prop, "$defs": schema["$defs"]}
            assert jsonschema.Draft202012Validator(sub).is_valid(ex), (section, key, ex)


def test_every_spec_field_is_documented_with_a_default_or_required():
    for section, node in [(None, SPEC), *SPEC["$defs"].items(), *CATALOG["$defs"].items()]:
        for key, prop in node["properties"].items():
            assert prop["description"].strip(), (section, key)


@pytest.mark.parametrize("kind", ["spec", "catalog"])
def test_shipped_schema_is_what_topogen_schema_prints(kind):
    out = subprocess.run([sys.executable, "-m", "topogen", "schema", kind], capture_output=True, text=True, check=True).stdout
    assert out == (TEMPLATES / "schema" / f"{kind}.schema.json").read_text(encoding="utf-8")
    assert json.loads(out)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("kind, schema", [("clusters", "spec"), ("catalogs", "catalog")])
def test_presets_name_the_schema_in_their_first_line(kind, schema):
    for name in template_names(kind):
        first = (TEMPLATES / kind / f"{name}.yaml").read_text(encoding="utf-8").splitlines()[0]
        assert first == f"# yaml-language-server: $schema=../schema/{schema}.schema.json", name
        assert (TEMPLATES / kind / f"../schema/{schema}.schema.json").resolve().is_file()


def test_unknown_schema_kind_exits_2():
    r = subprocess.run([sys.executable, "-m", "topogen", "schema", "workload"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "'spec'" in r.stderr and "'catalog'" in r.stderr and "Traceback" not in r.stderr
