"""The torch smoke test: the env's own Python runs cudaswitch/checks/probe.py in a fresh subprocess, with a timeout, in the
environment the env's activation hooks produce; the result is classified by cudaswitch.checks.diagnosis.

`run_smoke(env, system, timeout=..., cpu_ok=...)` is what `cudaswitch use` calls after a switch; `SmokeReport` has
`.ok`, `.code`, `.cause`, `.fix`, `.exit_code`, `.to_json()` and `smoke_lines(report)` gives the text form.

The driver record (cudaswitch.checks.driver) comes from the same probe run: it asks cuDriverGetVersion before
importing torch, so the smoke test starts exactly one Python.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from cudaswitch.checks import driver as drivers
from cudaswitch.checks.diagnosis import (ERROR, INFO, WARNING, Finding, ProbeOutcome, classify, finding,
                                         install_findings, message, severity_label)
from cudaswitch.checks.driver import Driver
from cudaswitch.checks.windll import exit_status
from cudaswitch.checks.runner import run_probe
from cudaswitch.checks.severities import fails
from cudaswitch.discovery.torchenv import torch_installs
from cudaswitch.core.i18n import M, N_
from cudaswitch.core.shellquote import for_user
from cudaswitch.core.system import System

DEFAULT_TIMEOUT = 180.0


# ---- the environment the hooks produce -----------------------------------------------------------------------

def probe_environment(env, system: System, toolkit=None, ld_library_path: bool = False) -> Dict[str, str]:
    """conda activate PREFIX, then the switch's changes (activation.changes_for/apply): what the user's shell has."""
    from cudaswitch.switching.activation import apply, changes_for, conda_activated

    from cudaswitch.discovery.activation_scripts import environment_vars

    environ = conda_activated(system.environ, env.prefix, system)
    environ["CONDA_DEFAULT_ENV"] = env.name
    # the environment's own variables (`conda env config vars set`: PYTHONNOUSERSITE ...), exported before its
    # activate.d scripts run
    environ.update({var: s.value for var, s in environment_vars(env.prefix).items()})
    if toolkit is not None:
        environ = apply(environ, changes_for(toolkit, system, ld_library_path), system)
    environ.setdefault("PYTHONIOENCODING", "utf-8")
    return environ


# Only `use` meets it (the smoke test run in what a real shell's hook left, switching/verify.py), so it is kept here
# rather than in the catalogue of what a torch import can say.
SWITCH_NOT_IN_EFFECT_FIX = N_("run `cudaswitch use X.Y` again; if it stays, report it with the lines above")


def _not_in_effect(environ: Dict[str, str], toolkit, system: System) -> Optional[str]:
    """Why a real shell's environment (switching/verify.py) does not have `toolkit` switched in, or None."""
    if toolkit is None:
        return None
    path = system.split_list(next((v for k, v in environ.items() if k.upper() == "PATH"), None))
    bins = list(toolkit.bin_dirs)

    def norm(entries):  # cmd.exe's hook spells its entries with a trailing backslash; Windows ignores case
        return [e.rstrip("\\").lower() for e in entries] if system.windows else entries

    if norm(path[:len(bins)]) != norm(bins):
        return M("in the variables the activate hook really left in a shell, PATH starts with {got}, not with CUDA {version}'s {want}", got=system.pathsep.join(path[:len(bins)]),
                 version=toolkit.version, want=system.pathsep.join(bins))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(var) != toolkit.root:
            return M("in the variables the activate hook really left in a shell, {var} is {got!r}, not CUDA "
                     "{version}'s {root}", var=var, got=environ.get(var),
                     version=toolkit.version, root=toolkit.root)
    return None


def selected_toolkit(env, system: System):
    """(toolkit, state) for what `cudaswitch use` recorded in the env; toolkit None when nothing or missing."""
    from cudaswitch.discovery.environment import read_state
    from cudaswitch.discovery.toolkits import discover

    state = read_state(env)
    if state is None:
        return None, None
    found = discover(system)
    tk = next((t for t in found.toolkits if t.root == state.root), None)
    return tk, state


# ---- the report ------------------------------------------------------------------------------------------------

