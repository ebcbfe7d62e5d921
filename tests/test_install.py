"""Install like a user: build the sdist and wheel, install the wheel into a fresh venv, run
topogen from a directory outside the checkout. Slow (about a minute: a build and a venv),
marked ``install``; it runs in ``make test`` and CI (``.ci/run`` also does it in shell)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.install


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin dir, wheel path): the project built with ``python -m build`` and pip-installed."""
    base = tmp_path_factory.mktemp("install")
    dist = base / "dist"
    res = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "SetuptoolsDeprecationWarning" not in res.stdout + res.stderr
    assert "absent from the `packages` configuration" not in res.stdout + res.stderr
    wheel = next(dist.glob("*.whl"))
    env_dir = base / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    res = subprocess.run([str(bin_dir / "pip"), "install", "--quiet", str(wheel)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    return bin_dir, wheel


def run(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / "topogen"), *args], cwd=cwd, capture_output=True, text=True)


def test_wheel_ships_templates_and_license(installed):
    _, wheel = installed
    names = zipfile.ZipFile(wheel).namelist()
    bundled = [p.relative_to(ROOT / "templates").as_posix() for p in (ROOT / "templates").rglob("*.yaml")]
    assert {b.split("/")[0] for b in bundled} >= {"clusters", "catalogs"}
    for rel in bundled:  # every kind: presets, catalogs, and any folder another feature adds
        assert f"topogen/templates/{rel}" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith("templates/") for n in names)  # no stray top-level package
    shipped = {n.rsplit("/", 1)[0] for n in names if n.startswith("topogen/") and n.endswith("/__init__.py")}
    in_checkout = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "topogen").rglob("__init__.py")}
    assert in_checkout <= shipped  # every subpackage of the checkout ships


def test_build_and_validate_from_another_directory(installed, tmp_path):
    bin_dir, _ = installed
    res = run(bin_dir, tmp_path, "build", "demo")
    assert res.returncode == 0, res.stderr
    # no traceback, no warning: at most progress lines (a loaded machine passes the 2 s mark)
    assert [line for line in res.stderr.splitlines() if not re.match(r"topogen: \[ *\d+\.\d s\] ", line)] == []
    out = tmp_path / "out" / "demo"
    manifest = json.loads((out / "manifest.json").read_text())
    assert {f["path"] for f in manifest["files"]} >= {"rail-only/cabling.csv", "rail-optimized/topology.json", "summary.json"}
    res = run(bin_dir, tmp_path, "validate", "out/demo/rail-only/cabling.csv", "--spec", "demo")
    assert res.returncode == 0, res.stdout + res.stderr
    res = run(bin_dir, tmp_path, "validate", "out/demo/rail-optimized/topology.json")
    assert res.returncode == 0, res.stdout + res.stderr
    res = run(bin_dir, tmp_path, "build", "gh200-32k", "--catalog", "ndr-400g", "--arch", "rail-only", "--formats", "bom")
    assert res.returncode == 0, res.stderr


def test_installed_lists_and_library(installed, tmp_path):
    bin_dir, _ = installed
    res = run(bin_dir, tmp_path, "presets")
    assert res.returncode == 0 and any(line.startswith("demo ") for line in res.stdout.split("\n"))
    names = [line.split()[0] for line in res.stdout.splitlines()]
    assert names == sorted(p.stem for p in (ROOT / "templates" / "clusters").glob("*.yaml"))
    res = run(bin_dir, tmp_path, "catalogs")
    assert res.returncode == 0 and "paper" in res.stdout.split()
    code = (
        "import topogen; from topogen import pipeline; from topogen.spec import load_spec\n"
        "ctx = pipeline.build(load_spec('demo', {'arch': 'rail-only'}))\n"
        "print(topogen.__file__); print(ctx.reports['rail-only'].valid)\n"
    )
    res = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    where, valid = res.stdout.split()
    assert "site-packages" in where and not where.startswith(str(ROOT)) and valid == "True"
