"""``topogen diff``: the plan against what the floor reports, with injected faults.

The real loop: generate the plan, write a miswired copy in ibnetdiscover format
(the exporter run on a mutated fabric), simulate it with ibsim, discover it with
``ibnetdiscover`` and diff. Every injected fault must come back once, of its
kind, naming its ends; nothing else may be reported. The same mutations go
through LLDP (``lldpctl -f json``-shaped files, one per device, hosts named as
in the NetBox/Slurm exports) and through an edited cabling CSV.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ibsim_fabric import MISSING, SKIP_REASON, discover, simulated

from topogen import pipeline
from topogen.asbuilt import End
from topogen.asbuilt import cabling as plan_reader
from topogen.cli import main
from topogen.exports.infiniband import ibnetdiscover as exporter
from topogen.fabric.model import LINK_COLUMNS, Fabric, LinkTable
from topogen.fabric.naming import GpuNames, NodeNames
from topogen.spec.cluster import build_spec


@dataclass
class Fault:
    """One injected fault: its class, the kind diff must report, the ends it touches, and the expected severity."""

    name: str
    kind: str
    ends: set
    severity: str | None = None  # None: whatever the design checks say


class Floor:
    """A mutable copy of a fabric's cables, edited by device and port names."""

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        n = fabric.gpus
        self.ids = {s.name: n + i for i, s in enumerate(fabric.switches)}
        self.gn = GpuNames(n, fabric.hb_domain)
        self.cols = {c: getattr(fabric.links, c).copy() for c in LINK_COLUMNS}
        self.faults: list[Fault] = []
        self.touched: set = set()

    def dev(self, name: str) -> int:
        return self.ids[name] if name in self.ids else self.gn.parse(name)

    def name(self, dev: int) -> str:
        return self.fabric.switches[dev - self.fabric.gpus].name if dev >= self.fabric.gpus else self.gn.name(dev)

    def row(self, dev: str, port: int, end: str = "z") -> int:
        d = self.dev(dev)
        hit = np.flatnonzero((self.cols[f"{end}_dev"] == d) & (self.cols[f"{end}_port"] == port))
        assert len(hit) == 1, (dev, port, end)
        return int(hit[0])

    def ends(self, i: int) -> set:
        a, z = int(self.cols["a_dev"][i]), int(self.cols["z_dev"][i])
        ap = f"nic{self.cols['a_port'][i]}" if a < self.fabric.gpus else f"p{self.cols['a_port'][i]}"
        return {End(self.name(a), ap), End(self.name(z), f"p{self.cols['z_port'][i]}")}

    def free_port(self, switch: str) -> int:
        d = self.dev(switch)
        used = set(self.cols["z_port"][self.cols["z_dev"] == d].tolist()) | set(self.cols["a_port"][self.cols["a_dev"] == d].tolist())
        used |= {int(p[1:]) for (s, p) in self.touched if s == switch}
        free = next(p for p in range(1, self.fabric.switches[d - self.fabric.gpus].radix + 1) if p not in used)
        self.touched.add((switch, f"p{free}"))
        return free

    def has_free(self, switch: str) -> bool:
        d = self.dev(switch)
        used = int((self.cols["z_dev"] == d).sum() + (self.cols["a_dev"] == d).sum()) + sum(s == switch for s, _ in self.touched)
        return used < self.fabric.switches[d - self.fabric.gpus].radix

    def upper_with_free(self, tier: int, not_: str = "") -> str:
        return next(s.name for s in self.fabric.switches if s.tier == tier and s.name != not_ and self.has_free(s.name))

    def _mark(self, ends: set) -> None:
        for e in ends:
            key = (e.device, e.port)
            assert key not in self.touched, f"faults overlap at {e}"
            self.touched.add(key)

    def swap(self, name: str, i: int, j: int, severity: str | None, ports_only: bool = False) -> None:
        before = self.ends(i) | self.ends(j)
        self._mark(before)
        keys = ("z_port",) if ports_only else ("z_dev", "z_port")
        for k in keys:
            self.cols[k][i], self.cols[k][j] = self.cols[k][j], self.cols[k][i]
        self.faults.append(Fault(name, "swapped", before, severity))

    def move_z(self, name: str, i: int, switch: str, kind: str) -> None:
        before = self.ends(i)
        self._mark(before)
        port = self.free_port(switch)
        self.cols["z_dev"][i], self.cols["z_port"][i] = self.dev(switch), port
        self.faults.append(Fault(name, kind, before | {End(switch, f"p{port}")}))

    def drop(self, name: str, i: int) -> None:
        ends = self.ends(i)
        self._mark(ends)
        self.faults.append(Fault(name, "missing", ends))
        for k in self.cols:
            self.cols[k] = np.delete(self.cols[k], i)

    def add(self, name: str, lower: str, upper: str) -> None:
        lp, up = self.free_port(lower), self.free_port(upper)
        row = {c: self.cols[c][0] for c in LINK_COLUMNS}
        tier = self.fabric.switches[self.dev(upper) - self.fabric.gpus].tier
        row.update(a_dev=self.dev(lower), a_port=lp, z_dev=self.dev(upper), z_port=up, tier=tier)
        for k in self.cols:
            self.cols[k] = np.append(self.cols[k], np.asarray([row[k]], dtype=self.cols[k].dtype))
        self.faults.append(Fault(name, "unexpected", {End(lower, f"p{lp}"), End(upper, f"p{up}")}))

    def fabric_as_built(self) -> Fabric:
        f = self.fabric
        return Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**self.cols), list(f.notes))


