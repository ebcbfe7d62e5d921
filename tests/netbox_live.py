"""A real NetBox for the tests: the session fixture, and its bulk-import page as a browser posts it.

``tools/netbox_server.py up`` installs NetBox (its own Python 3.12 venv, PostgreSQL and Redis
from Debian), migrates once and serves it on 127.0.0.1; CI runs it before the tests
(``.ci/run``), and the fixture runs it too when no server is up. Tests skip only when NetBox
cannot be installed here, with the reason.
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
RUN = secrets.token_hex(2)  # in cluster names: the migrated database is kept across test sessions
SERVER = ROOT / "tools" / "netbox_server.py"

# the bulk-import page of each kind (the API endpoint without /api/)
IMPORT_PAGE = {
    "site": "dcim/sites", "manufacturer": "dcim/manufacturers", "device-role": "dcim/device-roles", "rack-role": "dcim/rack-roles",
    "device-type": "dcim/device-types", "rir": "ipam/rirs", "asn": "ipam/asns", "rack": "dcim/racks", "device": "dcim/devices",
    "interface": "dcim/interfaces", "cable": "dcim/cables", "vrf": "ipam/vrfs", "prefix": "ipam/prefixes", "ip-address": "ipam/ip-addresses",
}  # fmt: skip


@pytest.fixture(scope="session")
def netbox():
    """``{"url", "token", "username", "password"}`` of a running NetBox 4.7; one this session starts, it stops."""
    state = _state()
    started = state is None
    if started:
        res = subprocess.run([sys.executable, str(SERVER), "up"], capture_output=True, text=True, timeout=3000)
        if res.returncode != 0:
            pytest.skip(f"NetBox cannot be installed or started here: {res.stderr.strip()[-600:]}")
        state = json.loads(Path(res.stdout.strip()).read_text())
    yield state
    if started:
        subprocess.run([sys.executable, str(SERVER), "down"], capture_output=True, timeout=120)


def _state() -> dict | None:
    """The state of a NetBox that ``tools/netbox_server.py up`` started and that answers, else None."""
    res = subprocess.run([sys.executable, str(SERVER), "state"], capture_output=True, text=True, timeout=180)
    return json.loads(res.stdout) if res.returncode == 0 else None


class Browser:
    """NetBox's web UI as a browser uses it: a login session, CSRF tokens, multipart forms with CRLF."""

    def __init__(self, nb: dict):
        self.url = nb["url"]
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect)
        page = self.get("/login/")
        self.post("/login/", {"csrfmiddlewaretoken": _csrf(page), "username": nb["username"], "password": nb["password"], "next": "/"})

    def get(self, path: str) -> str:
        with self.opener.open(self.url + path, timeout=600) as resp:
            return resp.read().decode()

    def post(self, path: str, fields: dict[str, str]) -> tuple[int, str, str]:
        """A ``multipart/form-data`` POST as a browser sends it; returns (status, Location, body)."""
        boundary = "----topogen" + secrets.token_hex(8)
        body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields.items()) + f"--{boundary}--\r\n".encode()
        req = urllib.request.Request(self.url + path, data=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "Referer": self.url + path})
        try:
            with self.opener.open(req, timeout=900) as resp:
                return resp.status, resp.headers.get("Location", ""), resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Location", ""), exc.read().decode("utf-8", "replace")

    def import_csv(self, kind: str, path: Path) -> tuple[bool, str]:
        """Paste ``path`` into ``kind``'s bulk-import page (CRLF, as a textarea posts it); (imported, errors)."""
        page = IMPORT_PAGE[kind]
        form = self.get(f"/{page}/import/")
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
        status, location, body = self.post(f"/{page}/import/", {"csrfmiddlewaretoken": _csrf(form), "import_method": "direct", "data": text, "format": "csv", "csv_delimiter": ","})
        if status == 302 and "/login/" not in location:
            return True, ""
        return False, _errors(body) or f"HTTP {status} {location}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _csrf(page: str) -> str:
    m = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert m, "no CSRF token on the page"
    return m.group(1)


def _errors(body: str) -> str:
    """The error texts NetBox renders on a refused import."""
    found = re.findall(r'class="[^"]*(?:toast-body|alert-danger|errorlist|invalid-feedback)[^"]*"[^>]*>(.*?)</', body, flags=re.S)
    return "; ".join(dict.fromkeys(re.sub(r"<[^>]+>|\s+", " ", f).strip() for f in found if f.strip()))[:3000]
