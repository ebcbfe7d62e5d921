"""The ``topogen`` command line: parse, call the pipeline, render. Nothing else lives here."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import click

from topogen import __version__, pipeline
from topogen.analysis import fabric as analysis
from topogen.analysis import render as analysis_render
from topogen.analysis import sweep
from topogen.analysis.render import build_lines
from topogen.asbuilt import adapters as asbuilt_adapters
from topogen.asbuilt import render as asbuilt_render
from topogen.asbuilt import identity, sources, wiring
from topogen.bom import compare as comparison
from topogen.spec.catalog import catalog_schema
from topogen.checks import validate as checks
from topogen.checks.validate import summary_line
from topogen.config import emulate
from topogen.config import render as emulate_render
from topogen.exports import CONFIG_FORMATS, EXPORTERS
from topogen.exports.files import relative
from topogen.exports.infiniband import names as names_export
from topogen.exports.netbox import push as nbpush
from topogen.exports.sizes import WARN_BYTES, estimate_bytes
from topogen.exports.summary import striping_text
from topogen.exports.workers import default_jobs
from topogen.fabric.naming import ISL_LINK
from topogen.asbuilt import networks as asbuilt_networks
from topogen.checks.networks import NETWORK_CHECK_IDS
from topogen.checks.networks import render as render_network_findings
from topogen.exports.summary import network_lines
from topogen.search import executor as search_executor
from topogen.search import report as search_report
from topogen.search import run as search_run
from topogen.search import space as search_space
from topogen.search.journal import Journal
from topogen.spec import counts
from topogen.spec.cluster import NAME_RE, Spec, build_spec, load_spec, plain_number
from topogen.spec.counts import link_tier_name, tier_role
from topogen.spec.schema import dumps as schema_dumps
from topogen.spec.schema import spec_schema
from topogen.spec.units import gpus_for_units
from topogen.spec.workload import parse_number
from topogen.util import outdir
from topogen.util.errors import InputError, Problem
from topogen.util.figures import count, kw, pct, plural, usd, usd_cents
from topogen.util.inputs import human_bytes
from topogen.util.memory import usual_allocation
from topogen.util.progress import Progress
from topogen.util.resources import list_templates
from topogen.exports.report import html as report_html
from topogen.growth import delta, expansion
from topogen.growth import render as growth_render
from topogen.growth import phase as growth_phase
from topogen.growth import stages as growth_stages

EXIT_INPUT = 2


def spec_options(f):
    """The spec flags, declared once and shared by every command that takes a spec."""
    opts = [
        click.argument("spec", required=False),
        click.option("--name", help="Cluster name (the spec's name; `build` writes to out/<name>/ by default)."),
        click.option("--gpus", help="Number of GPUs N (a multiple of --hb-domain)."),
        click.option("--hb-domain", "hb_domain", help="GPUs per HB domain K (8, 72, 256...)."),
        click.option("--radix", help="Switch ports at the speed of their downlinks (even), or one per switch tier, leaf first: 32/288 (build also reads 32,288; compare sweeps values split by ',')."),
        click.option("--link-speed", "link_speed", help="Link speed in Gb/s (default 400), or one per link tier, GPU-leaf first: 200/400 (build also reads 200,400; compare sweeps values split by ',')."),
        click.option("--arch", help="rail-optimized, rail-only or both (default both)."),
        click.option("--rail-packing", "rail_packing", help="Rail-only: shared (default, small rails share a switch) or dedicated."),
        click.option("--leaf-packing", "leaf_packing", help="Rail-optimized: aligned (default, one leaf per rail per group) or shared (small groups pack rails on a leaf)."),
        click.option("--provision", help="full (default) or minimal uplinks on partly filled switches."),
        click.option("--striping", help="Top tier: balanced (default: equal parallel links to each upper switch) or minimal (the fewest upper switches the ports need, parallel links uneven by at most one)."),
        click.option("--design", help="Compute fabric: clos (default: leaves, then spines as the GPUs need) or leaf-pair (the Enterprise RA single tier: two leaves per plane, NICs A-B-B-A, joined by inter-switch links)."),
        click.option("--catalog", help="Hardware catalog name or path (default paper)."),
        click.option("--planes", help="Fabric planes (independent copies); NIC ports per GPU with --homing planes (default 1)."),
        click.option("--nic-ports", "nic_ports", help="NIC ports per GPU, each at --link-speed (default: planes x 2 when --homing dual, else planes)."),
        click.option("--homing", help="planes (default: each NIC port its own plane) or dual (each plane's port pair on two leaves of the GPU's rail, no link between them)."),
        click.option("--gpus-per-node", "gpus_per_node", help="GPUs per compute node (NetBox device, Slurm node), dividing --hb-domain (default: the HB domain)."),
        click.option("--oversubscription", help="Leaf down:up ratio, e.g. 3:1 (default 1:1, non-blocking)."),
        click.option("--scalable-unit", "scalable_unit", help="Nodes per scalable unit (SU): leaves built per SU, e.g. 32 (NVIDIA SuperPOD)."),
        click.option("--max-scalable-units", "max_scalable_units", help="SUs the top tier is sized for (default: the SUs present); leaves are bought for the SUs present."),
        click.option("--reserved-leaf-ports", "reserved_leaf_ports", help="Leaf ports kept free on each leaf of the last SU for management / UFM links (default 0)."),
        click.option("--reserved-leaf-ports-per", "reserved_leaf_ports_per", help="design (default: on the last SU's leaves only) or su (on each leaf of every SU)."),
        click.option("--backup-nodes", "backup_nodes", help="Spare hosts among --gpus: wired, validated and priced, left out of the job size (default 0; whole HB domains)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


SPEC_KEYS = ("name", "gpus", "hb_domain", "radix", "link_speed", "arch", "rail_packing", "leaf_packing", "provision", "striping", "design", "catalog", "planes", "gpus_per_node", "oversubscription", "nic_ports", "homing", "scalable_unit", "max_scalable_units", "reserved_leaf_ports", "reserved_leaf_ports_per", "backup_nodes")


def resolve(spec_ref: str | None, kwargs: dict) -> Spec:
    overrides = {k: kwargs.pop(k) for k in SPEC_KEYS}
    radix = overrides.get("radix")
    radix_ok = radix is not None and all(plain_number(x) for x in radix.replace("/", ",").split(","))  # a per-tier list names as r32-288
    if spec_ref is None and overrides.get("name") is None and radix_ok and all(plain_number(overrides.get(k)) for k in ("gpus", "hb_domain")):
        overrides["name"] = f"n{overrides['gpus']}-k{overrides['hb_domain']}-r{radix.replace(',', '-').replace('/', '-')}"
    return load_spec(spec_ref, overrides)


class PositiveNumber(click.ParamType):
    """A flag's number of Gb/s, seconds, hours...: finite, above 0, at most 10^15 (no inf/nan)."""

    name = "number"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        try:
            v = float(value) if len(str(value)) <= 40 else float("inf")
        except ValueError:
            self.fail(f"{value!r:.60} is not a number", param, ctx)
        if not (math.isfinite(v) and 0 < v <= 1e15):
            self.fail(f"{str(value)[:40]!r} must be a finite number above 0 and at most 1e15", param, ctx)
        return v


