"""The names map of a floor: every device read under another name, by its GUID or chassis ID, with the plan's name.

``topogen diff --write-names DIR`` writes, from how :mod:`.identity` named the
devices of an as-built reading:

* ``node-name-map``: one line ``0x<node guid> "<plan name>"`` per InfiniBand node
  (switches and adapters): the format of ``ibnetdiscover --node-name-map`` and of
  OpenSM's ``node_name_map_name`` (``opensm.conf``), so the next discovery prints the
  plan's names; devices the wiring could not tell apart are marked by a comment;
* ``names.csv``: ``as_built,plan``: the ``--names`` file of ``topogen diff`` (the
  as-built side the chassis ID or GUID where one was read, else the name read), for
  LLDP readings and for the next diff;
* ``manifest.json``, as every topogen output directory (:mod:`topogen.util.outdir`).

Generators (:func:`node_name_map_lines`, :func:`names_rows`) are pure;
:func:`topogen.exports.infiniband.names.write` writes the directory atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from topogen import __version__
from topogen.asbuilt import Found

NODE_NAME_MAP = "node-name-map"
NAMES_CSV = "names.csv"


def _key(name: str) -> tuple:
    return (len(name), name)


def node_name_map_lines(found: Found, names: dict[str, str], undecided: set[str] = frozenset()) -> Iterator[str]:
    """``0x<guid> "<plan name>"`` per node whose name differs and whose node GUID was read, in plan-name order."""
    yield f"# node name map written by topogen {__version__} (topogen diff --write-names): node GUID -> the plan's name"
    yield "# for ibnetdiscover --node-name-map FILE, and OpenSM: node_name_map_name FILE in opensm.conf"
    rows = []
    for device, plan in names.items():
        ident = found.ids.get(device, "")
        if ident.startswith("guid 0x"):
            rows.append((plan, ident[5:], device))
    for plan, guid, device in sorted(rows, key=lambda r: _key(r[0])):
        if device in undecided:
            yield f"# {plan}: the wiring does not tell it from another device (see topogen diff); check the chassis label"
        yield f'{guid} "{plan}"'


def names_rows(found: Found, names: dict[str, str]) -> list[tuple[str, str]]:
    """``(as-built, plan)`` per device whose name differs: its chassis ID or GUID when read, else its name."""
    rows = []
    for device, plan in names.items():
        ident = found.ids.get(device, "")
        rows.append((ident.rsplit(" ", 1)[-1] if ident else device, plan))
    return sorted(rows, key=lambda r: _key(r[1]))