@dataclass
class SmokeReport:
    status: str  # "pass", "fail", "skip"
    code: str  # "OK" or the primary finding's code
    cause: str
    fix: str
    result: str  # "gpu", "no GPU", "not run"
    findings: List[Finding]
    env: Dict
    python: Dict
    torch: Dict
    driver: Driver
    toolkit: Optional[Dict]
    chain: List[Dict]
    steps: Dict
    device: Optional[str]
    cpu_ok: bool
    seconds: float
    probe: Dict = field(default_factory=dict)  # returncode, timed_out, last stage, stderr tail, environ seen

    @property
    def ok(self) -> bool:
        return self.status in ("pass", "skip")

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict:
        return {"ok": self.ok, "status": self.status, "code": self.code, "cause": self.cause, "fix": self.fix,
                "exit_code": self.exit_code, "result": self.result, "cpu_ok": self.cpu_ok, "device": self.device,
                "env": self.env, "python": self.python, "torch": self.torch, "driver": self.driver.to_json(),
                "toolkit": self.toolkit, "chain": self.chain, "steps": self.steps,
                "findings": [f.to_json() for f in self.findings], "probe": self.probe, "seconds": self.seconds}


# the chain's status words: --json keeps them as they are, human lines translate them
CHAIN_WORDS = {w: w for w in (N_("ok"), N_("unknown"), N_("mismatch"), N_("missing"), N_("too-old"),
                              N_("minor-compat"), N_("beyond tables"), N_("not listed"))}


def _chain(torch: Dict, driver: Driver, toolkit: Optional[Dict], windows: bool) -> List[Dict]:
    """driver -> torch's CUDA -> toolkit -> GPU arch: one line each, with a status."""
    from cudaswitch.data import knowledge

    out = []
    cuda = torch.get("cuda")
    dmax = driver.cuda_max
    if cuda:
        v = knowledge.driver_runs(dmax, cuda, windows)
        out.append({"check": N_("driver vs torch CUDA"), "status": v.status,
                    "detail": v.message if dmax else N_("no driver found"), "src": v.src})
    if toolkit:
        tv = toolkit.get("version")
        if dmax:
            v = knowledge.driver_runs(dmax, tv, windows)
            out.append({"check": N_("driver vs toolkit"), "status": v.status, "detail": v.message, "src": v.src})
        if cuda:
            same = knowledge.same_major(tv, cuda) is True
            out.append({"check": N_("torch CUDA vs toolkit nvcc"), "status": "ok" if same else "mismatch",
                        "detail": M("torch CUDA {cuda}, toolkit CUDA {toolkit}", cuda=cuda, toolkit=tv) if same else
                        M("torch CUDA {cuda}, toolkit CUDA {toolkit}: CUDA extension builds fail", cuda=cuda,
                          toolkit=tv),
                        "src": "torch/utils/cpp_extension.py CUDA_MISMATCH_MESSAGE"})
    cap = torch.get("capability")
    if cap:
        hit = knowledge.arch_in_list(cap, torch.get("arch_list") or [])
        out.append({"check": N_("GPU arch vs build"), "status": {True: "ok", False: "missing", None: "unknown"}[hit],
                    "detail": f"sm_{cap.replace('.', '')} vs {' '.join(torch.get('arch_list') or []) or '(none)'}",
                    "src": ""})
    cudnn = knowledge.cudnn_number(torch.get("cudnn"))
    if cudnn and cuda:
        status, detail, src = knowledge.cudnn_verdict(cudnn, cuda)
        out.append({"check": N_("cuDNN vs torch CUDA"), "status": status, "detail": detail, "src": src})
    return out


def _foreign_python(env) -> Optional[Finding]:
    """Running the environment's own Python runs whatever its owner put there (site-packages, sitecustomize, the
    interpreter itself), with cudaswitch's rights: as root in another user's environment that is their code run as
    root (docs/design/security.md). Such a run is skipped with the owner named."""
    from pathlib import Path

    from cudaswitch.core import trust

    if trust.euid() != 0:
        return None  # an ordinary user runs a shared environment's Python anyway, by activating it
    why = trust.path_problem(Path(env.prefix)) or trust.executable_problem(Path(env.python))
    where = Path(env.prefix)
    if not why:
        why, where = _path_folders_problem(env.prefix)
    if not why:
        return None
    try:
        theirs = os.stat(where).st_uid != 0
    except OSError:
        theirs = True
    fix = M("run it as that user: {hint} cudaswitch smoke -p {prefix}", hint=trust.owner_hint(where),
            prefix=for_user([env.prefix])) if theirs else \
        M("let only root write it (chmod go-w {path}), or run it as a user of that group: sudo -u USER cudaswitch "
          "smoke -p {prefix}", path=for_user([str(where)]), prefix=for_user([env.prefix]))
    return finding("PYTHON_FOREIGN", INFO, M("not run: {why}, and cudaswitch runs as {user}; it does not run a program "
                                             "another user could have replaced; {fix}", why=why,
                                             user=trust.user_name(trust.euid()), fix=fix), fix)