def _uplink(floor: Floor, leaf: str, nth: int = 0) -> int:
    d = floor.dev(leaf)
    return int(np.flatnonzero(floor.cols["a_dev"] == d)[nth])


def faults_rail_optimized(floor: Floor) -> None:
    """The seven fault classes on a 3-tier rail-optimized plan with free leaf and core ports (160 GPUs, dedicated rails)."""
    f = floor
    f.swap("swap within a rail", f.row("leaf-g0-r0", 1), f.row("leaf-g0-r0", 2), "warning", ports_only=True)
    f.swap("swap across rails", f.row("leaf-g0-r1", 3), f.row("leaf-g0-r2", 3), "error")
    f.move_z("wrong port on the right switch", f.row("leaf-g2-r3", 1), "leaf-g2-r3", "wrong-port")
    f.move_z("GPU to the wrong leaf", f.row("leaf-g2-r4", 2), "leaf-g2-r5", "wrong-device")
    spine = next(s.name for s in f.fabric.switches if s.tier == 2)
    up = _uplink(f, spine)
    f.move_z("uplink to the wrong spine (a spine's uplink on the wrong core)", up, f.upper_with_free(3, f.name(int(f.cols["z_dev"][up]))), "wrong-device")
    f.add("extra cable", "leaf-g2-r6", f.upper_with_free(3))
    f.drop("missing cable", _uplink(f, "leaf-g0-r5"))


def faults_rail_only(floor: Floor) -> None:
    """The seven fault classes on 2-tier rail-only rails with free ports (80 GPUs, radix 8)."""
    f = floor
    f.swap("swap within a rail", f.row("rail0-leaf-0", 1), f.row("rail0-leaf-0", 2), "warning", ports_only=True)
    f.swap("swap across rails", f.row("rail1-leaf-0", 1), f.row("rail2-leaf-0", 1), "error")
    f.move_z("wrong port on the right switch", f.row("rail3-leaf-2", 1), "rail3-leaf-2", "wrong-port")
    f.move_z("GPU to the wrong leaf", f.row("rail4-leaf-0", 1), "rail4-leaf-2", "wrong-device")
    up = _uplink(f, "rail5-leaf-0")
    f.move_z("uplink to the wrong spine", up, "rail5-spine-1" if f.name(int(f.cols["z_dev"][up])) == "rail5-spine-0" else "rail5-spine-0", "wrong-device")
    f.add("extra cable", "rail6-leaf-2", "rail6-spine-0")
    f.drop("missing cable", _uplink(f, "rail7-leaf-1"))


