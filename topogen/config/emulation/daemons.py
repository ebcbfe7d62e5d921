"""FRR in the switch namespaces: the daemons each file needs started (zebra, bgpd, bfdd, staticd), the file loaded, their state read over the vty sockets."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from topogen.config.emulation.lab import FRR_DIR, Router


def vty(sock: Path, command: str, timeout: float = 10.0) -> str:
    """One command on a daemon's vty socket (the protocol vtysh speaks): its output."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(sock))
        s.sendall(command.encode() + b"\0")
        buf = bytearray()
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
            if len(buf) >= 4 and buf[-4:-1] == b"\0\0\0":
                break
    return buf[:-4].decode(errors="replace")


def vty_json(sock: Path, command: str) -> dict:
    text = vty(sock, command)
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return {}


class Daemons:
    """The FRR part of :class:`~topogen.config.emulate.Emulation`: start the daemons, read sessions and routes."""

    def start_frr(self) -> None:
        for r in self.lab.routers:
            d = self.res.private_dir(r.ns)
            self.res.private_file(f"{r.ns}/frr.conf", r.config)
            self.res.private_file(f"{r.ns}/empty.conf", "")
            for daemon in r.daemons:  # what its statements need: a daemon missing leaves its lines unapplied
                cmd = ["ip", "netns", "exec", r.ns, str(FRR_DIR / daemon), "-N", r.ns, "--vty_socket", str(d), "-i", str(d / f"{daemon}.pid"), "-f", str(d / "empty.conf"), "-P", "0", "--log", f"file:{d / daemon}.log", "-z", str(d / "zserv.api")]
                if daemon == "bfdd":
                    cmd += ["--bfdctl", str(d / "bfdd.sock")]
                self.res.start(cmd, d / f"{daemon}.out")
        end = time.monotonic() + 30
        pending = list(self.lab.routers)
        while pending and time.monotonic() < end:
            pending = [r for r in pending if not all((self.res.tmp / r.ns / f"{dm}.vty").exists() for dm in r.daemons)]
            time.sleep(0.1)
        if pending:
            raise RuntimeError(f"FRR did not start in {pending[0].name} (see its logs)")
        for r in self.lab.routers:
            for dm in r.daemons:
                self.report.daemons[dm] = self.report.daemons.get(dm, 0) + 1
        loads = []
        for r in self.lab.routers:  # every router's file at once: no router waits for the one before
            d = self.res.tmp / r.ns
            loads.append((r, self.res.start(["vtysh", "--vty_socket", str(d), "-f", str(d / "frr.conf")])))
        for r, proc in loads:
            out, _ = proc.communicate()
            errs = [ln for ln in out.splitlines() if "Unknown command" in ln or ln.startswith("% ") or "line " in ln and "%" in ln]
            if proc.returncode != 0 or errs:
                self.fail(f"{r.name}: FRR refused lines of its frr.conf: {'; '.join(errs[:3]) or out.strip()[:300]}")

    def sock(self, r: Router, daemon: str) -> Path:
        return self.res.tmp / r.ns / f"{daemon}.vty"

    # -- state

    def sessions(self) -> dict[str, dict[str, str]]:
        """Router name -> {peer: state} from bgpd."""
        return {name: {p: v.get("state", "?") for p, v in peers.items()} for name, (_, peers) in self.bgp_summary().items()}

    def bgp_summary(self) -> dict[str, tuple[str, dict[str, dict]]]:
        """Router name -> (the AS its bgpd runs, {peer: bgpd's summary of it: state, remoteAs}); ("", {}) without bgpd."""
        out = {}
        for r in self.lab.routers:
            if "bgpd" not in r.daemons:
                out[r.name] = ("", {})
                continue
            data = (vty_json(self.sock(r, "bgpd"), "show bgp summary json").get("ipv4Unicast") or {})
            out[r.name] = (str(data.get("as", "")), data.get("peers", {}))
        return out

    def bgp_prefixes(self, r: Router) -> set[str]:
        """The prefixes in router ``r``'s BGP table (its own, redistributed, and those learnt)."""
        if "bgpd" not in r.daemons:
            return set()
        return set((vty_json(self.sock(r, "bgpd"), "show bgp ipv4 unicast json").get("routes") or {}))

    def leaf_routes(self, r: Router) -> dict[str, int]:
        """Prefix -> next hops in the kernel (FIB) of router ``r``, from zebra."""
        data = vty_json(self.sock(r, "zebra"), "show ip route json")
        out = {}
        for prefix, entries in data.items():
            for e in entries:
                if e.get("selected"):
                    out[prefix] = sum(1 for nh in e.get("nexthops", []) if nh.get("fib"))
        return out