def _path_folders_problem(prefix: str):
    """(why, path) for the first folder on the environment's sys.path (its standard library, lib-dynload,
    site-packages), or entry of a site-packages (a .pth, a package such as torch, sitecustomize), that another user
    could have written: the interpreter reads and runs them at start, before the smoke test's first line; (None,
    None) when there is none. A root-owned environment can still hold a folder a group may write."""
    from pathlib import Path

    from cudaswitch.core import trust
    from cudaswitch.discovery.environment import site_packages

    lib = Path(prefix, "lib")
    folders = [p for p in sorted(lib.glob("python3*")) if p.is_dir()] if lib.is_dir() else []
    folders += [p / "lib-dynload" for p in folders if (p / "lib-dynload").is_dir()]
    sites = [Path(sp) for sp in site_packages(prefix)]
    for folder in folders + sites:
        why = trust.path_problem(folder)
        if why:
            return why, folder
    for sp in sites:
        try:
            entries = list(os.scandir(sp))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if entry.is_symlink():  # a link's own mode is always 0777: its owner, then its target count
                    why = (M("{path} {why}", path=entry.path, why=M("belongs to {user}",
                                                                   user=trust.user_name(st.st_uid)))
                           if st.st_uid not in (0, trust.euid()) else trust.path_problem(Path(entry.path)))
                else:
                    why = trust.stat_problem(st)
                    why = why and M("{path} {why}", path=entry.path, why=why)
            except OSError:
                continue
            if why:
                return why, Path(entry.path)
    return None, None


def _python_unreadable(python: str, prefix: str) -> Optional[Finding]:
    """A Python that is there but not for this user (a link into a folder only its owner may enter): said so, not
    "does not exist", with the folder that keeps the user out."""
    from pathlib import Path

    from cudaswitch.core import trust

    try:
        os.stat(python)
        return None
    except PermissionError:
        pass
    except OSError:
        return None
    target, blocked = python, None
    for _ in range(40):  # the links to follow, as the kernel does (it gives up at 40)
        parent = os.path.dirname(target)
        while parent and parent != os.path.dirname(parent) and not os.access(parent, os.X_OK):
            blocked, parent = parent, os.path.dirname(parent)
        if blocked or not os.path.islink(target):
            break
        try:
            target = os.path.join(os.path.dirname(target), os.readlink(target))
        except OSError:
            break
    user = trust.user_name(trust.euid()) if trust.euid() is not None else M("this user")
    fix = M("run it as a user who may read it: {hint} cudaswitch smoke -p {prefix}",
            hint=trust.owner_hint(Path(blocked)) if blocked else M("as the environment's owner"), prefix=prefix)
    cause = (M("{python} cannot be read by you: {folder} does not let {user} in", python=python, user=user,
               folder=blocked) if blocked else
             M("{python} cannot be read by you ({user})", python=python, user=user))
    return finding("PYTHON_MISSING", INFO, cause, fix)


def run_smoke(env, system: Optional[System] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, cpu_ok: bool = False,
              toolkit=None, ld_library_path: Optional[bool] = None, progress: bool = False,
              environ: Optional[Dict[str, str]] = None) -> SmokeReport:
    """Run the smoke test for a CondaEnv. `toolkit` defaults to the one the env's state file names. `environ`: the
    environment a real shell's hook left (`use`, switching/verify.py), instead of the model's."""
    system = system or System.current()
    t0 = time.perf_counter()
    state = None
    if toolkit is None:
        toolkit, state = selected_toolkit(env, system)
    lib = bool(state.ld_library_path) if (ld_library_path is None and state is not None) else bool(ld_library_path)
    from cudaswitch.checks.switched import switch_findings

    if toolkit is not None:
        pre = switch_findings(env.prefix, toolkit.version, toolkit.root, lib, system)
    elif state is not None:
        pre = switch_findings(env.prefix, state.version, state.root, lib, system)
    else:
        pre = []
    tk_json = toolkit.to_json() if toolkit is not None else None
    env_json = env.to_json()
    python = env.python
    if not os.path.isfile(python):
        f = _python_unreadable(python, env.prefix) or finding(
            "PYTHON_MISSING", INFO, M("{python} does not exist", python=python),
            for_user(["conda", "install", "-p", env.prefix, "python"], system.environ, system.windows))
        return _report("skip", [f] + pre, env_json, {}, {}, drivers.quick(system), tk_json, {}, None, cpu_ok, t0, {})
    foreign = _foreign_python(env)
    if foreign:
        return _report("skip", [foreign] + pre, env_json, {}, {}, drivers.quick(system), tk_json, {}, None, cpu_ok,
                       t0, {})
    if environ is None:
        environ = probe_environment(env, system, toolkit, lib)
    else:
        environ = dict(environ)
        environ.setdefault("PYTHONIOENCODING", "utf-8")
        wrong = _not_in_effect(environ, toolkit, system)
        if wrong:
            pre.append(Finding("SWITCH_NOT_IN_EFFECT", ERROR, wrong, SWITCH_NOT_IN_EFFECT_FIX, []))
    outcome = run_probe(python, environ, timeout, cwd=env.prefix, progress=progress)
    return report_from_outcome(outcome, env, environ, system, cpu_ok, tk_json, pre, t0)


