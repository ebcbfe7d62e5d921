"""``report.html``: summary.json's ``decision`` as one self-contained page (inline SVG, no external assets) that prints.

:func:`render` takes summary.json (as ``topogen build`` wrote it) and returns the
page; :func:`export` writes it into a build, and ``topogen report BUILD_DIR``
renders a build directory's summary.json again. Every figure is a cell that
carries its key in summary.json and its raw value (``data-key``, ``data-value``),
so a test reads the page back and compares each with summary.json.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Mapping

from topogen import __version__
from topogen.analysis import decision
from topogen.spec.catalog import load_catalog
from topogen.exports.files import digest, write_output_text
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError, Problem
from topogen.util.outdir import atomic_dir

ARCH_COLORS = {"rail-optimized": "#4C72B0", "rail-only": "#DD8452"}
CSS = """
@page { size: A4; margin: 14mm; }
body { font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 10.5pt; color: #222; max-width: 190mm; margin: 0 auto; }
h1 { font-size: 17pt; margin: 0 0 4pt 0; } h2 { font-size: 12.5pt; margin: 14pt 0 4pt 0; border-bottom: 1px solid #bbb; }
p.rec { font-size: 12.5pt; font-weight: bold; background: #eef4ea; border-left: 5px solid #55A868; padding: 6pt 8pt; }
table { border-collapse: collapse; width: 100%; margin: 4pt 0; page-break-inside: avoid; }
th, td { border: 1px solid #ccc; padding: 2.5pt 5pt; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; } thead th { background: #f0f0f0; }
.small { font-size: 8.5pt; color: #555; } ul { margin: 2pt 0 2pt 14pt; padding: 0; } svg { display: block; margin: 4pt 0; }
section { page-break-inside: avoid; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(key: str, v: Any) -> str:
    if v is None:
        return "n/a"
    if key.endswith("usd"):
        return f"${v:,.0f}"
    if key == "power_w":
        return f"{v / 1000:,.1f} kW"
    if key.endswith("_s"):
        return f"{v:.4f} s"
    if key in ("slowest_pair", "mean_pair"):
        return f"{100 * v:.1f} %"
    if key == "bus_bandwidth_GBps":
        return f"{v:,.2f} GB/s"
    if key == "expected_per_month" or key == "expected_failures_per_month":
        return f"{v:,.4f}"
    if isinstance(v, float):
        return f"{v:,.4g}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _cell(path: str, key: str, v: Any) -> str:
    raw = "" if v is None else repr(v) if isinstance(v, float) else str(v)
    return f'<td data-key="{_e(path)}" data-value="{_e(raw)}">{_e(_fmt(key, v))}</td>'


def _bars(title: str, key: str, side: Mapping[str, Mapping[str, Any]]) -> str:
    """A horizontal bar per architecture, as inline SVG."""
    vals = {a: s.get(key) for a, s in side.items() if s.get(key) is not None}
    if not vals:
        return ""
    top = max(vals.values()) or 1.0
    rows = []
    for i, (arch, v) in enumerate(vals.items()):
        w = 360 * v / top
        y = 22 + 24 * i
        rows.append(f'<text x="0" y="{y + 13}" font-size="11">{_e(arch)}</text><rect x="110" y="{y}" width="{w:.1f}" height="17" fill="{ARCH_COLORS.get(arch, "#888")}"/>'
                    f'<text x="{114 + w:.1f}" y="{y + 13}" font-size="11">{_e(_fmt(key, v))}</text>')
    h = 26 + 24 * len(vals)
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="580" height="{h}" viewBox="0 0 580 {h}" role="img" aria-label="{_e(title)}"><text x="0" y="13" font-size="12" font-weight="bold">{_e(title)}</text>{"".join(rows)}</svg>'


def render(summary: Mapping[str, Any]) -> str:
    """The page for summary.json ``summary`` (its ``decision`` section)."""
    d = summary["decision"]
    spec = summary["spec"]
    side = d["architectures"]
    archs = list(side)
    name = spec.get("name", "")
    wl = spec.get("workload") or {}
    model = (wl.get("model") or {}).get("name") if isinstance(wl.get("model"), dict) else wl.get("model")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{_e(name)}: which fabric to buy</title>", f"<style>{CSS}</style></head><body>"]
    out.append(f"<h1>{_e(name)}: which fabric to buy</h1>")
    out.append(f'<p class="small">{spec.get("gpus", 0):,} GPUs in HB domains of {spec.get("hb_domain")}, catalog {_e(summary.get("catalog", ""))}'
               + (f", workload {_e(model)}" if model else "") + f"; {_e(summary['generator'])}, spec sha256 {_e(summary['spec_sha256'][:16])}</p>")
    out.append(f'<p class="rec" data-key="decision.sentence">{_e(d["sentence"])}</p>')
    out.append("<h2>Why</h2><ul>" + "".join(f"<li>{_e(r)}</li>" for r in d["reasons"]) + "</ul>")
    if d.get("other_wins_when"):
        out.append(f'<p><b>When the other design would win:</b> {_e(d["other_wins_when"])}</p>')
    out.append('<section><h2>Side by side</h2><table><thead><tr><th>figure</th>' + "".join(f"<th>{_e(a)}</th>" for a in archs) + "</tr></thead><tbody>")
    for key, label in (("capex_usd", "capex"), ("power_w", "power"), ("racks", "racks"), ("switches", "switches"), ("cables", "cables"), ("transceivers", "transceivers"),
                       ("iteration_s", "iteration (Eq. 1)"), ("alltoall_step_s", "expert all-to-alls per step"), ("step_s", "step time"), ("expected_failures_per_month", "expected component failures per month")):
        out.append(f"<tr><td>{_e(label)}</td>" + "".join(_cell(f"decision.architectures.{a}.{key}", key, side[a].get(key)) for a in archs) + "</tr>")
    out.append("</tbody></table>")
    out.append("".join(_bars(t, k, side) for t, k in (("capex", "capex_usd"), ("power", "power_w"), ("step time", "step_s"))) + "</section>")
    out.append("<section><h2>Collectives on the wiring</h2>")
    if all(side[a].get("collectives") is None for a in archs):
        out.append(f'<p class="small">{_e(d["collectives_note"])}</p>')
    else:
        out.append('<table><thead><tr><th>collective</th><th>architecture</th><th>failed</th><th>slowest pair (of line rate)</th><th>mean pair</th><th>bus bandwidth</th></tr></thead><tbody>')
        for a in archs:
            for i, c in enumerate(side[a]["collectives"] or ()):
                p = f"decision.architectures.{a}.collectives.{i}"
                out.append(f"<tr><td>{_e(c['pattern'])}</td><td>{_e(a)}</td><td>{_e(c['failed'])}</td>" + "".join(_cell(f"{p}.{k}", k, c[k]) for k in ("slowest_pair", "mean_pair", "bus_bandwidth_GBps")) + "</tr>")
        out.append(f'</tbody></table><p class="small">{_e(d["collectives_note"])}</p>')
    out.append("</section><section><h2>Blast radius per component</h2><table><thead><tr><th>component</th><th>architecture</th><th>example</th><th>GPUs cut off</th><th>GPUs degraded</th></tr></thead><tbody>")
    for a in archs:
        for i, b in enumerate(side[a]["blast_radius"]):
            p = f"decision.architectures.{a}.blast_radius.{i}"
            out.append(f"<tr><td>{_e(b['component'])}</td><td>{_e(a)}</td><td>{_e(b['example'])}</td>" + _cell(f"{p}.gpus_cut_off", "gpus_cut_off", b["gpus_cut_off"]) + _cell(f"{p}.gpus_degraded", "gpus_degraded", b["gpus_degraded"]) + "</tr>")
    out.append("</tbody></table></section>")
    out.append("<section><h2>Expected component failures per month</h2><table><thead><tr><th>component</th>" + "".join(f"<th>{_e(a)} count</th><th>{_e(a)} per month</th>" for a in archs) + "<th>rate per month</th></tr></thead><tbody>")
    for j, rate in enumerate(d["failure_rates"]):
        cells = "".join(_cell(f"decision.architectures.{a}.failures_per_month.{j}.count", "count", side[a]["failures_per_month"][j]["count"]) + _cell(f"decision.architectures.{a}.failures_per_month.{j}.expected_per_month", "expected_per_month", side[a]["failures_per_month"][j]["expected_per_month"]) for a in archs)
        out.append(f"<tr><td>{_e(rate['component'])}</td>{cells}<td>{100 * rate['per_month']:.4f} %</td></tr>")
    out.append("</tbody></table><p class=\"small\">Rates and sources: " + "; ".join(f"{_e(r['component'])} [{_e(r['status'])}]: {_e(r['source'])}" for r in d["failure_rates"]) + "</p></section>")
    out.append(f'<p class="small">Rule: the step time is Eq. 1\'s iteration plus the expert all-to-alls (4 per MoE layer and micro-batch); the cheaper design is recommended while its step time is within {100 * d["tolerance"]:.0f} % of the other\'s [assumed].</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def export(ctx, dest: Path) -> list[Path]:
    """Write ``report.html`` of a build (nothing without a decision: a build without a BOM)."""
    if "decision" not in ctx.summary:
        return []
    p = Path(dest) / "report.html"
    write_output_text(p, render(ctx.summary))
    return [p]


def read_build(build_dir: str | Path) -> dict[str, Any]:
    """A build directory's summary.json with its ``decision`` (worked out again for a build made before the decision existed)."""
    import json


    p = Path(build_dir) / "summary.json"
    hint = "give the directory topogen build wrote (it holds summary.json), e.g. out/demo"
    if not p.is_file():
        raise InputError([Problem("BUILD_DIR", f"{str(p)!r} does not exist", hint)])
    try:
        summary = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError([Problem("BUILD_DIR", f"{str(p)!r} is not a readable summary.json ({type(exc).__name__})", hint)]) from None
    if not isinstance(summary, dict) or not isinstance(summary.get("architectures"), dict) or not isinstance(summary.get("spec"), dict) or "generator" not in summary:
        raise InputError([Problem("BUILD_DIR", f"{str(p)!r} is not a topogen build's summary.json", hint)])
    if "decision" not in summary:
        if not all("cost" in a for a in summary["architectures"].values()):
            raise InputError([Problem("BUILD_DIR", f"{str(p)!r} has no bill of materials to decide on", "build the spec with its catalog (topogen build)")])

        spec = build_spec(dict(summary["spec"]), {}, default_name=str(summary["spec"].get("name", "build")))
        summary["decision"] = decision.decide(summary, spec, catalog=load_catalog(spec.catalog_ref))  # the catalog's own failure rates, if it states them
    return summary


def write(summary: Mapping[str, Any], out_dir: str | Path, force: bool = False, notes: list[str] | None = None) -> list[Path]:
    """``topogen report``: ``report.html`` and a ``manifest.json`` in ``out_dir``, under the output contract (:mod:`topogen.util.outdir`)."""
    import json


    with atomic_dir(out_dir, force=force, notes=notes) as tmp:
        p = tmp / "report.html"
        write_output_text(p, render(summary))
        size, sha = digest(p)
        manifest = {"generator": f"topogen {__version__}", "spec_sha256": summary["spec_sha256"], "files": [{"path": "report.html", "bytes": size, "sha256": sha}]}
        write_output_text(tmp / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return [Path(out_dir) / "report.html", Path(out_dir) / "manifest.json"]
