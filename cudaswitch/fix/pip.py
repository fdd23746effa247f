"""The environment's own pip, as the doors want it: its interpreter with `-I` (no PYTHONPATH, no user site, no
current folder on sys.path), started from `/`, with `--isolated` (no pip configuration or PIP_* variable decides
the index) and only the index `recommend`'s table names: the PyTorch index, or the mirror of it the user names in
CUDASWITCH_TORCH_INDEX (the same paths under another address, as mirrors of download.pytorch.org are laid out)."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M

# what pip itself needs from the caller's environment: where to cache, how to reach the network, the locale
_PASS = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "http_proxy", "https_proxy", "no_proxy",
         "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")
TIMEOUT = 1800


def index_url(tag: str, environ) -> str:
    """The PyTorch index for one build tag (cpu, cu126 ...), on the user's mirror when CUDASWITCH_TORCH_INDEX
    names one."""
    from cudaswitch.data.knowledge import INDEX

    base = (environ.get("CUDASWITCH_TORCH_INDEX") or INDEX).rstrip("/")
    if not base.startswith(("https://", "http://")):
        raise CudaswitchError(M("CUDASWITCH_TORCH_INDEX={value} is not an http(s) address", value=base))
    return f"{base}/{tag}"


def argv(env, args: List[str], user_site: bool = False) -> List[str]:
    """`user_site`: -E instead of -I, for the one step that works on the user site-packages (PYTHON* variables
    still ignored; started from `/`, so no current-folder code either way)."""
    return [env.python, "-E" if user_site else "-I", "-m", "pip", "--isolated", "--disable-pip-version-check",
            "--no-input", *args]


def run(env, args: List[str], system, timeout: Optional[float] = TIMEOUT, user_site: bool = False):
    from cudaswitch.core.trust import run_program

    environ = {k: system.environ[k] for k in _PASS if k in system.environ}
    proc = run_program(argv(env, args, user_site), timeout, env=environ, cwd=os.path.abspath(os.sep))
    if proc.returncode != 0:
        last = [ln for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()][-1:] or ["-"]
        raise CudaswitchError(M("pip exited {code}: {line}", code=proc.returncode, line=last[0]))
    return proc


def would_install(env, requirements: List[str], url: str, system, no_deps: bool = False,
                  ignore_installed: bool = False) -> List[Tuple[str, str]]:
    """(name, version) of every distribution `pip install requirements` from `url` would put in place
    (`pip install --dry-run --report`), changing nothing: what a plan shows and journals."""
    from cudaswitch.core.trust import private_temp_dir, read_json

    flags = (["--no-deps"] if no_deps else []) + (["--ignore-installed"] if ignore_installed else [])
    with private_temp_dir("cudaswitch-pip-") as tmp:
        report = os.path.join(tmp, "report.json")
        run(env, ["install", "--dry-run", *flags, "--quiet", "--report", report, "--index-url", url, *requirements],
            system)
        data = read_json(report, shape={"install": [{"metadata": {"name": str, "version": str}}]})
    return [(i["metadata"]["name"], i["metadata"]["version"]) for i in data.get("install") or []]


def resolve(env, requirement: str, url: str, system) -> Optional[str]:
    """The version pip would install for `requirement` alone from `url`; None when pip finds none."""
    items = would_install(env, [requirement], url, system, no_deps=True, ignore_installed=True)
    return items[0][1] if items else None


def replaced(prefix: str, names: List[str]) -> Tuple[List[dict], List[str], Dict[str, Optional[str]]]:
    """For a step that puts `names` in place: the journal's package entries (each name's site and the dist-info
    folders there now, which undo keeps), every file those distributions hold (their bytes are kept) and the
    version installed now per name (None: not installed)."""
    from cudaswitch.discovery.environment import site_packages

    sites = site_packages(prefix)
    packages, paths, now = [], [], {}
    for name in names:
        dists = installed(prefix, name)
        now[name] = dists[0]["version"] if dists else None
        site = dists[0]["site"] if dists else (sites[0] if sites else None)
        if site is None:
            continue
        packages.append({"site": site, "names": [name], "kept": [d["folder"] for d in dists if d["site"] == site]})
        for d in dists:
            paths += record_files(d["site"], d["folder"])
    return packages, paths, now


def installed(prefix: str, name: str, sites: Optional[List[str]] = None) -> List[dict]:
    """The dist-info folders of `name` in the environment's site-packages (or in `sites`): {site, folder,
    version}."""
    from cudaswitch.discovery.environment import site_packages

    want = name.lower().replace("-", "_")
    out = []
    for site in site_packages(prefix) if sites is None else sites:
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