POSITIVE = PositiveNumber()


def _inside(path: Path, directory: Path) -> bool:
    """``path`` lies in ``directory`` (both resolved; links followed as the kernel would)."""
    try:
        return path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def fail_input(exc: InputError) -> None:
    click.echo(exc.render(), err=True)
    sys.exit(EXIT_INPUT)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="topogen")
def main() -> None:
    """Port-level scale-out fabrics for GPU clusters: rail-only and rail-optimized Clos."""


def out_options(what: str):
    """``--out`` and ``--force``, the same for every command that writes a directory (topogen.outdir's contract)."""

    def deco(f):
        f = click.option("--force", is_flag=True, help="Also replace topogen outputs changed since they were written (files topogen did not write are never deleted).")(f)
        return click.option("--out", "out", help=f"{what}; replaced only when empty or holding topogen's own earlier output.")(f)

    return deco


@main.command()
@spec_options
@out_options("Output directory (default out/<name>)")
@click.option("--formats", help=f"Comma-separated exporters to run: {', '.join(EXPORTERS)}; 'config' for the switch configurations ({', '.join(CONFIG_FORMATS)}); 'all' (default: all but the switch configurations; validation always runs).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but warnings and errors (no progress, summary or file list).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Exporter processes run in parallel (default: the CPUs, at most 8; 1 = one after another). Same files either way.")
@click.option("--scalable-units", "scalable_units", help="Build this many scalable units of the spec's design (its scalable_unit, else networks.scalable_unit, nodes each) instead of its gpus; the last SU keeps the node slots the spec leaves free in its own (dgx-h100-superpod: 31, 63, 95, 127 nodes at 1 to 4 SUs).")
@click.option("--traffic", "traffic", is_flag=True, help="Also simulate the DP ring, the MoE all-to-all and a permutation on each wiring (spray routing, healthy and, up to 16,384 GPUs, with a spine down): the workbook's Traffic sheet and analysis/link_utilisation plots. Opt-in: at 131,072 GPUs it adds about a quarter to the build's CPU.")
def build(spec: str | None, out: str | None, force: bool, formats: str | None, jobs: int | None, quiet: bool, traffic: bool, scalable_units: str | None, **kwargs) -> None:
    """Build the wiring of SPEC (a YAML file or preset name) and write out/<name>/.

    Progress goes to stderr (a bar on a terminal, one line per phase
    otherwise); at the end the summary and every file written with its size.
    Exit status: 0 success, 1 the design failed validation, 2 bad input.
    """
    try:
        if scalable_units is not None:
            if kwargs.get("gpus") is not None:
                raise InputError([Problem("--scalable-units", f"both --gpus ({kwargs['gpus']}) and --scalable-units ({scalable_units}) give the size", "give one of them")])
            kwargs["gpus"] = str(gpus_for_units(resolve(spec, dict(kwargs)), scalable_units))
        s = resolve(spec, kwargs)
        fmts = pipeline.resolve_formats(formats)
        outdir.check(Path("out") / s.name if out is None else out, force)  # before the build: a refusal costs nothing
        out_dir = Path("out") / s.name if out is None else Path(out)
        warn_size(s, fmts)
        warn_depth(s)
        with Progress(pipeline.BUILD_PHASES + 2, enabled=not quiet) as progress:
            ctx = pipeline.build(s, progress, traffic=traffic)
            usual_allocation()  # the exporters' growing buffers: glibc's usual mmap (see topogen.util.memory)
            written = pipeline.write_outputs(ctx, out_dir, pipeline.export_formats(ctx, fmts), jobs=jobs or default_jobs(), force=force, progress=progress)
    except InputError as exc:
        fail_input(exc)
    if not quiet:
        click.echo(render_summary(ctx, out_dir))
        for message in ctx.messages:
            click.echo(f"note: {message}")
        click.echo(render_files(out_dir, written))
    if not ctx.valid:
        for report in ctx.reports.values():
            if not report.valid:
                click.echo(checks.render(report), err=True)
        click.echo(f"error: the wiring failed validation; {out_dir}/ holds only summary.json, validation.json and manifest.json", err=True)
        sys.exit(1)


def warn_size(spec: Spec, formats: list[str]) -> None:
    """Warn on stderr, before anything is built, when the outputs will take more than about 1 GB."""
    links = sum(sum(counts.arch_counts(spec, arch).links_per_tier) for arch in spec.arches)
    size = estimate_bytes(links, formats)
    if size > WARN_BYTES:
        click.echo(f"warning: this build will write about {human_bytes(size)} ({count(links)} links, formats {', '.join(formats)}); pick fewer with --formats", err=True)


def warn_depth(spec: Spec) -> None:
    """Warn on stderr, before anything is built, when a design has more switch tiers than any sensible one."""
    for line in counts.depth_warnings(spec):
        click.echo(f"warning: {line}", err=True)


def render_files(out_dir: Path, paths: list[Path]) -> str:
    """Every file written with its size, right-aligned, in the order written."""
    sizes = [os.stat(p).st_size for p in paths]
    lines = [f"{len(sizes):,} files, {human_bytes(sum(sizes))}, in {out_dir}/:"]
    for r, n in zip(relative(paths, out_dir), sizes):
        lines.append(f"  {human_bytes(n):>10}  {r}")
    return "\n".join(lines)


