"""JSON Schema (draft 2020-12) of the input files, generated from the parsers' field tables.

:func:`schema_for` turns a root table and its nested tables (:class:`~topogen.spec.fields.Field`)
into one schema document; :func:`spec_schema` is the cluster spec's. The catalog's lives beside
its tables (:func:`topogen.spec.catalog.catalog_schema`). ``topogen schema spec|catalog`` prints
them; the bundled presets and catalogs name the copies shipped in ``templates/schema/`` in a
``# yaml-language-server: $schema=...`` line, so editors complete and check the fields.

The schema states what a file may hold, field by field; cross-field rules (``gpus`` a multiple of
``hb_domain``, a design that fits its tiers, SKUs that a media rule names) stay with the parser.
"""

from __future__ import annotations

import json
from typing import Any

from topogen.spec import fields as f
from topogen.spec.cluster import NAME_RE, RATIO_RE
from topogen.spec.counts import MAX_TIERS, link_tier_name
from topogen.spec.fields import Field
from topogen.spec.addressing import ADDRESSING_FIELDS
from topogen.spec.layout import LAYOUT_FIELDS
from topogen.spec.spares import RULE_FIELDS, SPARES_FIELDS
from topogen.spec.naming import NAMING_FIELDS
from topogen.spec.networks import SCHEMA_DEFS as NETWORK_DEFS
from topogen.spec.workload import BATCH_RE, CHECKPOINT_FIELDS, GPU_FIELDS, MODEL_FIELDS, MOE_FIELDS, NUMBER_RE, PARALLEL_FIELDS, SCALE_UP_FIELDS, WORKLOAD_FIELDS

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ROLES = ("leaf", "spine", "core", "tier4", "tier5", "tier6")

_NUMBER_TEXT = {"type": "string", "pattern": NUMBER_RE.pattern}
_QUANTITY = {"anyOf": [{"type": "number"}, _NUMBER_TEXT]}
_PER_TIER_TEXT = r"^\s*[0-9]+\s*([/,]\s*[0-9]+\s*)*$"
_RATIO = {"type": "string", "pattern": "^" + RATIO_RE.pattern + "$"}
_RATIO_TIERS = r"^\s*[0-9]{1,9}\s*:\s*[0-9]{1,9}\s*(/\s*[0-9]{1,9}\s*:\s*[0-9]{1,9}\s*)*$"


def _kind(field: Field, kind: str | None = None) -> dict[str, Any]:
    """The schema of one value of ``kind`` (default: the field's own)."""
    kind = kind or field.kind
    if kind == "int":
        out: dict[str, Any] = {"type": "integer"}
    elif kind == "number":
        out = {"type": "number"}
    elif kind == "quantity":
        return dict(_QUANTITY)
    elif kind == "quantity-list":
        return {"type": "array", "items": _QUANTITY}
    elif kind == "number-list":
        return {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}, "minItems": 1}
    elif kind in ("text", "catalog"):
        return {"type": "string", "minLength": 1}
    elif kind == "name":
        return {"type": "string", "pattern": "^" + NAME_RE.pattern + "$"}
    elif kind == "ref":
        return {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._/+()-]{0,79}$"}
    elif kind == "choice":
        return {"enum": list(field.choices)}
    elif kind == "choice-list":
        return {"type": "array", "items": {"enum": list(field.choices)}, "uniqueItems": True}
    elif kind == "bool":
        return {"type": "boolean"}
    elif kind in ("per-tier-int", "radix"):
        return {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": _PER_TIER_TEXT}, {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1}]}
    elif kind == "radix-or-any":
        return {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "any"}]}
    elif kind == "ratio":
        roles = {"type": "object", "propertyNames": {"enum": list(ROLES)}, "additionalProperties": _RATIO}
        return {"anyOf": [{"type": "string", "pattern": _RATIO_TIERS}, {"type": "array", "items": _RATIO, "minItems": 1}, roles]}
    elif kind == "batch":
        return {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, _NUMBER_TEXT, {"type": "string", "pattern": BATCH_RE.pattern}]}
    elif kind == "section":
        return {"$ref": f"#/$defs/{field.sub}"}
    elif kind == "preset-or-section":
        return {"anyOf": [{"type": "string", "minLength": 1, "description": "a preset name or a .yaml path"}, {"$ref": f"#/$defs/{field.sub}"}]}
    elif kind == "list-of":
        return {"type": "array", "items": {"$ref": f"#/$defs/{field.sub}"}}
    elif kind == "sources":
        return {"type": "object", "additionalProperties": {"type": "string"}}
    elif kind == "filter":
        one = _kind(field, field.item)
        return {"anyOf": [one, {"type": "array", "items": one, "minItems": 1}, {"const": "any"}]}
    elif kind == "tier":
        return {"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_TIERS}, {"enum": [link_tier_name(t) for t in range(1, MAX_TIERS + 1)]}]}
    else:
        raise ValueError(f"field {field.name}: unknown kind {kind!r}")
    if field.minimum is not None:
        out["minimum"] = field.minimum
    return out


def describe(field: Field) -> str:
    """The field's description with its default, as the schema and the reference show it."""
    if field.required:
        return f"{field.doc} Required."
    if field.default is not None:
        return f"{field.doc} Default: {json.dumps(field.default)}."
    if field.default_doc:
        return f"{field.doc} Default: {field.default_doc}."
    return field.doc


def object_schema(table: tuple[Field, ...], description: str = "") -> dict[str, Any]:
    """A closed object of the table's keys (unknown keys are errors, as in the parser)."""
    props = {}
    for fld in table:
        p = _kind(fld)
        p = {**p, "description": describe(fld)}
        if fld.default is not None:
            p["default"] = fld.default
        if fld.example is not None:
            p["examples"] = [fld.example]
        props[fld.name] = p
    out: dict[str, Any] = {"type": "object"}
    if description:
        out["description"] = description
    out["properties"] = props
    required = [fld.name for fld in table if fld.required]
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def schema_for(title: str, root: tuple[Field, ...], defs: dict[str, tuple[Field, ...]], description: str) -> dict[str, Any]:
    """One schema document: the root table, nested tables under ``$defs``."""
    doc = {"$schema": DRAFT, "title": title}  # no $id: the files are found by path (templates/schema/), not by a URL
    doc.update(object_schema(root, description))
    doc["$defs"] = {name: object_schema(table) for name, table in defs.items()}
    return doc


SPEC_DEFS: dict[str, tuple[Field, ...]] = {
    "workload": WORKLOAD_FIELDS,
    "model": MODEL_FIELDS,
    "moe": MOE_FIELDS,
    "gpu": GPU_FIELDS,
    "scale_up": SCALE_UP_FIELDS,
    "parallelism": PARALLEL_FIELDS,
    "checkpoint": CHECKPOINT_FIELDS,
    "layout": LAYOUT_FIELDS,
    "spares": SPARES_FIELDS,
    "spare_rule": RULE_FIELDS,
    "naming": NAMING_FIELDS,
    "addressing": ADDRESSING_FIELDS,
    **NETWORK_DEFS,
}


def spec_schema() -> dict[str, Any]:
    """The cluster spec's schema."""
    return schema_for("topogen cluster spec", f.SPEC_FIELDS, SPEC_DEFS, "A GPU cluster for topogen build: N GPUs in HB domains of K, switch radix, link speed, architectures, and optional workload, layout and addressing sections.")


def dumps(schema: dict[str, Any]) -> str:
    """The schema as the shipped file holds it: sorted keys are not used, so fields keep the table's order."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
