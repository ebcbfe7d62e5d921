"""Write the documentation's field references from the JSON Schema that ``topogen schema`` prints.

``docs/reference/spec.md`` and ``docs/reference/catalog.md`` are generated, never edited: the
schema is generated from the parsers' field tables, so the reference, the schema and the parser
cannot drift apart. Run ``python tools/docs_reference.py`` after changing a field table;
``--check`` exits 1 when a page is stale. ``tests/test_docs_reference.py`` runs the check, and
``mkdocs.yml`` loads this file as a hook, so ``mkdocs build`` refuses a stale page too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"spec": ROOT / "docs" / "reference" / "spec.md", "catalog": ROOT / "docs" / "reference" / "catalog.md"}

INTRO = {
    "spec": (
        "# Spec reference\n\n"
        "Every field of a cluster spec, generated from `topogen schema spec` (the JSON Schema the\n"
        "parser's field tables produce; the bundled presets name it in their first line, so an\n"
        "editor with a YAML language server completes and checks fields). Unknown keys are errors.\n"
        "[Writing a spec](../spec.md) shows whole specs; [Architectures](../architectures.md)\n"
        "explains what the fields do to the wiring. Cross-field rules (`gpus` a whole number of\n"
        "HB domains, a design that fits its tiers) are the parser's; `topogen build` reports them.\n"
    ),
    "catalog": (
        "# Catalog reference\n\n"
        "Every field of a hardware catalog, generated from `topogen schema catalog` (the JSON Schema\n"
        "the catalog parser's field tables produce). [BOM and catalogs](../bom.md) explains how the\n"
        "BOM uses them; `templates/catalogs/` holds the bundled catalogs, each a worked example.\n"
    ),
}


def schema(kind: str) -> dict[str, Any]:
    """The schema document ``topogen schema KIND`` prints."""
    if kind == "spec":
        from topogen.spec.schema import spec_schema

        return spec_schema()
    from topogen.spec.catalog import catalog_schema

    return catalog_schema()


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell: no pipe splits it, no angle bracket opens HTML."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _code(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return "`" + text.replace("|", "\\|") + "`"


def value_words(p: dict[str, Any]) -> str:
    """What a property may hold, in words, from its schema fragment."""
    if "$ref" in p:
        name = p["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name})"
    if "anyOf" in p:
        return " or ".join(dict.fromkeys(value_words(a) for a in p["anyOf"]))
    if "enum" in p:
        return "one of " + ", ".join(_code(v) for v in p["enum"])
    if "const" in p:
        return _code(p["const"])
    t = p.get("type")
    if t == "array":
        items = p.get("items", {})
        words = value_words(items)
        return "list of " + (f"({words})" if "anyOf" in items else words)
    if t == "object":
        if "propertyNames" in p:
            return "mapping of " + ", ".join(_code(v) for v in p["propertyNames"]["enum"]) + " to " + value_words(p.get("additionalProperties", {}))
        return "mapping of text"
    if t == "integer":
        lo, hi = p.get("minimum"), p.get("maximum")
        return "integer" + (f" {lo}..{hi}" if lo is not None and hi is not None else f" ≥ {lo}" if lo is not None else "")
    if t == "number":
        if "exclusiveMinimum" in p:
            return f"number > {p['exclusiveMinimum']}"
        return "number" + (f" ≥ {p['minimum']}" if "minimum" in p else "")
    if t == "string":
        return "text"
    return "any"


def split_default(description: str) -> tuple[str, str]:
    """The field's own words, and its default as the schema's description ends with it."""
    if description.endswith(" Required."):
        return description[: -len(" Required.")], "required"
    at = description.rfind(" Default: ")
    if at < 0:
        return description, ""
    return description[:at], description[at + len(" Default: "):].rstrip(".")


def table(obj: dict[str, Any]) -> list[str]:
    """One Markdown table: a row per property, in the schema's (the field table's) order."""
    rows = ["| field | value | default | meaning | example |", "|---|---|---|---|---|"]
    for name, p in obj["properties"].items():
        words, default = split_default(p.get("description", ""))
        if "default" in p:
            default = _code(p["default"])
        else:
            default = _cell(default)
        example = _code(p["examples"][0]) if p.get("examples") else ""
        rows.append(f"| `{name}` | {value_words(p)} | {default} | {_cell(words)} | {example} |")
    return rows


def render(kind: str) -> str:
    """The whole reference page for ``spec`` or ``catalog``."""
    doc = schema(kind)
    out = [INTRO[kind], "## Top level", "", _cell(doc.get("description", "")), "", *table(doc), ""]
    for name, obj in doc.get("$defs", {}).items():
        out += [f"## {name}", ""]
        if obj.get("description"):
            out += [_cell(obj["description"]), ""]
        out += [*table(obj), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def stale() -> list[str]:
    """The pages whose text differs from what the schema gives now."""
    return [str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path) for kind, path in PAGES.items() if not path.exists() or path.read_text(encoding="utf-8") != render(kind)]


def on_pre_build(config: Any, **_: Any) -> None:
    """MkDocs hook: a stale reference page fails the site build."""
    bad = stale()
    if bad:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"stale generated page(s): {', '.join(bad)}; run python tools/docs_reference.py")


def main(argv: list[str]) -> int:
    if "--check" in argv:
        bad = stale()
        for path in bad:
            print(f"stale: {path} (run python tools/docs_reference.py)", file=sys.stderr)
        return 1 if bad else 0
    for kind, path in PAGES.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(kind), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