def render_summary(ctx: pipeline.BuildContext, out_dir: Path) -> str:
    s = ctx.spec
    lines = [f"{s.name}: {plural(s.gpus, 'GPU')}, HB domain {count(s.hb_domain)} ({plural(s.domains, 'domain')}), radix {s.radix_text()}, {s.speeds_text()} Gb/s, {plural(s.planes, 'plane')}{', dual-homed (2 NIC ports per plane, each on its own leaf of the rail)' if s.homes > 1 else ''}{f', {s.backup_nodes:,} backup nodes ({s.active_gpus:,} GPUs in the job)' if s.backup_nodes else ''}"]
    for arch, sec in ctx.summary["architectures"].items():
        tiers = " + ".join(plural(n, f"{role} switch" if role.startswith("tier") else role) for n, role in zip(sec["switches_per_tier"], _roles(sec["tiers"])))
        links = ", ".join(f"{count(n)} {link_tier_name(t)}" for t, n in enumerate(sec["links_per_tier"], 1))
        if sec.get("isls"):  # design: leaf-pair
            links += f", {count(sec['isls'])} {ISL_LINK} (inter-switch links)"
        lines.append(f"  {arch:15s} {plural(sec['tiers'], 'tier')}, {plural(sec['switches'], 'switch')} ({tiers}); links: {links}; unused switch ports: {count(sec['unused_switch_ports'])}")
        if "port_budget" in sec:
            b = sec["port_budget"]
            su = f"{plural(b['sus_present'], 'scalable unit')} of {b['nodes_per_su']} nodes (last {b['nodes_in_last_su']}), top tier sized for {b['sus_sized_for']}; " if "nodes_per_su" in b else ""
            lines.append(
                f"  {'':15s} {su}switch ports: {count(b['cabled_ports'])} cabled, {count(b['reserved_leaf_ports'])} reserved on leaves (management / UFM), "
                f"{count(b['growth_ports'])} for growth, {count(b['unused_ports'])} unused"
            )
        for note in sec["notes"]:
            lines.append(f"  {'':15s} note: {note}")
        if "striping" in sec:
            lines.append(f"  {'':15s} {striping_text(sec['striping'], sec['tiers'])}")
        if "validation" in sec:
            lines.append(f"  {'':15s} {summary_line(sec['validation'])}")
        if "cost" in sec:
            cables = plural(sec["cables"], "cable") if sec["cables"] or not sec["links"] else f"cables not priced ({plural(sec['links'], 'link')}; the catalog lists no cables)"
            power = kw(sec["power_w"]) if sec["power_w"] else "not priced (the catalog gives no power figures)"
            lines.append(
                f"  {'':15s} BOM ({ctx.summary['catalog']}): {plural(sec['transceivers'], 'transceiver')}, {cables}, cost {usd(sec['cost'])} ({usd_cents(sec['cost_per_gpu'])} per GPU), power {power}"
            )
        if "networks" in ctx.summary:
            lines += [f"  {'':15s} {line}" for line in network_lines(ctx.summary["networks"], arch)]
    if "comparison" in ctx.summary:
        cmp = ctx.summary["comparison"]
        parts = [f"{pct(cmp['cost_reduction'])} of the cost" if cmp["cost_reduction"] is not None else None]
        parts.append(f"{pct(cmp['power_reduction'])} of the power" if cmp["power_reduction"] is not None else None)
        said = " and ".join(p for p in parts if p)
        if said:
            lines.append(f"  rail-only saves {said} of rail-optimized" + ("" if parts[1] else " (this catalog prices no power)"))
    if ctx.analysis is not None:
        lines += [f"  {line}" for line in build_lines(ctx.analysis)]
    decision = ctx.summary.get("decision")
    if decision is not None and len(decision["architectures"]) > 1:  # the answer to "which one?", with report.html's figures behind it
        lines.append(f"  decision: {decision['sentence']}")
    lines.append(f"wrote {out_dir}/")
    return "\n".join(lines)


def _roles(t: int) -> list[str]:
    return [tier_role(j) for j in range(1, t + 1)]


def _template_list(kind: str) -> str:
    items = list_templates(kind)
    width = max((len(t.name) for t in items), default=0)
    return "\n".join(f"{t.name:{width}s}  {t.description}".rstrip() for t in items)


@main.command()
def presets() -> None:
    """List the bundled cluster presets (give one as SPEC, e.g. `topogen build demo`)."""
    click.echo(_template_list("clusters"))


@main.command()
def catalogs() -> None:
    """List the bundled hardware catalogs (give one as --catalog NAME or `catalog:` in a spec)."""
    click.echo(_template_list("catalogs"))


@main.command()
@click.argument("kind", type=click.Choice(["spec", "catalog"]))
def schema(kind: str) -> None:
    """Print the JSON Schema (draft 2020-12) of a cluster spec or a hardware catalog.

    \b
    topogen schema spec > spec.schema.json
    The bundled presets and catalogs name the same schema, shipped with topogen,
    in their first line ('# yaml-language-server: $schema=...'), so editors with
    a YAML language server (VS Code's YAML extension) complete and check fields.
    """
    click.echo(schema_text(kind), nl=False)


@main.command()
@spec_options
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object {\"rows\": [...]} instead of a table.")
def compare(spec: str | None, as_json: bool, **kwargs) -> None:
    """Compare rail-only with rail-optimized for SPEC, or sweep comma-separated values.

    --gpus, --hb-domain, --radix and --link-speed take lists, e.g.
    --gpus 32768,65536 --radix 32,64,128,256 --hb-domain 256 --catalog paper.
    Here ',' separates the values swept and '/' the link tiers of one value:
    --link-speed 200/400,400 compares 200G NICs on 400G uplinks with 400G
    everywhere (one value with both ',' and '/' in build is an error).
    Both architectures are always built (the spec's arch is ignored).
    Combinations that cannot be built are skipped and listed on stderr
    (JSON: "skipped"); exit 2 only when none can be built.
    """
    try:
        overrides = {k: kwargs.pop(k) for k in SPEC_KEYS}
        rows, skipped = comparison.sweep(spec, overrides)
    except InputError as exc:
        fail_input(exc)
    if as_json:
        import json

        click.echo(json.dumps({"rows": rows, "skipped": [{"combination": x.combo, "problems": [p.message for p in x.problems]} for x in skipped]}, indent=2))
    else:
        click.echo(comparison.render_table(rows))
    if skipped:
        click.echo(f"skipped {len(skipped)} of {len(rows) + len(skipped)} combinations that cannot be built:", err=True)
        for x in skipped:
            click.echo(f"  {x.render()}", err=True)