CASES = {
    "rail-optimized": ({"gpus": 160, "hb_domain": 8, "radix": 16, "rail_packing": "dedicated"}, faults_rail_optimized),
    "rail-only": ({"gpus": 80, "hb_domain": 8, "radix": 8}, faults_rail_only),
}


@pytest.fixture(scope="module", params=list(CASES))
def floor(request, tmp_path_factory):
    """A plan written to disk (cabling + ibnetdiscover), and its miswired copy on the 'floor'."""
    arch = request.param
    data, inject = CASES[arch]
    spec = build_spec({"name": "floor", "arch": arch, **data})
    ctx = pipeline.build(spec)
    out = tmp_path_factory.mktemp("plan") / "floor"
    pipeline.write_outputs(ctx, out, ["cabling", "ibnetdiscover"])
    fl = Floor(ctx.fabrics[arch])
    inject(fl)
    assert len(fl.faults) == 7
    return out, fl


def _check(result: dict, fl: Floor) -> None:
    """Every fault found once with its kind and ends; nothing invented."""
    devs = result["deviations"]
    assert len(devs) == len(fl.faults), [d["kind"] for d in devs]
    for fault in fl.faults:
        want = {str(e) for e in fault.ends}
        hits = [d for d in devs if {x for c in d["planned"] + d["found"] for x in (c["a"], c["z"])} == want]
        assert len(hits) == 1, f"{fault.name}: {want} not reported exactly once"
        d = hits[0]
        assert d["kind"] == fault.kind, f"{fault.name}: reported as {d['kind']}"
        if fault.severity:
            assert d["severity"] == fault.severity, f"{fault.name}: {d['severity']} ({d['because']})"
        assert d["fix"]
    assert result["counts"]["swapped"] == 2
    assert result["design_check"]["valid"] is False  # the across-rails swap, the missing uplink...


def _diff(*args) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["diff", *map(str, args), "--json"], catch_exceptions=False)
    return res.exit_code, json.loads(res.output)


