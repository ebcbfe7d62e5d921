"""JSON and YAML scalar texts of whole string columns, as ``json.dumps`` and PyYAML's dumper write them.

The SONiC, NVUE, netplan and Air renderers write their JSON/YAML text
directly from numpy columns (a dict per switch through ``json``/PyYAML takes
minutes at 131,072 GPUs); these helpers give each string the exact text the
straightforward rendering would give it, so the files stay byte-identical to
it (``tests/test_day0_configs.py`` compares both on small fabrics).

Fast path: a column of plain names (letters, digits, ``_ . : / -``, starting
with a letter, or an IPv4 address with an optional length) needs no quoting
in either format; anything else goes through ``json.dumps`` or ``yaml.dump``
one distinct value at a time.
"""

from __future__ import annotations

import json
import re

import numpy as np
import yaml

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_NAME = r"[A-Za-z][A-Za-z0-9_./-]*(?::[A-Za-z0-9_./-]+)*"
_IPV4 = r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?"
_YAML_PLAIN = re.compile(rf"(?:{_NAME}|{_IPV4})")
_IPV4_LINES = re.compile(rf"(?:{_IPV4}\n)*")
_NOT_LETTER_FIRST = re.compile(r"(?:^|\n)[^A-Za-z]")
_KEEP_PLAIN = str.maketrans("", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:-")
# plain-looking words YAML 1.1 reads as booleans or null: PyYAML quotes them
_YAML_WORDS = frozenset("y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split())


def _objects(values) -> np.ndarray:
    return np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) or values.dtype != object else values


def json_inner(values) -> np.ndarray:
    """``json.dumps(v)`` of every string of ``values`` without its quotes (object array out): the text between the quotes of a template."""
    a = _objects(values)
    if not len(a):
        return a
    text = "".join(a.tolist())
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:  # nothing json.dumps escapes (ensure_ascii: all but printable ASCII, and " \\)
        return a
    return np.array([json.dumps(v)[1:-1] for v in a.tolist()], dtype=object)


def int_text(values) -> np.ndarray:
    """Decimal texts of an integer column (object array), each distinct value formatted once."""
    a = np.asarray(values, dtype=np.int64)
    if not len(a):
        return np.empty(0, dtype=object)
    uniq, inv = np.unique(a, return_inverse=True)
    return np.array([str(x) for x in uniq.tolist()], dtype=object)[inv.reshape(-1)]


def yaml_scalar(value: str) -> str:
    """The text PyYAML's block dumper gives the string ``value`` (plain, or quoted when YAML would read it otherwise)."""
    if value not in _YAML_WORDS and _YAML_PLAIN.fullmatch(value):
        return value
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=False)
    return text.removesuffix("\n...\n").removesuffix("\n")


def yaml_strings(values) -> np.ndarray:
    """:func:`yaml_scalar` of every string of ``values`` (object array out): one check per distinct value that is not a plain name."""
    a = _objects(values)
    if not len(a):
        return np.empty(0, dtype=object)
    values = a.tolist()
    if _YAML_WORDS.isdisjoint(values):
        text = "\n".join(values) + "\n"
        # only name characters, no empty value, no ':' at a value's end; then every value starts with a letter, or is an address
        if len(text.translate(_KEEP_PLAIN)) == len(values) and "\n\n" not in text and ":\n" not in text and not text.startswith("\n"):
            if _NOT_LETTER_FIRST.search(text.removesuffix("\n")) is None or _IPV4_LINES.fullmatch(text):
                return a
    plain = np.fromiter((v not in _YAML_WORDS and _YAML_PLAIN.fullmatch(v) is not None for v in a.tolist()), bool, len(a))
    out = a.copy()
    seen: dict[str, str] = {}
    for i in np.flatnonzero(~plain).tolist():
        v = a[i]
        if v not in seen:
            seen[v] = yaml_scalar(v)
        out[i] = seen[v]
    return out