@main.command("search")
@click.argument("spec", metavar="FILE")
@click.option("--gpus", help="N: a whole number, or at least N with a trailing + (30000+): each K rounds it up to whole HB domains.")
@click.option("--arch", help="Architectures to search, comma-separated (rail-optimized,rail-only).")
@click.option("--hb-domain", "hb_domain", help="HB-domain sizes K, comma-separated (default: the workload GPU's scale-up options).")
@click.option("--catalog", help="Catalogs, comma-separated names or paths (radix and speed default to their switches').")
@click.option("--radix", help="Leaf radixes (or per tier 32/288), comma-separated.")
@click.option("--link-speed", "link_speed", help="Link speeds in Gb/s (or per tier 200/400), comma-separated.")
@click.option("--planes", help="Planes, comma-separated.")
@click.option("--oversubscription", help="Leaf down:up ratios, comma-separated (1:1,3:1).")
@click.option("--objectives", help="Objectives to minimise, comma-separated: capex, cost_per_gpu, power, iteration, blast_radius, cables_optics.")
@click.option("--budget", help="Constraint: capex at most this many USD.")
@click.option("--power-kw", "power_kw", help="Constraint: fabric power at most this many kW.")
@click.option("--racks", help="Constraint: at most this many racks on the floor layout.")
@click.option("--max-hops", "max_hops", help="Constraint: worst-case switch hops between two GPUs.")
@click.option("--max-iteration-s", "max_iteration_s", help="Constraint: the workload's iteration time at most this many seconds (Eq. 1, as topogen analyze iteration).")
@click.option("--min-bus-bandwidth-GBps", "min_bus_bandwidth_GBps", help="Constraint: the DP ring all-reduce's simulated bus bandwidth at least this many GB/s (simulated on the explicit builds).")
@click.option("--min-alltoall-GBps", "min_alltoall_GBps", help="Constraint: the simulated all-to-all over the workload's EP group at least this many GB/s per GPU (simulated on the explicit builds).")
@click.option("--choose", help="Objective the chosen design has least of on the front (default: the first objective).")
@click.option("--slack", help="Designs whose closed-form estimates are within this fraction of the front are built explicitly too (default 0.05).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Local worker processes for the explicit builds (default: the CPUs, at most 8).")
@click.option("--scheduler", help="Send the explicit builds to a Dask cluster: tcp://HOST:PORT of its scheduler (needs topogen-railfabric[dask]).")
@click.option("--results", type=click.Path(dir_okay=False), help="Results file: each explicit build is appended as it finishes; a rerun with the same file resumes.")
@out_options("Output directory (default out/<name>)")
@click.option("--json", "as_json", is_flag=True, help='Print {"rows": [...], "front": [...], "chosen": {...}} instead of the table.')
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but warnings and errors.")
def search_cmd(spec: str, jobs: int | None, scheduler: str | None, results: str | None, out: str | None, force: bool, as_json: bool, quiet: bool, **flags) -> None:
    """Search the designs of FILE's search: section for the Pareto front, and write the chosen spec.

    \b
    topogen search b200-32k
    topogen search my-search.yaml --budget 300e6 --jobs 4
    topogen search my-search.yaml --scheduler tcp://10.0.0.5:8786 --results run.jsonl

    Every design is screened by the closed form; those near the front are
    built, validated and priced explicitly (as topogen build does), and the
    front is taken on those figures. Writes out/<name>/: search.json,
    front.csv, designs.csv, chosen.yaml (topogen build takes it as it is),
    pareto.png/svg and manifest.json. Exit status: 0 success, 1 a build
    disagreed with the closed form or failed validation, 2 bad input.
    """
    journal = None
    try:
        if flags.get("gpus") is not None and str(flags["gpus"]).strip().endswith("+"):
            flags["gpus"] = {"at_least": str(flags["gpus"]).strip()[:-1]}
        s = search_space.load(spec, flags)
        outdir.check(Path("out") / s.name if out is None else out, force)  # before any build, as build does
        out_dir = Path("out") / s.name if out is None else Path(out)
        if results and _inside(Path(results), out_dir):
            raise InputError([Problem("results", f"{results} is inside the output directory {out_dir}", "put the results file outside it (the output directory holds only what the search writes)")])
        journal = Journal(Path(results)) if results else None
        progress = (lambda m: click.echo(f"{m}...", err=True)) if not quiet and not as_json else None
        res = search_run.search(s, search_executor.make(jobs, scheduler), journal, progress)
        notes: list[str] = []
        written = search_report.write(res, out_dir, force=force, notes=notes)
    except InputError as exc:
        fail_input(exc)
    finally:
        if journal is not None:
            journal.close()
            for why in journal.refused[:20]:
                click.echo(f"note: results file {results}: {why} (not reused)", err=True)
    if as_json:
        import json

        click.echo(json.dumps(res.as_json(), indent=2))
    elif not quiet:
        click.echo(search_report.render_table(res))
        for n in notes:
            click.echo(f"note: {n}")
        click.echo(render_files(out_dir, written))
    if res.errors:
        for e in res.errors:
            click.echo(f"error: {e}", err=True)
        sys.exit(1)


@main.command("report")
@click.argument("build_dir", metavar="BUILD_DIR")
@out_options("Output directory (default out/<name>-report)")
def report_cmd(build_dir: str, out: str | None, force: bool) -> None:
    """Write the decision report of a build: one self-contained HTML page that prints.

    \b
    topogen report out/demo
    topogen report out/demo --out out/demo-report

    Both architectures side by side (capex, power, racks, cables and optics,
    step time of the workload, collectives on the wiring when the build ran
    --traffic, blast radius, expected failures per month), the recommendation
    in one sentence and the figures it rests on: summary.json's decision.
    topogen build writes the same page as report.html.
    """

    notes: list[str] = []
    try:
        summary = report_html.read_build(build_dir)
        name = summary["spec"].get("name")
        name = name if isinstance(name, str) and NAME_RE.fullmatch(name) else "build"  # text from a file: a safe directory name, or none
        target = Path("out") / f"{name}-report" if out is None else out
        outdir.check(target, force)
        target = Path(target)
        written = report_html.write(summary, target, force=force, notes=notes)
    except InputError as exc:
        fail_input(exc)
    click.echo(summary["decision"]["sentence"])
    for message in notes:
        click.echo(f"note: {message}")
    click.echo(f"wrote {written[0]}")


@main.command("validate")
@spec_options
@click.option("--spec", "spec_opt", metavar="SPEC", help="The spec a cabling.csv / topology.json claims to implement (YAML path or preset name).")
@click.option("--stage", metavar="STAGE", help="SPEC is a topogen expand output: validate the installed phase ('installed'), the wiring after stage N against the new spec (cables of later stages may be missing), or 'final'.")
@out_options("Also write <out>/<arch>/validation.json and <out>/manifest.json")
def validate_cmd(spec: str | None, spec_opt: str | None, out: str | None, force: bool, stage: str | None = None, **kwargs) -> None:
    """Validate SPEC (build it, then check it), or a wiring file against --spec.

    \b
    topogen validate demo
    topogen validate out/demo/rail-only/cabling.csv --spec demo
    topogen validate out/demo/rail-only/topology.json

    Without --spec, a wiring file is checked against the spec it names
    (topology.json embeds it; a cabling.csv in out/<name>/<arch>/ takes the
    spec from that build's summary.json, the architecture from its directory).
    A networks-cabling.csv gets the storage, in-band and OOB networks' checks.
    Exit status: 0 valid, 1 errors found, 2 bad input.
    """
    notes: list[str] = []
    network_findings: dict = {}  # the other networks' (spec networks:), when a spec was built
    try:
        if out is not None:
            for given, what in ((spec, "the file being checked"), (spec_opt, "the spec")):
                if given is not None and os.path.exists(given) and _inside(Path(given), Path(out)):
                    raise InputError([Problem("out", f"--out {out} holds {given}, {what}: writing there would replace it with the rest of that build", "give --out a directory of its own (e.g. out/checked)")])
            outdir.check(out, force)  # before any work, as build does
        progress, stage_spec = False, None
        if stage is not None:
            if spec is None:
                raise InputError([Problem("--stage", "no expansion given", "give the directory topogen expand wrote: topogen validate out/phase2 --stage 1")])
            path, summary, kwargs["arch"], progress = growth_phase.stage_plan(spec, stage, kwargs["arch"])
            spec, stage_spec = str(path), (sources._build_spec(summary) if spec_opt is None else None)
        if spec is not None and wiring.is_wiring_path(spec):
            arch_flag, kwargs["arch"] = kwargs["arch"], None  # picks the file's architecture; the spec stays as written
            raw = wiring.read(Path(spec))
            s = stage_spec if stage_spec is not None else _wiring_spec(raw, spec_opt, kwargs)
            arch = wiring.choose_arch(raw, arch_flag, s)
            if asbuilt_networks.is_networks_csv(Path(spec)):  # storage, in-band and OOB cables: the networks' checks on them
                if out is not None:
                    raise InputError([Problem("--out", f"{Path(spec).name} holds the storage, in-band and OOB networks; --out writes the compute fabric's validation.json", "drop --out (the findings are printed), or validate the build's cabling.csv")])
                found, read_cables = asbuilt_networks.validate_file(Path(spec), s, arch, pipeline.build)
                click.echo(render_network_findings(arch, found, NETWORK_CHECK_IDS, f"storage, in-band and OOB networks as built ({read_cables:,} cables read from {spec})"))
                sys.exit(1 if any(f.severity == "error" for f in found) else 0)
            w = wiring.to_fabric(raw, s, arch)
            reports = [checks.validate(w.fabric, labels=w.labels, pre=w.findings, source=w.source, expected=w.expected)]
            if progress:  # a stage before the last: its missing cables come later
                reports = [growth_stages.in_progress(reports[0])]
                notes.append(f"stage {stage} of an expansion: errors of a build in progress (cables of later stages) are shown as warnings")
        else:
            if spec is not None and spec_opt is not None:
                raise InputError([Problem("spec", f"two specs given: {spec!r} and --spec {spec_opt!r}", "give the spec once, or a cabling.csv / topology.json with --spec")])
            s = resolve(spec if spec is not None else spec_opt, kwargs)
            ctx = pipeline.build(s)
            reports = list(ctx.reports.values())
            network_findings = ctx.network_findings
        if out is not None:
            pipeline.write_validation(reports, s, Path(out), force=force, notes=notes)
    except InputError as exc:
        fail_input(exc)
    click.echo("\n\n".join(checks.render(r) for r in reports))
    for arch, found in network_findings.items():
        click.echo(render_network_findings(arch, found))
    for message in notes:
        click.echo(f"note: {message}")
    network_errors = any(f.severity == "error" for fs in network_findings.values() for f in fs)
    sys.exit(0 if all(r.valid for r in reports) and not network_errors else 1)


