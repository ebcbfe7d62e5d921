"""The topogen pipeline, top to bottom: spec → model → validate → BOM → exports.

:func:`build` runs every phase in memory and returns a :class:`BuildContext`;
:func:`write_outputs` renders it through the exporters into an output directory,
atomically. The CLI is a thin layer over these two calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from topogen import __version__, layout
from topogen.analysis import fabric as analysis
from topogen.bom import bill as bom
from topogen.spec import catalog
from topogen.bom import networks as network_bom
from topogen.checks import validate
from topogen.checks.findings import Finding
from topogen.checks.networks import validate_networks
from topogen.config import addressing, netaddr, technology
from topogen.exports import ADDRESSED, CONFIG_FORMATS, EXPORTERS, workers
from topogen.exports.files import digest, relative, write_output_text
from topogen.exports.summary import make_summary
from topogen.exports.validation import write_report
from topogen.fabric import clos
from topogen.fabric import networks, ports
from topogen.fabric.model import Fabric
from topogen.spec import counts
from topogen.spec.cluster import Spec
from topogen.layout.networks import NetworkLayout, wire_and_place
from topogen.spec.layout import resolve as resolve_layout
from topogen.spec.systems import node_u
from topogen.util import interrupts
from topogen.util.errors import InputError, Problem
from topogen.util.outdir import atomic_dir


@dataclass
class BuildContext:
    """Everything the phases computed for one spec; exporters only read it."""

    spec: Spec
    fabrics: dict[str, Fabric]
    counts: dict[str, counts.Counts]
    summary: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)  # exporters' notes for the user (the CLI prints them)
    catalog: catalog.Catalog | None = None  # hardware catalog the BOMs are priced with
    boms: dict[str, bom.Bom] = field(default_factory=dict)  # per architecture, from the explicit wiring
    reports: dict[str, validate.Report] = field(default_factory=dict)  # per architecture: the validator's findings
    analysis: dict[str, Any] | None = None  # the workload's analyses (topogen.analysis.fabric.build_section)
    layouts: dict[str, layout.Layout] = field(default_factory=dict)  # per architecture: racks, U positions, cable lengths
    networks: dict[str, networks.Networks] = field(default_factory=dict)  # per architecture: storage, in-band, OOB (spec.networks)
    network_findings: dict[str, list[Finding]] = field(default_factory=dict)  # per architecture: the networks' validation
    network_boms: dict[str, list[network_bom.NetworkBom]] = field(default_factory=dict)
    network_layouts: dict[str, NetworkLayout] = field(default_factory=dict)  # per architecture: management racks, positions, cable lengths
    network_addresses: dict[str, netaddr.Addresses] = field(default_factory=dict)  # per architecture: the in-band and OOB address plan
    storage_required: dict[str, Any] = field(default_factory=dict)  # per_node_GBps, aggregate_GBps and where they come from
    traffic: dict[str, Any] | None = None  # build --traffic: collectives simulated on the wiring (topogen.traffic.overview)

    @property
    def valid(self) -> bool:
        """No validation errors in any architecture (compute fabric and other networks)."""
        return all(r.valid for r in self.reports.values()) and not any(f.severity == "error" for fs in self.network_findings.values() for f in fs)


BUILD_PHASES = 6  # the progress() calls of build(), for a progress bar's length


def build(spec: Spec, progress: Callable[[str], None] | None = None, traffic: bool = False) -> BuildContext:
    """Run every phase for ``spec`` (no files written); ``progress(phase)`` hears each phase start.

    ``traffic`` also simulates the training's collectives on each wiring
    (:mod:`topogen.traffic.overview`), for the workbook's Traffic sheet and the
    utilisation plot: opt-in (at 131,072 GPUs it adds about a quarter to the CPU of a full build).
    """
    step = _phases(progress)
    step("catalog and closed form")
    closed = {arch: counts.arch_counts(spec, arch) for arch in spec.arches}  # closed form, no wiring yet
    hw = catalog.load_catalog(spec.catalog_ref)  # catalog, checked against the spec before any wiring
    ports.use_catalog(spec.catalog_ref, hw)  # the switches' own port names read it (topogen.fabric.ports)
    catalog.check_spec(hw, spec, {arch: c.tiers for arch, c in closed.items()})
    step("wiring")
    fabrics = {arch: clos.generate(spec, arch) for arch in spec.arches}  # model
    ctx = BuildContext(spec, fabrics, closed)
    step("validation")
    ctx.reports = {arch: validate.validate(f, expected=f) for arch, f in fabrics.items()}  # validate (a generated fabric is the spec's own table)
    step("layout")
    ctx.layouts = {arch: layout.plan(f) for arch, f in fabrics.items()}  # layout: racks, U, cable lengths
    ctx.catalog = hw
    step("bill of materials")
    ctx.boms = {arch: bom.compile_bom(f, hw, ctx.layouts[arch]) for arch, f in fabrics.items()}  # BOM, media per cable by its length
    step("analyses and summary")
    job = replace(spec, gpus=spec.active_gpus, backup_nodes=0) if spec.backup_nodes else spec  # backup hosts are not in the job
    ctx.analysis = analysis.build_section(job) if spec.workload is not None else None  # analyses
    if spec.networks is not None:
        _build_networks(ctx, job)
    if traffic:
        from topogen.traffic import overview  # keeps scipy out of start-up (only build --traffic needs it)

        wl = spec.workload
        ep = analysis.alltoall_group(job, wl) if wl is not None and wl.model.is_moe else None  # the EP all-to-all, where the workload says its group
        ctx.traffic = overview.build_section(fabrics, analysis.hb_gbps_or_none(spec), ep)  # traffic on the wiring
    ctx.summary = make_summary(ctx)
    return ctx


def _phases(progress: Callable[[str], None] | None) -> Callable[[str], None]:
    """``progress`` called at each phase start, after :func:`~topogen.util.interrupts.checkpoint`: a lost Ctrl-C stops the next phase."""

    def step(phase: str) -> None:
        interrupts.checkpoint()
        if progress is not None:
            progress(phase)

    return step


def storage_required(spec: Spec, job: Spec) -> dict[str, Any]:
    """The storage bandwidth the spec asks for, GB/s: ``per_node_GBps``, ``aggregate_GBps`` and their ``source``.

    ``from: checkpoint`` takes the write rate of ``topogen analyze checkpoint`` on the
    spec's workload (the job's GPUs): one figure for the analysis and the storage fabric.
    """
    req = spec.networks.storage.required
    if req is None:
        return {"source": None, "per_node_GBps": None, "aggregate_GBps": None}
    if req.source == "checkpoint":
        if spec.workload is None:
            raise InputError([Problem("networks.storage.required.from", "from: checkpoint needs the spec's workload (model, parallelism, checkpoint)", "add a workload: section, or give per_node_GBps / per_gpu_GBps / aggregate_GBps")])
        row = analysis.checkpoint_report([job]).rows[0]
        return {"source": "checkpoint", "per_node_GBps": row["write_per_node_GBps"], "aggregate_GBps": row["write_GBps"]}
    if req.source == "per_gpu_GBps":
        return {"source": req.source, "per_node_GBps": req.per_gpu_GBps * spec.gpus_per_node, "aggregate_GBps": req.per_gpu_GBps * job.gpus}
    return {"source": req.source, "per_node_GBps": req.per_node_GBps, "aggregate_GBps": req.aggregate_GBps}


def _build_networks(ctx: BuildContext, job: Spec) -> None:
    """Storage, in-band and OOB per architecture: plan against the catalog, wire, validate, bill, address."""
    spec = ctx.spec
    ctx.storage_required = storage_required(spec, job)
    lay = resolve_layout(spec.layout, spec.hb_domain, spec.gpus_per_node, node_u(spec))
    per_rack = max(1, lay.gpus_per_rack // spec.gpus_per_node)
    for arch, f in ctx.fabrics.items():
        fabric_racks = sum(1 for k in ctx.layouts[arch].racks.kind if k != "compute")
        plan = network_bom.plan_for(spec, ctx.catalog, len(f.switches), per_rack, lay.switches_per_rack, ctx.storage_required["aggregate_GBps"], fabric_racks, ctx.storage_required["per_node_GBps"], f)
        ctx.networks[arch], ctx.network_layouts[arch] = wire_and_place(plan, ctx.layouts[arch])
        ctx.networks[arch].compute_names = [s.name for s in f.switches]  # findings name the compute switches as cabling.csv does
        ctx.network_findings[arch] = validate_networks(ctx.networks[arch], ctx.storage_required)
        ctx.network_boms[arch] = network_bom.network_bom(ctx.networks[arch], ctx.catalog, ctx.network_layouts[arch].length_m, lay.outside_run_m)
        ctx.network_addresses[arch] = netaddr.plan(ctx.networks[arch], spec.addressing, arch)  # a pool too small: InputError (exit 2)


def resolve_formats(formats: str | None) -> list[str]:
    """Exporter names from a comma-separated ``--formats`` value.

    Unset: every exporter but the day-0 configuration formats (:data:`CONFIG_FORMATS`);
    ``all``: every exporter; ``config`` stands for the configuration formats.
    """
    if formats is None or formats.strip() == "":
        return [f for f in EXPORTERS if f not in CONFIG_FORMATS]
    if formats.strip() == "all":
        return list(EXPORTERS)
    names = [f.strip() for f in formats.split(",") if f.strip()]
    names = [g for f in names for g in (CONFIG_FORMATS if f == "config" else (f,))]
    bad = [f for f in names if f not in EXPORTERS]
    if bad:
        raise InputError([Problem("formats", f"unknown format(s) {', '.join(map(repr, bad))}", f"valid formats: {', '.join(EXPORTERS)}, 'config' ({', '.join(CONFIG_FORMATS)}), or 'all'")])
    return [f for f in EXPORTERS if f in names]


def export_formats(ctx: BuildContext, formats: list[str]) -> list[str]:
    """The exporters to run: always ``validation``; only it when a fabric has errors.

    A wiring that failed validation must not leave cabling sheets, BOMs or
    diagrams behind that an installer could take for a good design.
    """
    if not ctx.valid:
        return ["validation"]
    return [f for f in EXPORTERS if f in formats or f == "validation"]


def write_outputs(ctx: BuildContext, out_dir: Path, formats: list[str], jobs: int = 1, force: bool = False, progress: Callable[[str], None] | None = None) -> list[Path]:
    """Write the chosen exports, ``summary.json`` and ``manifest.json`` into ``out_dir`` atomically.

    ``out_dir`` is replaced as :mod:`topogen.util.outdir` allows (``force``: also topogen
    outputs changed since written); notes for the user go to ``ctx.messages``.

    ``jobs > 1`` runs the exporters in that many worker processes forked after
    the build (:mod:`topogen.exports.workers`); the files are byte-identical.
    """
    step = _phases(progress)
    ctx.messages.extend(technology.skipped(ctx, formats))  # an InfiniBand fabric's BGP files, an Ethernet fabric's OpenSM files
    if any(f in ADDRESSED for f in formats):
        addressing.check(ctx.fabrics)  # a pool too small: exit 2 before the output directory is touched
    with atomic_dir(out_dir, force=force, notes=ctx.messages) as tmp:
        step(f"writing {', '.join(formats)}" + (f" ({jobs} workers)" if jobs > 1 and len(formats) > 1 else ""))
        written = workers.run(ctx, tmp, formats, jobs, getattr(progress, "detail", None), getattr(progress, "paused", None))
        step("manifest")
        summary_path = tmp / "summary.json"
        write_output_text(summary_path, json.dumps(ctx.summary, indent=2, sort_keys=False) + "\n")
        written.append(summary_path)
        rel = _seal(ctx.spec, tmp, written)
    return [Path(out_dir) / r for r in rel]


def write_validation(reports: list[validate.Report], spec: Spec, out_dir: Path, force: bool = False, notes: list[str] | None = None) -> list[Path]:
    """``validate --out``: each report as ``<arch>/validation.json`` and a ``manifest.json``, atomically.

    The same output-directory contract as :func:`write_outputs` (:mod:`topogen.outdir`).
    """
    with atomic_dir(out_dir, force=force, notes=notes) as tmp:
        written = []
        for r in reports:
            (tmp / r.arch).mkdir()
            write_report(r, tmp / r.arch / "validation.json")
            written.append(tmp / r.arch / "validation.json")
        rel = _seal(spec, tmp, written)
    return [Path(out_dir) / r for r in rel]


def _seal(spec: Spec, root: Path, files: list[Path]) -> list[Path]:
    """Write ``manifest.json`` listing ``files`` (what makes ``root`` topogen's own); every path, relative."""
    entries = []
    rel = relative(files, root)
    for i in sorted(range(len(files)), key=rel.__getitem__):
        size, sha = digest(files[i])  # hashed while written; files written by other tools are read
        entries.append({"path": rel[i], "bytes": size, "sha256": sha})
    manifest = {"generator": f"topogen {__version__}", "spec_sha256": spec.digest(), "files": entries}
    write_output_text(root / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return [Path(r) for r in rel] + [Path("manifest.json")]
