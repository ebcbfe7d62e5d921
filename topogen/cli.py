"""The ``topogen`` command line: parse, call the pipeline, render. Nothing else lives here."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import __version__, pipeline
from .errors import InputError
from .model import link_tier_name
from .spec import Spec, load_spec

EXIT_INPUT = 2


def spec_options(f):
    """The spec flags, declared once and shared by every command that takes a spec."""
    opts = [
        click.argument("spec", required=False),
        click.option("--name", help="Cluster name (output goes to out/<name>/)."),
        click.option("--gpus", help="Number of GPUs N (a multiple of --hb-domain)."),
        click.option("--hb-domain", "hb_domain", help="GPUs per HB domain K (8, 72, 256...)."),
        click.option("--radix", help="Switch ports at link speed (even)."),
        click.option("--link-speed", "link_speed", help="Link speed in Gb/s (default 400)."),
        click.option("--arch", help="rail-optimized, rail-only or both (default both)."),
        click.option("--rail-packing", "rail_packing", help="shared (default) or dedicated."),
        click.option("--provision", help="full (default) or minimal uplinks on partly filled switches."),
        click.option("--catalog", help="Hardware catalog name or path (default paper)."),
        click.option("--planes", help="NIC ports per GPU, one fabric plane each (default 1)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


SPEC_KEYS = ("name", "gpus", "hb_domain", "radix", "link_speed", "arch", "rail_packing", "provision", "catalog", "planes")


def resolve(spec_ref: str | None, kwargs: dict) -> Spec:
    overrides = {k: kwargs.pop(k) for k in SPEC_KEYS}
    if spec_ref is None and overrides.get("name") is None and all(overrides.get(k) is not None for k in ("gpus", "hb_domain", "radix")):
        overrides["name"] = f"n{overrides['gpus']}-k{overrides['hb_domain']}-r{overrides['radix']}"
    return load_spec(spec_ref, overrides)


def fail_input(exc: InputError) -> None:
    click.echo(exc.render(), err=True)
    sys.exit(EXIT_INPUT)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="topogen")
def main() -> None:
    """Port-level scale-out fabrics for GPU clusters: rail-only and rail-optimized Clos."""


@main.command()
@spec_options
@click.option("--out", "out", type=click.Path(file_okay=False), help="Output directory (default out/<name>).")
@click.option("--formats", help="Comma-separated exporters to run (default all).")
def build(spec: str | None, out: str | None, formats: str | None, **kwargs) -> None:
    """Build the wiring of SPEC (a YAML file or preset name) and write out/<name>/."""
    try:
        s = resolve(spec, kwargs)
        fmts = pipeline.resolve_formats(formats)
        out_dir = Path(out) if out else Path("out") / s.name
        ctx = pipeline.build(s)
        pipeline.write_outputs(ctx, out_dir, fmts)
    except InputError as exc:
        fail_input(exc)
    click.echo(render_summary(ctx, out_dir))


def render_summary(ctx: pipeline.BuildContext, out_dir: Path) -> str:
    s = ctx.spec
    lines = [f"{s.name}: {s.gpus} GPUs, HB domain {s.hb_domain} ({s.domains} domains), radix {s.radix}, {s.link_speed} Gb/s, {s.planes} plane(s)"]
    for arch, sec in ctx.summary["architectures"].items():
        tiers = " + ".join(f"{n} {role}" for n, role in zip(sec["switches_per_tier"], _roles(sec["tiers"])))
        links = ", ".join(f"{n} {link_tier_name(t)}" for t, n in enumerate(sec["links_per_tier"], 1))
        lines.append(f"  {arch:15s} {sec['tiers']} tier(s), {sec['switches']} switches ({tiers}); links: {links}; unused switch ports: {sec['unused_switch_ports']}")
        for note in sec["notes"]:
            lines.append(f"  {'':15s} note: {note}")
    lines.append(f"wrote {out_dir}/")
    return "\n".join(lines)


def _roles(t: int) -> list[str]:
    from .model import tier_role

    return [tier_role(j) for j in range(1, t + 1)]


if __name__ == "__main__":  # pragma: no cover
    main()
