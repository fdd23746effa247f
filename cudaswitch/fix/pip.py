"""The environment's own pip, as the doors want it: its interpreter with `-I` (no PYTHONPATH, no user site, no
current folder on sys.path), started from `/`, with `--isolated` (no pip configuration or PIP_* variable decides
the index) and only the index `recommend`'s table names: the PyTorch index, or the mirror of it the user names in
CUDASWITCH_TORCH_INDEX (the same paths under another address, as mirrors of download.pytorch.org are laid out)."""

from __future__ import annotations

import os
from typing import List, Optional

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M

# what pip itself needs from the caller's environment: where to cache, how to reach the network, the locale
_PASS = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "http_proxy", "https_proxy", "no_proxy",
         "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")
TIMEOUT = 1800


def index_url(tag: str, environ) -> str:
    """The PyTorch index for one build tag (cpu, cu126 ...), on the user's mirror when CUDASWITCH_TORCH_INDEX
    names one."""
    from cudaswitch.checks.knowledge import INDEX

    base = (environ.get("CUDASWITCH_TORCH_INDEX") or INDEX).rstrip("/")
    if not base.startswith(("https://", "http://")):
        raise CudaswitchError(M("CUDASWITCH_TORCH_INDEX={value} is not an http(s) address", value=base))
    return f"{base}/{tag}"


def argv(env, args: List[str]) -> List[str]:
    return [env.python, "-I", "-m", "pip", "--isolated", "--disable-pip-version-check", "--no-input", *args]


def run(env, args: List[str], system, timeout: Optional[float] = TIMEOUT):
    from cudaswitch.core.trust import run_program

    environ = {k: system.environ[k] for k in _PASS if k in system.environ}
    proc = run_program(argv(env, args), timeout, env=environ, cwd=os.path.abspath(os.sep))
    if proc.returncode != 0:
        last = [ln for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()][-1:] or ["-"]
        raise CudaswitchError(M("pip exited {code}: {line}", code=proc.returncode, line=last[0]))
    return proc


def resolve(env, requirement: str, url: str, system) -> Optional[str]:
    """The version pip would install for `requirement` from `url` (`pip install --dry-run --report`), changing
    nothing; None when pip finds none."""
    from cudaswitch.core.trust import private_temp_dir

    with private_temp_dir("cudaswitch-pip-") as tmp:
        report = os.path.join(tmp, "report.json")
        run(env, ["install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet", "--report", report,
                  "--index-url", url, requirement], system)
        from cudaswitch.core.trust import read_json

        data = read_json(report, shape={"install": [{"metadata": {"version": str}}]})
    items = data.get("install") or []
    return items[0]["metadata"]["version"] if items else None


def installed(prefix: str, name: str) -> List[dict]:
    """The dist-info folders of `name` in the environment's site-packages: {site, folder, version}."""
    from cudaswitch.discovery.environment import site_packages

    want = name.lower().replace("-", "_")
    out = []
    for site in site_packages(prefix):
        try:
            names = sorted(os.listdir(site))
        except OSError:
            continue
        for n in names:
            if n.endswith(".dist-info") and n[:-10].rsplit("-", 1)[0].lower().replace("-", "_") == want:
                out.append({"site": site, "folder": n, "version": n[:-10].rsplit("-", 1)[-1]})
    return out


def record_files(site: str, folder: str) -> List[str]:
    """Every file a distribution's RECORD lists, absolute, that lies in the environment (RECORD names scripts as
    ../../../bin/x)."""
    from cudaswitch.core.trust import read_text

    text = read_text(os.path.join(site, folder, "RECORD"), errors="replace")
    prefix = os.path.dirname(os.path.dirname(os.path.dirname(site))) if os.sep + "lib" + os.sep in site else site
    out = []
    import csv

    for row in csv.reader(text.splitlines()):
        if not row or not row[0]:
            continue
        path = os.path.normpath(os.path.join(site, row[0]))
        if path.startswith(os.path.realpath(prefix) + os.sep) or path.startswith(prefix + os.sep):
            out.append(path)
    return out