def _write_topo(fabric: Fabric, dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for sub in exporter.subnets(fabric):
        p = dest / f"{sub.name}.topo"
        exporter.write_subnet(fabric, sub, p)
        paths.append(p)
    return paths


def test_plan_against_itself_is_identical(floor, tmp_path):
    out, fl = floor
    arch = fl.fabric.arch
    code, result = _diff(out, *sorted((out / arch / "ibnetdiscover").glob("*.topo")))
    assert code == 0 and result["deviations"] == [] and result["identical"] == len(fl.fabric.links)
    code, result = _diff(out / arch / "cabling.csv", out / arch / "cabling.csv")
    assert code == 0 and result["identical"] == len(fl.fabric.links)


def test_miswired_ibnetdiscover_file(floor, tmp_path):
    out, fl = floor
    files = _write_topo(fl.fabric_as_built(), tmp_path / "floor")
    code, result = _diff(out, *files)
    assert code == 1
    _check(result, fl)


@pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
def test_miswired_fabric_simulated_and_discovered(floor, tmp_path):
    """The loop with the real tools: ibsim simulates the miswired floor, ibnetdiscover reports it."""
    out, fl = floor
    discovered = []
    for topo in _write_topo(fl.fabric_as_built(), tmp_path / "floor"):
        work = tmp_path / topo.stem
        work.mkdir()
        with simulated(topo, work) as env:
            discovered.append(discover(env, tmp_path / f"discovered-{topo.stem}.topo"))
    code, result = _diff(out, *discovered)
    assert code == 1
    _check(result, fl)
    for d in result["deviations"]:  # located: the found cable's line in the discovered file names its ends
        for c in d["found"]:
            name, _, line = c["where"].rpartition(" line ")
            text = (tmp_path / name).read_text().splitlines()[int(line) - 1]
            port = {c["a"], c["z"]}
            assert any(x.split(":")[0] in text for x in port), (c, text)


def lldp_files(cables, spec, dest: Path) -> Path:
    """lldpctl -f json output of every device, from its cables (hosts named as in NetBox/Slurm)."""
    nodes = NodeNames(spec.gpus, spec.hb_domain, spec.gpus_per_node)
    gn = GpuNames(spec.gpus, spec.hb_domain)

    def lldp_name(e: End) -> tuple[str, str]:
        g = gn.parse(e.device)
        if g is None:
            return e.device, e.port
        rank = g % spec.hb_domain
        return nodes.name(g // spec.gpus_per_node), nodes.interface(rank, int(e.port[3:]))

    per: dict[str, list] = {}
    for c in cables:
        for here, there in ((c.a, c.z), (c.z, c.a)):
            host, ifname = lldp_name(here)
            peer, pport = lldp_name(there)
            per.setdefault(host, []).append(
                {ifname: {"via": "LLDP", "rid": "1", "age": "0 day, 00:01:00",
                          "chassis": {peer: {"id": {"type": "mac", "value": "0c:42:a1:00:00:01"}, "descr": "topogen test", "capability": [{"type": "Bridge", "enabled": True}]}},
                          "port": {"id": {"type": "ifname", "value": pport}, "descr": pport, "ttl": "120"}}}
            )
    dest.mkdir(parents=True, exist_ok=True)
    for host, items in per.items():
        body = {"lldp": {"interface": items if len(items) > 1 else items[0]}}
        (dest / f"{host}.json").write_text(json.dumps(body, indent=2))
    return dest


def test_miswired_lldp(floor, tmp_path):
    out, fl = floor
    as_built = plan_reader.from_fabric(fl.fabric_as_built())
    code, result = _diff(out / fl.fabric.arch, lldp_files(as_built.cables, fl.fabric.spec, tmp_path / "lldp"))
    assert code == 1
    _check(result, fl)
    assert result["format"] == "lldp"


def test_miswired_cabling_csv(floor, tmp_path):
    out, fl = floor
    f = tmp_path / "floor.csv"
    with open(f, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["a_device", "a_port", "z_device", "z_port", "a_speed_gbps", "z_speed_gbps"])
        for c in plan_reader.from_fabric(fl.fabric_as_built()).cables:
            w.writerow([c.a.device, c.a.port, c.z.device, c.z.port, 400, 400])
    code, result = _diff(out / fl.fabric.arch / "cabling.csv", f)
    assert code == 1
    _check(result, fl)


def test_bad_input_exit_2_names_the_line(floor, tmp_path):
    out, fl = floor
    topo = sorted((out / fl.fabric.arch / "ibnetdiscover").glob("*.topo"))[0]
    lines = topo.read_text().splitlines()
    lines[7] = "[2]\tgarbage"
    bad = tmp_path / "bad.topo"
    bad.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(main, ["diff", str(out), str(bad)])
    assert res.exit_code == 2
    assert "bad.topo line 8: not an ibnetdiscover line" in res.output
    (tmp_path / "x.json").write_text('{"lldp": {"interface": [\n  {"p1": }\n]}}')
    res = CliRunner().invoke(main, ["diff", str(out), str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "x.json line 2" in res.output
    res = CliRunner().invoke(main, ["diff", str(out), str(tmp_path / "nope.topo")])
    assert res.exit_code == 2 and "does not exist" in res.output
    res = CliRunner().invoke(main, ["diff", str(tmp_path / "noplan"), str(topo)])
    assert res.exit_code == 2 and "noplan" in res.output


def test_text_report_names_ends_and_fix(floor, tmp_path):
    out, fl = floor
    files = _write_topo(fl.fabric_as_built(), tmp_path / "floor")
    res = CliRunner().invoke(main, ["diff", str(out), *map(str, files)])
    assert res.exit_code == 1
    text = res.output
    assert "7 deviation(s)" in text and "2 swapped" in text and "1 missing" in text and "1 unexpected" in text
    assert "fix:     swap the plugs in" in text and "fix:     install a cable from" in text and "fix:     remove the cable between" in text
    assert "design checks on the as-built wiring: validation: INVALID" in text