@main.command("expand")
@click.argument("build_dir", type=click.Path(file_okay=False))
@spec_options
@click.option("--keep-bandwidth", "keep", type=POSITIVE, default=0.75, show_default=True, help="Share of the running GPUs' bandwidth every stage keeps (between 0 and 1).")
@out_options("Directory for the expansion's files (default out/<new name>-expand)")
def expand_cmd(build_dir: str, spec: str | None, keep: float, out: str | None, force: bool, **kwargs) -> None:
    """Plan the next phase of the cluster installed from BUILD_DIR: grow it to SPEC without re-cabling it.

    \b
    topogen expand out/dgx-h100-su dgx-h100-su --gpus 1016
    topogen expand out/phase1 phase2.yaml --keep-bandwidth 0.5 --out out/phase2

    Keeps every installed cable, port, name and rack position the new design has
    room for, moves the fewest, stages the moves so each stage validates and keeps
    --keep-bandwidth of the running GPUs' bandwidth, and writes the delta (cables by
    stage, the new cabling.csv, the BOM to buy and what becomes spare, the switches,
    addresses and FRR files that change, the storage, in-band and OOB networks'
    cables, Slurm's new topology.conf) and expand.json. validate and diff --stage
    read the result stage by stage. Exit status: 0 planned, 1 a stage or the final
    wiring does not validate, 2 bad input.
    """

    arch_flag = kwargs["arch"]
    try:
        new = resolve(spec, kwargs)
        target = out if out is not None else str(Path("out") / f"{new.name}-expand")
        outdir.check(target, force)
        if arch_flag not in (None, "both") and arch_flag not in ("rail-optimized", "rail-only"):
            raise InputError([Problem("arch", f"unknown architecture {arch_flag!r:.40}", "use rail-optimized or rail-only")])
        plans = expansion.expand_build(build_dir, new, None if arch_flag in (None, "both") else arch_flag, keep)
        ctxs = {e.arch: delta.builds(e) for e in plans}
        with outdir.atomic_dir(target, force=force) as tmp:
            files = list(dict.fromkeys(p for e in plans for p in delta.write(e, tmp, ctxs[e.arch]) + delta.write_installed(e, tmp)))
            figures = [e.figures() for e in plans]
            bom_rows = {a: delta.bom_delta(c[0], c[1], a) for a, c in ctxs.items()}
            (tmp / "expand.json").write_text(delta.figures_json(figures, bom_rows), encoding="utf-8")
            (tmp / "summary.json").write_text(delta.summary_json(new, figures), encoding="utf-8")
            written = pipeline._seal(new, tmp, files + [tmp / "expand.json", tmp / "summary.json"])
    except InputError as exc:
        fail_input(exc)
    click.echo(f"{Path(build_dir).name} -> {new.name}:")
    for f in figures:
        for line in growth_render.render(f):
            click.echo(line)
    click.echo(f"wrote {target}/ ({len(written)} files)")
    sys.exit(0 if all(f["stages_valid"] and f["final_valid"] and f.get("networks", {}).get("final_valid", True) and f.get("networks", {}).get("stages_valid", True) for f in figures) else 1)


