#!/usr/bin/env python3
"""A real NetBox for the test suite: install once, migrate once, serve on 127.0.0.1.

``python3 tools/netbox_server.py up`` installs what is missing and starts NetBox; it prints
the state file's path (URL and API token, mode 600) that the tests' session fixture reads.
``down`` stops what ``up`` started. Standard library only: CI runs it with Debian's Python.

* PostgreSQL and Redis from Debian (``apt-get install postgresql redis-server`` when root).
* NetBox ``NETBOX_VERSION`` from PyPI in its own Python 3.12 venv (pyenv's 3.12 when the
  system Python is older), outside the checkout, under ``$TOPOGEN_NETBOX_HOME``
  (default ``/var/tmp/topogen-netbox-<version>``), so a rerun reuses it.
* Its own PostgreSQL cluster (data dir and unix socket under that home, so it never touches
  another PostgreSQL on the machine), migrated once: the migrated database is kept and reused
  while the NetBox version matches (``migrated-<version>`` marker).
* Redis on a free 127.0.0.1 port, gunicorn on a free 127.0.0.1 port, one RQ worker (bulk
  imports above 100 rows run as background jobs). ``RQ_DEFAULT_TIMEOUT`` is NetBox's default.
* A superuser ``topogen`` and a v2 API token provisioned through NetBox's own API.
"""

from __future__ import annotations

import glob
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

NETBOX_VERSION = "4.7.3"
HOME = Path(os.environ.get("TOPOGEN_NETBOX_HOME", f"/var/tmp/topogen-netbox-{NETBOX_VERSION}"))
STATE = HOME / "server.json"
VENV = HOME / "venv"
PG = HOME / "pg"
RUN = HOME / "run"
USER = "topogen"


def log(msg: str) -> None:
    print(f"netbox_server: {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def ensure_packages() -> None:
    if pg_bin() and shutil.which("redis-server"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise SystemExit("PostgreSQL or Redis missing and cannot apt-get install them (not root on Debian)")
    log("apt-get install postgresql redis-server")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "update", "-qq"], env=env, stdout=subprocess.DEVNULL)
    run(["apt-get", "install", "-y", "-qq", "postgresql", "redis-server"], env=env, stdout=subprocess.DEVNULL)


def python312() -> str:
    """A Python >= 3.12 that runs (pyenv's shims name versions that are not selected)."""
    cands = [sys.executable]
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        root = str(Path.home() / ".pyenv")
    cands += sorted(glob.glob(f"{root}/versions/3.1[2-9]*/bin/python3"))
    cands += [p for p in (shutil.which("python3.12"), shutil.which("python3.13")) if p]
    for c in cands:
        ok = subprocess.run([c, "-c", "import sys, venv; sys.exit(sys.version_info < (3, 12))"], capture_output=True)
        if ok.returncode == 0:
            return c
    raise SystemExit("NetBox needs Python >= 3.12: none found (system, pyenv, PATH)")


def ensure_venv() -> None:
    ok = VENV / f".netbox-{NETBOX_VERSION}"
    if ok.exists():
        return
    shutil.rmtree(VENV, ignore_errors=True)
    log(f"installing netbox=={NETBOX_VERSION} into {VENV}")
    run([python312(), "-m", "venv", str(VENV)])
    run([str(VENV / "bin/pip"), "install", "-q", f"netbox=={NETBOX_VERSION}", "gunicorn"])  # the gunicorn NetBox pins)
    ok.touch()