def report_from_outcome(outcome: ProbeOutcome, env, environ: Dict[str, str], system: System, cpu_ok: bool = False,
                        tk_json: Optional[Dict] = None, pre: Optional[List[Finding]] = None,
                        t0: Optional[float] = None) -> SmokeReport:
    """Classify one probe run (live, or a recorded one such as tests/fake_torch/records/*.out)."""
    t0 = time.perf_counter() if t0 is None else t0
    rec = outcome.record or {}
    driver = drivers.resolve(environ, rec.get("driver"), system)
    findings = classify(outcome, env.prefix, environ, system.windows, cpu_ok, driver, tk_json, system=system)
    installs = torch_installs(env.prefix)
    for f in install_findings(installs):
        if not any(x.code == f.code for x in findings):
            findings.append(f)
    # the switch's own facts (checks/switched.py), unless the probe found the same with what torch itself said
    findings += [f for f in pre or [] if not any(x.code == f.code for x in findings)]
    order = {ERROR: 0, WARNING: 1, INFO: 2}
    findings.sort(key=lambda f: order.get(f.severity, 3))
    # two installs of torch are the likely cause of a DLL or import failure (WinError 1114 included): name that first
    broken = next((f for f in findings if f.code in ("DLL_INIT_FAILED", "DLL_NOT_FOUND", "IMPORT_FAILED")), None)
    mixed = next((f for f in findings if f.code == "TORCH_MIXED_INSTALL"), None)
    if broken and mixed:
        findings.remove(mixed)
        mixed.cause = M("{cause} (the likely cause of {code}: {broken})", cause=message(mixed.cause),
                        code=broken.code, broken=message(broken.cause))
        findings.insert(0, mixed)
    probe_meta = {"returncode": outcome.returncode, "timed_out": outcome.timed_out, "last_stage": outcome.last_stage,
                  "stderr_tail": [ln for ln in outcome.stderr.splitlines() if not ln.startswith("cudaswitch-probe:")][-8:],
                  "environ": rec.get("environ") or {}, "torch_folders": rec.get("torch_folders") or [],
                  "cpu_avx2": rec.get("cpu_avx2"), "msvcp140": rec.get("msvcp140") or [],
                  "user_site": rec.get("user_site")}
    if findings and findings[0].code == "TORCH_NOT_INSTALLED":
        status = "skip"
    elif any(f.severity == ERROR for f in findings):
        status = "fail"
    else:
        status = "pass"
    return _report(status, findings, env.to_json(), rec.get("python") or {}, rec.get("torch") or {}, driver, tk_json,
                   rec.get("steps") or {}, rec.get("device"), cpu_ok, t0, probe_meta, system.windows)


def _report(status, findings, env_json, python, torch, driver, tk_json, steps, device, cpu_ok, t0, probe_meta,
            windows: bool = False) -> SmokeReport:
    primary = next((f for f in findings if fails(f.severity)), None)
    if primary is not None:
        status = "fail"  # a test skipped does not hide an error found without it (checks/severities.py)
    elif status == "skip":
        primary = findings[0]
    if primary is not None:
        code, cause, fix = primary.code, primary.cause, primary.fix
    else:
        code, cause, fix = "OK", N_("torch computes on the GPU") if device == "cuda" else \
            N_("torch computes on the CPU"), "-"
    if device == "cuda" and all((steps.get(n) or {}).get("ok") for n in ("matmul", "conv2d")):
        result = "gpu"
    elif device == "cuda":
        result = N_("GPU found, computation failed")
    elif device:
        result = N_("no GPU")
    else:
        result = N_("not run")
    return SmokeReport(status, code, cause, fix, result, findings, env_json, python, torch, driver, tk_json,
                       _chain(torch, driver, tk_json, windows), steps, device, cpu_ok,
                       round(time.perf_counter() - t0, 3), probe_meta)