@main.command("emulate")
@click.argument("build_dir", type=click.Path(file_okay=False))
@click.option("--arch", type=click.Choice(["rail-optimized", "rail-only"]), help="Architecture to emulate, when BUILD_DIR holds both (required then).")
@click.option("--gpus", "max_gpus", type=click.IntRange(min=2), default=64, show_default=True, help="GPU NICs given a namespace: all when the build has at most this many, else whole HB domains spread from the first to the last.")
@click.option("--timeout", "timeout_s", type=POSITIVE, default=120.0, show_default=True, help="Seconds to wait for each convergence.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def emulate_cmd(build_dir: str, arch: str | None, max_gpus: int, timeout_s: float, as_json: bool) -> None:
    """Boot BUILD_DIR's frr.conf files in FRR in network namespaces and check the fabric routes as designed.

    Needs root and Debian's frr, and a build with --formats cabling,addressing,frr.
    Every failure is followed by the switch whose configuration causes it.
    Every namespace and daemon it starts is removed at the end, also on failure
    and Ctrl-C. Exit status: 0 every check passed, 1 a check failed, 2 bad input
    (not root, no FRR, files missing, a fabric beyond this machine).
    """
    import json as _json

    notes: list[str] = []
    try:
        report = emulate.run(Path(build_dir), arch, max_gpus, timeout_s, progress=lambda t: click.echo(f"emulate: {t}", err=True), notes=notes)
    except InputError as exc:
        fail_input(exc)
    for n in notes:
        click.echo(f"note: {n}", err=True)
    click.echo(_json.dumps(report.to_dict(), indent=2) if as_json else emulate_render.render(report))
    if not report.ok:
        sys.exit(1)


@main.command("diff")
@click.argument("plan")
@click.argument("as_built", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["auto", "ibnetdiscover", "lldp", "cabling"]), default="auto", show_default=True, help="Format of AS_BUILT (default: detected).")
@click.option("--arch", help="Architecture of the plan, when PLAN is a build of both (default: the one the floor matches best).")
@click.option("--spec", "spec_opt", metavar="SPEC", help="The plan's spec, for the design checks: a spec, or the build's summary.json or manifest.json (default: the one its build names).")
@click.option("--names", "names_file", metavar="FILE", help="CSV of as-built name (or chassis ID / GUID), plan name: devices whose names differ from the plan's.")
@click.option("--adapters", "adapters_ref", metavar="SYSTEM|FILE", help="Which GPU each adapter 'mlx5_<n>' of a host serves: a system (dgx-h100, dgx-b200: the hca of its compute ports in templates/systems/), or a CSV of lines mlx5_<n>,gpu<i> (default: learned from the wiring, else from the numbers).")
@click.option("--write-names", "names_out", metavar="DIR", help="Write the names map of the floor into DIR: node-name-map (ibnetdiscover --node-name-map, OpenSM node_name_map_name) and names.csv (--names).")
@click.option("--force", is_flag=True, help="With --write-names: replace files of an earlier --write-names changed since.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--stage", metavar="STAGE", help="PLAN is a topogen expand output: compare with the installed phase ('installed'), the wiring after stage N (the installed phase with the delta of stages 0..N applied), or 'final'.")
def diff_cmd(plan: str, as_built: tuple[str, ...], fmt: str, arch: str | None, spec_opt: str | None, names_file: str | None, adapters_ref: str | None, names_out: str | None, force: bool, as_json: bool, stage: str | None) -> None:
    """Compare what the fabric reports (AS_BUILT) with the PLAN, cable by cable.

    \b
    topogen diff out/demo discovered.topo                 # ibnetdiscover output
    topogen diff out/demo/rail-only lldp/                 # lldpctl -f json, one file per device
    topogen diff out/demo/rail-only/cabling.csv floor.csv # a cabling CSV from the floor

    PLAN is a build directory, an architecture directory or a cabling CSV.
    Devices are matched by name, node/port GUID (the plan's ibnetdiscover
    export), LLDP chassis ID, --names, adapters by host name and their order
    on the host (mlx5_<n>, --adapters), and the rest jointly by their wiring
    (GPUs name the leaves, leaves the spines: one "rename" per switch; devices
    no cable tells apart are said once).
    Every missing, unexpected, swapped, wrong-port, wrong-device, wrong-speed
    and duplicated cable is listed with both ends as planned and as found and
    the move that fixes it; only the part of the plan that AS_BUILT covers is
    compared. The design checks then run on the as-built wiring (a deviation
    that breaks the design is an error, one that keeps it valid a warning).
    Exit status: 0 identical, 1 deviations, 2 bad input.
    """
    try:
        if names_out is not None:
            outdir.check(names_out, force)
        names = identity.read_names(names_file) if names_file is not None else None
        amap = asbuilt_adapters.read_map(adapters_ref) if adapters_ref is not None else None
        found = sources.read_found(list(as_built), fmt)
        progress = False
        if stage is not None:
            path, summary, arch, progress = growth_phase.stage_plan(plan, stage, arch)
            plan, spec_opt = str(path), spec_opt if spec_opt is not None else str(summary)
        p = sources.load_plan(plan, arch, spec_opt, found, build=pipeline.build)
        cmp = sources.diff(p, found, names, amap)
        if progress:  # a stage before the last: the cables of later stages are still to come
            growth_stages.rejudge(cmp, found)
        if names_out is not None:
            undecided = {u for c in cmp.choices for u in c.found}
            written = names_export.write(names_out, found, cmp.matched.names, undecided, p.spec.digest() if p.spec is not None else "", force)
            click.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)
    except InputError as exc:
        fail_input(exc)
    if as_json:
        import json

        click.echo(json.dumps(asbuilt_render.to_dict(cmp, p.locate if p.places else None), indent=2))
    else:
        click.echo(asbuilt_render.render(cmp, p.locate if p.places else None))
    sys.exit(0 if cmp.clean else 1)


def _wiring_spec(raw, spec_opt: str | None, kwargs: dict) -> Spec:
    """The spec to check a wiring file against: --spec, else the one the file names."""
    if spec_opt is not None:
        return resolve(spec_opt, kwargs)
    claimed = wiring.claimed_spec(raw)
    overrides = {k: kwargs.pop(k) for k in SPEC_KEYS}
    if claimed is None:
        if all(overrides.get(k) is not None for k in ("gpus", "hb_domain", "radix")):
            return resolve(None, overrides)
        raise InputError([Problem("spec", f"{raw.path.name} does not say which spec it implements", "give it with --spec (a YAML file or preset name)")])
    data, _where = claimed
    return build_spec(data, overrides, default_name=str(data.get("name") or "cluster"))


