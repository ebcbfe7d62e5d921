"""``diff --write-names DIR``: the names map of a floor (:mod:`topogen.asbuilt.namemap`) as files.

``node-name-map`` (``ibnetdiscover --node-name-map``, OpenSM's ``node_name_map_name``),
``names.csv`` (the ``--names`` file of the next ``topogen diff``, LLDP) and ``manifest.json``,
written atomically under the output contract (:mod:`topogen.util.outdir`).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from topogen import __version__
from topogen.asbuilt import Found
from topogen.asbuilt.namemap import NAMES_CSV, NODE_NAME_MAP, names_rows, node_name_map_lines
from topogen.exports.files import digest, write_output_text
from topogen.util.outdir import atomic_dir


def write(out_dir: str | Path, found: Found, names: dict[str, str], undecided: set[str] = frozenset(), spec_sha: str = "", force: bool = False) -> list[Path]:
    """Write ``node-name-map``, ``names.csv`` and ``manifest.json`` into ``out_dir`` (the output contract)."""
    with atomic_dir(out_dir, force=force) as tmp:
        files = [tmp / NODE_NAME_MAP, tmp / NAMES_CSV]
        write_output_text(files[0], "\n".join(node_name_map_lines(found, names, undecided)) + "\n")
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["as_built", "plan"])
        w.writerows(names_rows(found, names))
        write_output_text(files[1], buf.getvalue())
        entries = []
        for p in files:
            size, sha = digest(p)
            entries.append({"path": p.name, "bytes": size, "sha256": sha})
        write_output_text(tmp / "manifest.json", json.dumps({"generator": f"topogen {__version__}", "spec_sha256": spec_sha, "files": entries}, indent=2) + "\n")
    return [Path(out_dir) / p.name for p in files]
