"""ICMP echo between GPU namespaces: raw sockets made inside each namespace (setns), no ``ping`` processes."""

from __future__ import annotations

import ctypes
import os
import select
import socket
import struct
import time

from topogen.config.emulation.lab import Host

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def socket_in(ns: str) -> socket.socket:
    """A raw ICMP socket living in namespace ``ns`` (made there by setns, this thread back home after)."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {ns}")
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(home)
        os.close(target)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping_pairs(pairs: list[tuple[Host, Host]], tries: int = 3, wait_s: float = 1.0) -> set[int]:
    """Indices of the pairs whose echo request came back (each source sends from its own namespace)."""
    socks: dict[str, socket.socket] = {}
    try:
        for src, _ in pairs:
            if src.ns not in socks:
                socks[src.ns] = socket_in(src.ns)
                socks[src.ns].setblocking(False)
        ok: set[int] = set()
        for _ in range(tries):
            todo = [i for i in range(len(pairs)) if i not in ok]
            if not todo:
                break
            for i in todo:
                src, dst = pairs[i]
                ident, seq = (i >> 16) & 0xFFFF, i & 0xFFFF
                head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
                payload = b"topogen"
                pkt = struct.pack("!BBHHH", 8, 0, _checksum(head + payload), ident, seq) + payload
                try:
                    socks[src.ns].sendto(pkt, (dst.ip, 0))
                except OSError:
                    pass
            end = time.monotonic() + wait_s
            by_fd = {s.fileno(): (ns, s) for ns, s in socks.items()}
            while time.monotonic() < end and len(ok) < len(pairs):
                r, _, _ = select.select(list(by_fd), [], [], max(0.0, end - time.monotonic()))
                for fd in r:
                    ns, s = by_fd[fd]
                    while True:
                        try:
                            data, addr = s.recvfrom(2048)
                        except BlockingIOError:
                            break
                        ihl = (data[0] & 0x0F) * 4
                        typ, _, _, ident, seq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
                        i = (ident << 16) | seq
                        if typ == 0 and i < len(pairs) and pairs[i][0].ns == ns and pairs[i][1].ip == addr[0]:
                            ok.add(i)
        return ok
    finally:
        for s in socks.values():
            s.close()