@main.command("simulate")
@spec_options
@click.option("--pattern", "pattern", default="ring-allreduce", show_default=True, help="ring-allreduce, alltoall, permutation, shift:S, bisection or matrix:FILE (a CSV of src,dst,bytes); several comma-separated.")
@click.option("--routing", "routing", default="spray", show_default=True, help="spray (an even split over the next hops at every hop: oblivious per-packet spraying), ecmp (a hash per flow), dmodk (InfiniBand ftree destination-mod-k) or opensm (the LFTs OpenSM computes for the ibnetdiscover export under ibsim: opensm:ENGINE with ENGINE ftree (default), updn, dnup, minhop or sssp, and :lmc=L for 2^L LIDs per port, spread over --flows-per-pair queue pairs; needs ibsim-utils and opensm); several comma-separated.")
@click.option("--flows-per-pair", "flows_per_pair", type=click.IntRange(1, 64), default=1, show_default=True, help="ecmp: queue pairs per GPU pair and NIC port, each hashed on its own (NCCL uses several); opensm with LMC > 0: queue pair q goes to the destination's LID base + q mod 2^LMC.")
@click.option("--size", "size", help="Bytes each GPU pair moves (1G, 64M...): gives the completion time.")
@click.option("--fail", "fail", help="Devices or cable ends to take out, comma-separated: spine-3, leaf-g0-r0:p33, hb00-gpu1.")
@click.option("--fail-random", "fail_random", help="Share of the switch-to-switch cables to take out at random, e.g. 1%.")
@click.option("--draw", "draw", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True, help="Number of the random draw (permutation, bisection halves, ECMP hash, --fail-random); the same number repeats a run.")
@click.option("--hb-bandwidth", "hb_bandwidth", type=POSITIVE, help="B_F, HB-domain Gb/s per GPU (default: the spec's hb_bandwidth_gbps, else its workload GPU's).")
@click.option("--spec", "spec_opt", metavar="SPEC", help="The spec a cabling.csv or as-built wiring implements (default: the one its build names).")
@click.option("--as-built", "as_built", multiple=True, help="What the fabric reports (ibnetdiscover output, lldpctl JSON, a cabling CSV); the first argument is then the plan.")
@click.option("--as-built-format", "as_built_format", type=click.Choice(["auto", "ibnetdiscover", "lldp", "cabling"]), default="auto", show_default=True, help="Format of --as-built.")
@click.option("--json", "as_json", is_flag=True, help='Print {"rows": [...], "notes": [...]}: one row per architecture x pattern x routing x failure case.')
def simulate_cmd(spec: str | None, pattern: str, routing: str, flows_per_pair: int, size: str | None, fail: str | None, fail_random: str | None, draw: int, hb_bandwidth: float | None, spec_opt: str | None, as_built: tuple[str, ...], as_built_format: str, as_json: bool, **kwargs) -> None:
    """Route a collective over the wiring of SPEC, a build (BUILD_DIR) or a cabling.csv, at max-min fair rates.

    \b
    topogen simulate demo --pattern ring-allreduce,alltoall --routing spray,ecmp
    topogen simulate gh200-32k --pattern permutation --routing ecmp --flows-per-pair 4
    topogen simulate out/demo --fail spine-0 --size 1G
    topogen simulate out/demo/rail-optimized --as-built discovered.topo
    topogen simulate demo --pattern shift:8 --routing opensm:ftree,dmodk

    Both architectures side by side (the spec's arch picks one). Rates are
    fractions of the sender's NIC line rate; a failure is reported as the
    change against the intact fabric. --routing opensm follows the forwarding
    tables OpenSM computes for each subnet of the ibnetdiscover export under
    ibsim (Debian ibsim-utils and opensm; a subnet must fit 49,151 LIDs;
    minutes from about 4,096 GPUs on). Exit status: 0 simulated, 2 bad
    input (a wiring file that is no network, e.g. a port used twice or a
    spine-spine cable, is refused with its findings).
    """
    from topogen import traffic  # keeps scipy out of start-up
    from topogen.traffic import failures, patterns, report, source  # keeps scipy out of start-up
    from topogen.traffic.routing import ROUTINGS  # keeps scipy out of start-up
    from topogen.traffic import lft  # keeps scipy out of start-up
    from topogen.exports.infiniband import opensm_routes  # keeps scipy out of start-up

    progress = Progress(2)  # the fabric, then the runs (counted once the fabric is known); wiped before the result is printed
    try:
        pats = [patterns.parse(x) for x in pattern.split(",")] if pattern.strip() else []
        if not pats:
            raise InputError([Problem("pattern", "--pattern names no pattern", f"use one of {', '.join(patterns.PATTERNS)}")])
        routes = [lft.parse(x).label if lft.is_opensm(x) else x for x in (y.strip() for y in routing.split(","))]
        bad = [x for x in routes if x not in ROUTINGS and not lft.is_opensm(x)]
        if bad:
            raise InputError([Problem("routing", f"unknown routing {bad[0]!r:.40}", f"use {', '.join(ROUTINGS)} or opensm[:ENGINE]")])
        size_bytes = None
        if size is not None:
            size_bytes = parse_number(size)
            if size_bytes is None or not 0 < size_bytes <= 1e18:
                raise InputError([Problem("size", f"--size must be a positive number of bytes, got {size!r:.40}", "e.g. 1G or 268435456")])
        failure = failures.parse(fail, fail_random)
        progress("fabric")
        if as_built:
            if spec is None:
                raise InputError([Problem("spec", "--as-built needs the plan as the first argument", "give the build directory, architecture directory or cabling.csv the floor was cabled from")])
            src = source.from_as_built(spec, list(as_built), as_built_format, kwargs.get("arch"), spec_opt)
        elif source.is_wiring_ref(spec):
            src = source.from_wiring(spec, kwargs.get("arch"), spec_opt)
        else:
            src = source.from_spec(resolve(spec if spec is not None else spec_opt, kwargs))
        matrices = {p.label: patterns.read_matrix(Path(p.arg), src.spec) for p in pats if p.kind == "matrix"}
        for r in (x for x in routes if lft.is_opensm(x)):  # before any run: a fabric beyond the LID space, or no tools
            for f in src.fabrics:
                opensm_routes.check(f, lft.parse(r))
            opensm_routes.tools()
        progress.total = 1 + traffic.runs(src.fabrics, pats, routes, failure)
        rows = traffic.study(src.fabrics, pats, routes, _hb_gbps(src.spec, hb_bandwidth), failure, size_bytes, flows_per_pair, draw, matrices, opensm_routes.tables, progress)
    except InputError as exc:
        progress.done()
        fail_input(exc)
    progress.done()
    notes = [f"fabric: {src.origin}"] + src.notes
    if as_json:
        import json

        click.echo(json.dumps({"rows": rows, "notes": notes}, indent=2))
    else:
        click.echo(report.render(rows, notes))


def _hb_gbps(spec: Spec, override: float | None) -> float | None:
    """B_F for simulate: --hb-bandwidth, else the spec's, else its workload GPU's; None when none says (needed only if traffic crosses the HB domain)."""
    return analysis.hb_gbps_or_none(spec, override)


def analysis_options(f):
    """Spec flags plus the workload flags every ``analyze`` subcommand takes."""
    opts = [
        click.option("--model", help="Model preset (gpt-3-175b, opt-175b, palm-540b, megatron-1t, llama-2-70b, deepseek-v3) or a .yaml path; replaces the spec's workload model."),
        click.option("--gpu", help="GPU preset (h100, b200, gb200, gh200) or a .yaml path."),
        click.option("--batch", help="Batch, swept when comma-separated: tokens (2M, 32e6) or SEQUENCESxLENGTH (512x2048,2048x2048)."),
        click.option("--hb-bandwidth", "hb_bandwidth", type=POSITIVE, help="B_F, HB-domain Gb/s per GPU (default: the spec's hb_bandwidth_gbps, else the GPU preset's)."),
        click.option("--tp", type=int, help="Tensor-parallel GPUs (inside one HB domain)."),
        click.option("--pp", type=int, help="Pipeline stages."),
        click.option("--dp", help="DP scheme: ddp, zero1, zero2, fsdp, hsdp or megatron."),
        click.option("--optimizer", help="replicated or sharded optimizer state."),
        click.option("--hsdp-shard-gpus", "hsdp_shard_gpus", type=int, help="HSDP: GPUs one model copy is sharded over (divides K, or whole domains)."),
        click.option("--expert-parallel", "expert_parallel", type=int, help="MoE: GPUs of one all-to-all group (default the model's, else N)."),
        click.option("--json", "as_json", is_flag=True, help='Print {"rows": [...], "parameters": [...], "caveats": [...]} instead of a table.'),
    ]
    for o in reversed(opts):
        f = o(f)
    return spec_options(f)


def _analyze(kwargs: dict, run) -> None:
    """Resolve the specs (sweeping lists), run one analysis, print its table or JSON."""
    import json

    as_json = kwargs.pop("as_json")
    try:
        overrides = {k: kwargs.pop(k) for k in SPEC_KEYS}
        spec_ref = kwargs.pop("spec")
        flags = {k: kwargs.pop(k) for k in ("model", "gpu", *sweep.PARALLEL_FLAGS) if k in kwargs}
        batches = sweep.parse_batches(kwargs.pop("batch"))
        if spec_ref is None and overrides.get("name") is None:
            overrides["name"] = "cluster"
        specs, skipped = sweep.analysis_specs(spec_ref, overrides, flags)
        report = run(specs, batches, kwargs)
        report.skipped = [x.render() for x in skipped]
    except InputError as exc:
        fail_input(exc)
    click.echo(json.dumps(report.as_json(), indent=2) if as_json else analysis_render.render(report))


@main.group()
def analyze() -> None:
    """Training analyses on the fabric of SPEC: N, K, B_S (link speed x planes) and B_F come from the spec.

    \b
    topogen analyze iteration gh200-32k --hb-domain 32,64,128,256
    topogen analyze alltoall --gpus 2048 --hb-domain 8 --radix 64 --model deepseek-v3 --hb-bandwidth 7200
    topogen analyze checkpoint SPEC --write-GBps 273
    topogen analyze dp-traffic --gpus 1024 --hb-domain 8 --radix 64 --model llama-2-70b --gpu h100
    """


