"""Bundled templates (cluster presets, hardware catalogs, ...): the one way to find them.

The repository keeps them in the top-level ``templates/<kind>/<name>.yaml``; the wheel
ships that folder as the data package ``topogen.templates`` (see ``setup.py``), and
both an editable checkout and an installed wheel reach it through
:mod:`importlib.resources`. No other module builds a path to a bundled template.

A *kind* is a subfolder: ``clusters`` (presets), ``catalogs``, and any kind another
feature adds (``models``, ``gpus``, ...) without touching this module.
"""

from __future__ import annotations

import functools

import difflib
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

PACKAGE = "topogen.templates"
SUFFIX = ".yaml"


@dataclass(frozen=True, slots=True)
class Template:
    """One bundled template: its name (the file stem) and the first line of its leading comment."""

    name: str
    description: str


def template_dir(kind: str) -> Traversable:
    """The folder of one template kind (it may not exist: then nothing is bundled)."""
    return resources.files(PACKAGE).joinpath(kind)


SCHEMA_MODELINE = "yaml-language-server:"  # first line of bundled presets and catalogs: the schema editors use


def template_names(kind: str) -> list[str]:
    """Names of the bundled templates of ``kind``, sorted."""
    return list(_names(kind))


@functools.lru_cache(maxsize=64)
def _names(kind: str) -> tuple[str, ...]:
    """The bundled files do not change while the program runs: listed once per kind (a search checks thousands of specs)."""
    d = template_dir(kind)
    if not d.is_dir():
        return ()
    return tuple(sorted(p.name[: -len(SUFFIX)] for p in d.iterdir() if p.name.endswith(SUFFIX) and p.is_file()))


def template_path(kind: str, name: str) -> Traversable | None:
    """The bundled template ``kind/name.yaml``, or ``None`` when there is no such template.

    Installed from a wheel or a checkout, this is a :class:`pathlib.Path`.
    """
    if name not in template_names(kind):
        return None
    return template_dir(kind).joinpath(name + SUFFIX)


def list_templates(kind: str) -> list[Template]:
    """Every bundled template of ``kind`` with its one-line description."""
    out = []
    for name in template_names(kind):
        text = template_dir(kind).joinpath(name + SUFFIX).read_text(encoding="utf-8")
        out.append(Template(name, describe(text)))
    return out


def describe(text: str, width: int = 120) -> str:
    """A one-line description from a YAML file's leading ``#`` comment (empty when it has none).

    The first sentence of the first comment paragraph. When longer than ``width``
    it is cut at a phrase boundary, never inside a `code span`, parentheses or
    quotes: before its first colon (the comments open with "A <what>: <details>"),
    else at its last comma or semicolon that fits, else at a word, marked ``…``.
    """
    para: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("#"):
            break
        s = s.lstrip("#").strip()
        if s.startswith(SCHEMA_MODELINE):
            continue  # the editor's schema line, not prose
        if not s:
            if para:
                break
            continue
        para.append(s)
    text = " ".join(para)
    ends = [i for i in _top_level(text, ". ")]
    desc = (text[: ends[0] + 1] if ends else text).rstrip(":,; ")
    if len(desc) <= width:
        return desc
    colon = [i for i in _top_level(desc, ": ") if i <= width]
    if colon:
        return desc[: colon[0]]
    clause = [i for i in (*_top_level(desc, ", "), *_top_level(desc, "; ")) if i <= width]
    if clause:
        return desc[: max(clause)]
    return desc[: width - 1].rsplit(" ", 1)[0] + "…"


def _top_level(text: str, sep: str) -> list[int]:
    """Positions of ``sep`` in ``text`` outside `code`, (parentheses), [brackets] and "quotes"."""
    out, depth, code, quote = [], 0, False, False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch == '"':
            quote = not quote
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif not depth and not quote and text.startswith(sep, i):
            out.append(i)
    return out


def did_you_mean(name: str, choices: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or an empty string."""
    close = difflib.get_close_matches(str(name)[:200], choices, n=2, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