# ---- text --------------------------------------------------------------------------------------------------

def smoke_lines(report: SmokeReport) -> List[str]:
    """The human-readable lines (the CLI echoes them; `cudaswitch use` can reuse them)."""
    from cudaswitch.data import knowledge
    from cudaswitch.core.i18n import _, tr

    t, py, d = report.torch, report.python, report.driver
    lines = [_("smoke test: {name} ({prefix})").format(name=report.env.get('name'), prefix=report.env.get('prefix'))]
    if py:
        lines.append(_("  python     {version} ({bits}-bit) {executable}").format(
            version=py.get('version'), bits=py.get('bits'), executable=py.get('executable')))
    if t:
        cudnn = knowledge.cudnn_number(t.get("cudnn"))
        lines.append(_("  torch      {version}  CUDA {cuda}  cuDNN {cudnn}").format(
            version=t.get('version'), cuda=t.get('cuda') or _('none (CPU build)'), cudnn=cudnn or '-'))
        gpu = (f"{t.get('device_name')} (sm_{str(t.get('capability', '')).replace('.', '')})"
               if t.get("device_name") else _("none"))
        lines.append(_("  cuda       is_available={available}  devices={count}  GPU {gpu}").format(
            available=t.get('is_available'), count=t.get('device_count'), gpu=gpu))
        if t.get("arch_list"):
            lines.append(_("  arch list  {archs}").format(archs=' '.join(t['arch_list'])))
    if not d.cuda_max and not d.driver_version:
        line = _("  driver     max CUDA none")
    else:
        line = (_("  driver     max CUDA {cuda} (driver {version})") if d.driver_version else
                _("  driver     max CUDA {cuda}")).format(cuda=d.cuda_max or _("none"), version=d.driver_version)
    lines.append(line + (f" [{d.source}]" if d.source else "") + (": " + tr(d.error) if d.error and not d.cuda_max
                                                                    else ""))
    if report.toolkit:
        lines.append(_("  toolkit    CUDA {version} {root}").format(version=report.toolkit.get('version'),
                                                                    root=report.toolkit.get('root')))
    for name in ("matmul", "conv2d", "autocast"):
        s = report.steps.get(name)
        if not s:
            continue
        detail = s.get("detail") or {}
        where = detail.get("device", report.device or "")
        mark = _("pass") if s.get("ok") else _("FAIL")
        extra = f"  {detail['gflops']} GFLOP/s" if detail.get("gflops") else ""
        err = f"  {s['error']['type']}: {s['error']['message'].splitlines()[0][:120]}" if s.get("error") else ""
        lines.append(_("  {name} {mark}  {seconds}s on {device}").format(
            name=f"{name:<10}", mark=mark, seconds=s.get('seconds'), device=where) + extra + err)
    pm = report.probe or {}
    if pm.get("timed_out") or (pm.get("returncode") not in (0, None) and not t):
        stage = pm.get('last_stage') or 'start'
        lines.append(_("  probe      timed out at stage {stage}").format(stage=stage) if pm.get('timed_out') else
                     _("  probe      exit {code} at stage {stage}").format(code=exit_status(pm.get('returncode')),
                                                                            stage=stage))
    for c in report.chain:
        lines.append(_("  chain      {check}: {status} ({detail})").format(
            check=tr(c['check']), status=tr(CHAIN_WORDS.get(c['status'], c['status'])), detail=tr(c['detail'])))
    for f in report.findings:
        lines.append(f"  {severity_label(f.severity)}   {f.code}: {tr(f.cause)}")
        # a skipped test's reason (no torch, no Python) is information, but what to do about it is the next step
        if f.fix and f.fix != "-" and (f.severity != INFO or report.status == "skip"):
            lines.append(f"  {'':<8}   " + _("fix: {fix}").format(fix=tr(f.fix)))
    verdict = {"pass": _("PASS"), "fail": _("FAIL"), "skip": _("SKIP")}[report.status]
    lines.append(_("result: {verdict} ({code}: {cause}; {result})").format(
        verdict=verdict, code=report.code, cause=tr(report.cause), result=tr(report.result)))
    return lines