@analyze.command("iteration", short_help="Iteration time (Eq. 1 of the rail-only paper), the ideal (Eq. 3) and each term.")
@analysis_options
@click.option("--nm-rule", "nm_rule", type=click.Choice(["workload", "derived", "derived-pow2", "printed", "tp"]), default="workload", show_default=True, help="N_M: workload = the workload's tp when it sets one, else derived (what topogen build uses); derived = the optimum of Eq. 1 (capped at K); derived-pow2 = it rounded to a power of two dividing K; printed = the paper's Eq. 2; tp = the workload's TP.")
@click.option("--bandwidth", "bandwidth", type=click.Choice(["nominal", "simulated"]), default="nominal", show_default=True, help="B_S: nominal = link speed x planes; simulated = the DP all-reduce bus bandwidth topogen simulate --pattern ring-allreduce finds on each architecture's wiring (a row per architecture).")
@click.option("--routing", "routing", default="spray", show_default=True, help="With --bandwidth simulated: spray, ecmp or dmodk (as topogen simulate --routing).")
def analyze_iteration(nm_rule: str, bandwidth: str, routing: str, **kwargs) -> None:
    """Iteration time (Eq. 1), the ideal any-to-any (Eq. 3) and each term, per GPUs x K x batch."""
    from topogen.traffic.routing import ROUTINGS  # keeps scipy out of start-up

    if routing not in ROUTINGS:
        fail_input(InputError([Problem("routing", f"unknown routing {routing!r:.40}", f"use {', '.join(ROUTINGS)}")]))
    _analyze(kwargs, lambda specs, batches, kw: analysis.iteration_report(specs, nm_rule, batches, kw["hb_bandwidth"], bandwidth=bandwidth, routing=routing))


@analyze.command("alltoall")
@analysis_options
@click.option("--bytes-per-pair", "bytes_per_pair", help="s, bytes per ordered GPU pair (default: from the model's MoE settings).")
@click.option("--group-gpus", "group_gpus", type=click.IntRange(min=1), help="GPUs in one all-to-all (default: the workload's expert_parallel, else the model's, else N).")
def analyze_alltoall(bytes_per_pair: str | None, group_gpus: int | None, **kwargs) -> None:
    """One uniform all-to-all on rail-optimized Clos and rail-only (relay pipelined and store-and-forward)."""
    s = None
    if bytes_per_pair is not None:
        s = parse_number(bytes_per_pair)
        if s is None or s <= 0:
            fail_input(InputError([Problem("bytes_per_pair", f"--bytes-per-pair must be a positive number of bytes, got {bytes_per_pair!r}", "e.g. 1M or 458752")]))
    _analyze(kwargs, lambda specs, batches, kw: analysis.alltoall_report(specs, s, kw["hb_bandwidth"], group_gpus))


@analyze.command("checkpoint")
@analysis_options
@click.option("--write-GBps", "write_GBps", type=POSITIVE, help="What the storage writes, GB/s (gives the write time).")
@click.option("--write-s", "write_s", type=POSITIVE, help="Target write time in s (gives the bandwidth needed).")
@click.option("--interval-h", "interval_h", type=POSITIVE, help="Checkpoint interval in hours (default the workload's, else 4).")
def analyze_checkpoint(write_GBps: float | None, write_s: float | None, interval_h: float | None, **kwargs) -> None:
    """Checkpoint size, writers, write rate per GPU and node, overhead, and restore read bandwidth."""
    if write_GBps is not None and write_s is not None:
        fail_input(InputError([Problem("write_GBps", "give --write-GBps or --write-s, not both", "--write-GBps: what the storage writes; --write-s: the target time")]))
    _analyze(kwargs, lambda specs, batches, kw: analysis.checkpoint_report(specs, write_GBps, write_s, interval_h))


@analyze.command("dp-traffic")
@analysis_options
def analyze_dp_traffic(**kwargs) -> None:
    """Bytes per GPU, per NIC (rail) and per NVLink of DDP, ZeRO-1/2, FSDP, HSDP and Megatron TP+DP, with the memory fit."""
    _analyze(kwargs, lambda specs, batches, kw: analysis.dp_report(specs))


if __name__ == "__main__":  # pragma: no cover
    main()


def schema_text(kind: str) -> str:
    """The schema document of ``kind`` as ``topogen schema`` prints it and templates/schema/ ships it."""
    return schema_dumps(spec_schema() if kind == "spec" else catalog_schema())


@main.group("netbox")
def netbox_group() -> None:
    """NetBox: load a build's NetBox files through NetBox's REST API."""


@netbox_group.command("push")
@click.argument("build_dir", type=click.Path(file_okay=False))
@click.option("--url", required=True, help="NetBox's address, e.g. https://netbox.example.com")
@click.option("--token-file", required=True, type=click.Path(dir_okay=False), help="File whose first line is an API token with write permission (never printed).")
@click.option("--dry-run", is_flag=True, help="Print what a push would create, change or leave, and change nothing.")
@click.option("--yes-adopt", "adopt", is_flag=True, help="Also change objects that differ and were not created by topogen (no 'topogen' tag on them or on the device or VRF they belong to).")
@click.option("--jobs", type=click.IntRange(1, 32), default=nbpush.JOBS, show_default=True, help="Bulk requests in NetBox at once (up to its web workers).")
def netbox_push(build_dir: str, url: str, token_file: str, dry_run: bool, adopt: bool, jobs: int) -> None:
    """Load BUILD_DIR's NetBox files (--formats netbox[,ipam]) into NetBox by bulk API requests.

    Objects missing are created (tagged 'topogen'), those present and equal left alone, shared
    ones (manufacturers, roles, device types, RIRs, ASNs) never changed. A rerun completes a push
    stopped part-way and a second run changes nothing. Exit status: 0 done (or nothing to do),
    1 objects topogen did not create differ (rerun with --yes-adopt to change them), 2 bad input
    (not a build, NetBox unreachable, token refused, a row NetBox refuses).
    """

    def problem(field: str, msg: str, hint: str) -> None:
        fail_input(InputError([Problem(field, msg, hint)]))

    try:
        token = Path(token_file).read_text(encoding="utf-8").strip().splitlines()[0].strip()
    except (OSError, UnicodeDecodeError, IndexError):
        problem("token_file", f"cannot read an API token from {token_file!r}", "give a file whose first line is a NetBox API token")
    if not url.startswith(("http://", "https://")):
        problem("url", f"--url must start with http:// or https://, got {url!r:.60}", "e.g. http://127.0.0.1:8000")
    client = nbpush.Client(url, token)
    say = lambda t: click.echo(f"netbox: {t}", err=True)  # noqa: E731
    try:
        p = nbpush.plan(client, Path(build_dir), adopt=adopt, on_kind=lambda k: say(f"reading {k} objects"))
        click.echo(nbpush.render_plan(p, dry_run))
        if dry_run or p.empty:
            sys.exit(1 if any(p.foreign.values()) else 0)
        written = nbpush.push(client, Path(build_dir), p, progress=lambda k, done, total, rate: say(f"{k}: {done:,}/{total:,} ({rate:,.1f}/s)"), jobs=jobs)
    except nbpush.PushError as exc:
        problem("netbox", str(exc), "check --url, the token, and that BUILD_DIR is a build with --formats netbox")
    click.echo("written: " + (", ".join(f"{n:,} {k}" for k, n in written.items()) or "nothing"))
    sys.exit(1 if any(p.foreign.values()) else 0)