def as_postgres(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return run(cmd, **kw)


def as_postgres_status(b: Path) -> int:
    cmd = [str(b / "pg_ctl"), "-D", str(PG), "status"]
    return subprocess.run((["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []) + cmd, capture_output=True).returncode


def start_postgres(pg_port: int) -> None:
    b = pg_bin()
    RUN.mkdir(parents=True, exist_ok=True)
    os.chmod(RUN, 0o777)
    if not (PG / "PG_VERSION").exists():
        shutil.rmtree(PG, ignore_errors=True)
        PG.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(PG, "postgres", "postgres")
        as_postgres([str(b / "initdb"), "-D", str(PG), "-A", "trust", "-U", "postgres", "-E", "UTF8"], stdout=subprocess.DEVNULL)
        (HOME / f"migrated-{NETBOX_VERSION}").unlink(missing_ok=True)
    if (PG / "postmaster.pid").exists() and as_postgres_status(b) == 0:  # left by an interrupted run
        as_postgres([str(b / "pg_ctl"), "-D", str(PG), "-m", "fast", "-w", "stop"], stdout=subprocess.DEVNULL)
    opts = f"-p {pg_port} -k {RUN} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    as_postgres([str(b / "pg_ctl"), "-D", str(PG), "-o", opts, "-l", str(PG / "server.log"), "-w", "start"], stdout=subprocess.DEVNULL)
    have = subprocess.run([str(b / "psql"), "-h", str(RUN), "-p", str(pg_port), "-U", "postgres", "-tAc", "SELECT 1 FROM pg_database WHERE datname='netbox'"], capture_output=True, text=True, check=True).stdout.strip()
    if have != "1":
        run([str(b / "createdb"), "-h", str(RUN), "-p", str(pg_port), "-U", "postgres", "netbox"])


def write_config(pg_port: int, redis_port: int) -> None:
    conf = HOME / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "__init__.py").touch()
    secret = HOME / "secret"
    if not secret.exists():
        secret.write_text(json.dumps({"key": secrets.token_urlsafe(50), "pepper": secrets.token_urlsafe(50), "password": secrets.token_urlsafe(16)}))
        secret.chmod(0o600)
    s = json.loads(secret.read_text())
    redis = {"HOST": "127.0.0.1", "PORT": redis_port, "PASSWORD": "", "SSL": False}
    (conf / "configuration.py").write_text(
        f"""# written by topogen's tools/netbox_server.py
ALLOWED_HOSTS = ["*"]
DATABASES = {{"default": {{"ENGINE": "django.db.backends.postgresql", "NAME": "netbox", "USER": "postgres", "PASSWORD": "", "HOST": {str(RUN)!r}, "PORT": "{pg_port}", "CONN_MAX_AGE": 300}}}}
REDIS = {{"tasks": {{**{redis!r}, "DATABASE": 0}}, "caching": {{**{redis!r}, "DATABASE": 1}}}}
SECRET_KEY = {s["key"]!r}
API_TOKEN_PEPPERS = {{1: {s["pepper"]!r}}}
CENSUS_REPORTING_ENABLED = False
RELEASE_CHECK_URL = None
"""
    )


def netbox(*args: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "NETBOX_ROOT": str(HOME)}
    return run([str(VENV / "bin/netbox"), *args], env=env, **kw)


def http(url: str, data: dict | None = None, timeout: float = 5) -> dict:
    req = urllib.request.Request(url, data=json.dumps(data).encode() if data is not None else None, headers={"Content-Type": "application/json", "Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"{}")


def alive(url: str) -> bool:
    """NetBox answers (its API says who may ask: any HTTP answer will do)."""
    try:
        http(url + "/api/status/", timeout=60)  # a busy NetBox on a loaded machine: not dead
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def up() -> Path:
    if STATE.exists():
        if alive(json.loads(STATE.read_text())["url"]):
            return STATE
        down()
    HOME.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    ensure_packages()
    ensure_venv()
    t_install = time.monotonic() - t0
    pg_port, redis_port, web_port = free_port(), free_port(), free_port()
    start_postgres(pg_port)
    (HOME / "redis").mkdir(exist_ok=True)
    _stop_redis()  # one left by an interrupted run
    run(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--daemonize", "yes", "--save", "", "--appendonly", "no", "--dir", str(HOME / "redis"), "--pidfile", str(RUN / "redis.pid"), "--logfile", str(HOME / "redis" / "redis.log")])
    write_config(pg_port, redis_port)
    marker = HOME / f"migrated-{NETBOX_VERSION}"
    t1 = time.monotonic()
    if not marker.exists():
        log("migrating (once per NetBox version)")
        netbox("migrate", "--no-input", stdout=subprocess.DEVNULL)
        netbox("collectstatic", "--no-input", stdout=subprocess.DEVNULL)
        marker.touch()
    password = json.loads((HOME / "secret").read_text())["password"]
    netbox("shell", "--no-imports", "-c", f"from users.models import User\nu = User.objects.filter(username={USER!r}).first() or User.objects.create_superuser({USER!r}, 'topogen@example.com', {password!r})\nu.set_password({password!r}); u.is_superuser = True; u.is_active = True; u.save()", stdout=subprocess.DEVNULL)
    t_migrate = time.monotonic() - t1
    logs = HOME / "logs"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, "NETBOX_ROOT": str(HOME)}
    web = subprocess.Popen(
        [str(VENV / "bin/gunicorn"), "--bind", f"127.0.0.1:{web_port}", "--workers", "3", "--timeout", "900", "--chdir", str(VENV / "lib"), "netbox.wsgi"],
        env=env, stdout=open(logs / "gunicorn.log", "ab"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    worker = subprocess.Popen([str(VENV / "bin/netbox"), "rqworker", "high", "default", "low"], env=env, stdout=open(logs / "rqworker.log", "ab"), stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{web_port}"
    while not alive(url):
        if web.poll() is not None:
            raise SystemExit(f"gunicorn exited: see {logs / 'gunicorn.log'}")
        time.sleep(0.5)
    tok = http(url + "/api/users/tokens/provision/", {"username": USER, "password": password})
    token = tok.get("token") or tok.get("key")
    state = {"version": NETBOX_VERSION, "url": url, "token": f"nbt_{tok['key']}.{token}" if tok.get("version") == 2 else token, "username": USER, "password": password,
             "pids": {"gunicorn": web.pid, "rqworker": worker.pid}, "pg_port": pg_port, "redis_port": redis_port,
             "setup_s": {"install": round(t_install, 1), "migrate": round(t_migrate, 1), "total": round(time.monotonic() - t0, 1)}}  # fmt: skip
    STATE.write_text(json.dumps(state, indent=1))
    STATE.chmod(0o600)
    log(f"NetBox {NETBOX_VERSION} at {url} (install {t_install:.0f} s, migrate {t_migrate:.0f} s, total {time.monotonic() - t0:.0f} s)")
    return STATE


def _stop_redis() -> None:
    pid = RUN / "redis.pid"
    if pid.exists():
        try:
            os.kill(int(pid.read_text()), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            pass
        pid.unlink(missing_ok=True)


def down() -> None:
    if STATE.exists():
        st = json.loads(STATE.read_text())
        for pid in st.get("pids", {}).values():
            try:
                os.killpg(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        STATE.unlink()
    _stop_redis()
    b = pg_bin()
    if b and (PG / "postmaster.pid").exists():
        as_postgres([str(b / "pg_ctl"), "-D", str(PG), "-m", "fast", "-w", "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "up"
    if cmd == "up":
        print(up())
    elif cmd == "state":  # exit 1 when none answers
        try:
            st = json.loads(STATE.read_text())
        except (OSError, ValueError):
            raise SystemExit(1) from None
        if not alive(st.get("url", "")):
            raise SystemExit(1)
        print(json.dumps(st))
    elif cmd == "down":
        down()
    else:
        raise SystemExit("usage: netbox_server.py up|state|down")
