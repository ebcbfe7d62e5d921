"""Reading a YAML input file (spec, catalog, workload preset): it means what the user wrote.

The loader is PyYAML's safe loader with YAML 1.2 core-schema scalars instead of YAML 1.1's:

* ``3:1`` and ``1:30`` stay strings (no base-60 integers), ``2024-01-01`` stays a string
  (no dates), ``yes``/``no``/``on``/``off`` stay strings (only ``true``/``false`` are
  booleans), ``010`` is ten (octal is ``0o10``);
* an integer longer than :data:`MAX_INT_DIGITS` digits is refused at its line;
* a key given twice in one mapping is an error naming both lines;
* the value of a ``name:`` key is text as written (``name: 0x1F`` is ``0x1F``, not 31;
  ``name: 1e3`` is ``1e3``).

And it is bounded: the file must be a regular file of at most :data:`MAX_YAML_BYTES`,
the document at most :data:`MAX_VALUES` values once aliases are expanded (a
"billion laughs" alias bomb is refused before it is built), and nesting too deep for
the parser is reported, not a traceback. Every failure is an :class:`InputError`
naming the file and, where there is one, the line.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from topogen.util.errors import InputError, Problem, show
from topogen.util.inputs import read_text

MAX_YAML_BYTES = 1 << 20  # the largest bundled catalog is ~8 KB
MAX_VALUES = 100_000  # scalars, lists and mappings, aliases expanded
MAX_INT_DIGITS = 30

INT_TAG = "tag:yaml.org,2002:int"
STR_TAG = "tag:yaml.org,2002:str"
AS_WRITTEN = (INT_TAG, "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool")  # under a ``name:`` key these stay text
INT_RE = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")


class Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema implicit types, bounded integers, no duplicate keys."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, ScalarNode) and key_node.value == "name" and isinstance(value_node, ScalarNode) and value_node.tag in AS_WRITTEN:
                    value_node.tag = STR_TAG  # a name is text as written: name: 0x1F is "0x1F", not 31
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # unhashable: the base class reports it
                    continue
                if first is not None:
                    raise ConstructorError("while reading a mapping", node.start_mark, f"key {_short(key)} is given twice (first at line {first.line + 1})", key_node.start_mark)
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node):
        text = self.construct_scalar(node)
        digits = text.lstrip("+-")
        if len(digits) > MAX_INT_DIGITS:
            raise ConstructorError(None, None, f"an integer of {len(digits):,} digits; at most {MAX_INT_DIGITS} are read", node.start_mark)
        if not INT_RE.fullmatch(text):
            raise ConstructorError(None, None, f"{_short(text)} is not an integer", node.start_mark)
        if text.startswith(("0o", "0x")):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text)


Loader.add_constructor(INT_TAG, Loader.construct_yaml_int)
Loader.yaml_implicit_resolvers = {}  # YAML 1.2 core schema only (the 1.1 ones are SafeLoader's)
for _tag, _regexp, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    (INT_TAG, r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+0123456789."),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:merge", r"^(?:<<)$", "<"),
):
    Loader.add_implicit_resolver(_tag, re.compile(_regexp), list(_first))


def _short(value: Any) -> str:
    return show(value)


def expanded_size(root: Node, limit: int) -> int:
    """Values in the document once aliases are expanded, counting up to just past ``limit``.

    An alias is the same node object reached twice, so sizes are memoised per node:
    linear in the nodes written, however many times they are referenced. A node that
    contains itself counts as unbounded.
    """
    size: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        k = id(node)
        if k in size:
            continue
        kids = [] if isinstance(node, ScalarNode) else [n for pair in node.value for n in pair] if isinstance(node, MappingNode) else list(node.value) if isinstance(node, SequenceNode) else []
        if done:
            busy.discard(k)
            size[k] = min(limit + 1, 1 + sum(size[id(c)] for c in kids))
            continue
        if k in busy:
            return limit + 1  # recursive structure
        busy.add(k)
        stack.append((node, True))
        for c in kids:
            if id(c) in busy:
                return limit + 1
            if id(c) not in size:
                stack.append((c, False))
    return size[id(root)]


def parse_yaml(text: str, field: str, label: str) -> Any:
    """Parse YAML text with :class:`Loader`; every failure is an InputError naming ``label``."""
    loader = None
    try:
        loader = Loader(text)  # the reader checks the characters here
        node = loader.get_single_node()
        if node is None:
            return None
        n = expanded_size(node, MAX_VALUES)
        if n > MAX_VALUES:
            raise InputError([Problem(field, f"{label} expands to more than {MAX_VALUES:,} values (through YAML aliases)", "write the values out; a spec or catalog needs a few hundred")])
        return loader.construct_document(node)
    except ConstructorError as exc:
        raise InputError([Problem(field, f"YAML error in {label}{_where(exc)}: {_problem(exc)}", "fix the value at that line")]) from None
    except yaml.YAMLError as exc:
        raise InputError([Problem(field, f"YAML syntax error in {label}{_where(exc)}: {_problem(exc)}", "fix the YAML syntax")]) from None
    except RecursionError:
        raise InputError([Problem(field, f"{label} is nested too deeply to read", "a spec or catalog nests a few levels at most")]) from None
    except MemoryError:
        raise InputError([Problem(field, f"{label} is too large to read into memory", "give the spec or catalog file itself")]) from None
    finally:
        if loader is not None:
            loader.dispose()


def _where(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    ctx_mark = getattr(exc, "context_mark", None)
    if ctx_mark is not None and getattr(exc, "context", None) and (not mark or ctx_mark.line != mark.line):
        where += f" ({exc.context} at line {ctx_mark.line + 1})"
    return where


def _problem(exc: yaml.YAMLError) -> str:
    return getattr(exc, "problem", None) or str(exc).splitlines()[0]


def read_yaml(path, field: str, label: str, missing: Problem) -> Any:
    """Parse the YAML file ``path``; a missing file raises ``missing``, other failures name ``label``.

    ``field`` is the input path the problems are reported under (``spec``, ``catalog``).
    Only a regular file of at most :data:`MAX_YAML_BYTES` is read.
    """
    text = read_text(path, field, label, MAX_YAML_BYTES, missing, what="YAML file")
    return parse_yaml(text, field, label)

