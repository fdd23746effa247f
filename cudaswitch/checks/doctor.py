"""`cudaswitch doctor`: machine- and shell-level checks that need no torch import.

Each finding has a stable code, a severity (error -> exit 1; warning and info -> exit 0) and a fix. Everything is
read through `System` (file-system root, environment, OS flavour), so /etc/ld.so.conf.d, /usr/lib/wsl/lib and
C:\\Windows\\System32 are injectable in tests. The driver record comes from `driver.query` (docs/design/checks.md
section 2). Severities: docs/design/checks.md section 5.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from cudaswitch.checks import driver as drivers
from cudaswitch.data import knowledge
from cudaswitch.checks.diagnosis import ERROR, INFO, WARNING, Finding, install_findings, message, severity_label
from cudaswitch.checks.driver import Driver
from cudaswitch.checks.severities import severity as table_severity
from cudaswitch.discovery.torchenv import torch_installs
from cudaswitch.core.errors import UsageError
from cudaswitch.core.i18n import Cited, Listed, M, N_, _, tr
from cudaswitch.core.system import System
from cudaswitch.core.trust import read_text


@dataclass
class DoctorReport:
    findings: List[Finding]
    driver: Driver
    env: Optional[Dict]
    active_toolkit: Optional[Dict]
    selected_toolkit: Optional[Dict]
    torch: Dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict:
        return {"ok": self.ok, "exit_code": self.exit_code, "findings": [f.to_json() for f in self.findings],
                "driver": self.driver.to_json(), "env": self.env, "active_toolkit": self.active_toolkit,
                "selected_toolkit": self.selected_toolkit, "torch": self.torch}


def _f(code: str, severity: Optional[str], cause: str, fix: str, details: Optional[List[str]] = None,
       when: Optional[str] = None) -> Finding:
    """A doctor finding; its severity is the table's (checks/severities.py), as on every other surface."""
    return Finding(code, table_severity(code, when, severity), cause, fix, list(details or []))


# ---- shell -----------------------------------------------------------------------------------------------------

def shell_findings(state, system: System) -> List[Finding]:
    """From shellstate.shell_state (the same records `cudaswitch status` shows)."""
    from cudaswitch.discovery.shellstate import folder_missing

    out: List[Finding] = []
    by_var = {e.variable: e for e in state.entries[:3]}
    for var in ("CUDA_PATH", "CUDA_HOME"):
        e = by_var.get(var)
        if e is None or not e.value:
            continue
        if folder_missing(system, e.value):
            out.append(_f("CUDA_PATH_MISSING", ERROR, M("{var}={value} does not exist", var=var, value=e.value),
                          M("point {var} at an installed toolkit (`cudaswitch list`), or unset it", var=var),
                          details=[var, e.value]))
        elif not e.toolkit:
            out.append(_f("CUDA_PATH_NOT_TOOLKIT", WARNING, M("{var}={value} is not a CUDA toolkit cudaswitch can see",
                                                              var=var, value=e.value),
                          M("point {var} at an installed toolkit (`cudaswitch list`)", var=var)))
    named = [(v, by_var[v]) for v in ("CUDA_HOME", "CUDA_PATH", "nvcc") if v in by_var and by_var[v].toolkit_root]
    roots = {e.toolkit_root for _, e in named}
    if len(roots) > 1:
        desc = Listed(f"{'nvcc on PATH' if v == 'nvcc' else v} -> CUDA {e.toolkit} ({e.toolkit_root})"
                         for v, e in named)
        out.append(_f("CUDA_VARS_DISAGREE", WARNING, M("the shell names {count} toolkits: {names}", count=len(roots),
                                                       names=desc),
                      N_("torch builds use CUDA_HOME, CMake uses CUDA_PATH then nvcc: `cudaswitch use X.Y` sets all "
                      "three to one toolkit")))
    for var, code in (("PATH", "MULTIPLE_CUDA_ON_PATH"), ("LD_LIBRARY_PATH", "MULTIPLE_CUDA_ON_LD_LIBRARY_PATH")):
        seen: List = []
        for e in state.entries:
            if e.variable == var and e.toolkit_root and e.toolkit_root not in [r for r, _, _ in seen]:
                seen.append((e.toolkit_root, e.toolkit, e.value))
        if len(seen) > 1:
            out.append(_several_on_path(code, var, seen, state.active, system))
    if state.unsearchable_note:
        out.append(_f("PATH_FOLDER_UNSEARCHABLE", INFO, state.unsearchable_note,
                      N_("nothing to fix for cudaswitch (the rest of PATH was checked); a `su` without `-` keeps the "
                         "other user's PATH: `su -` starts with your own")))
    return out


def _several_on_path(code: str, var: str, seen: List, active: Optional[str], system: System) -> Finding:
    """Several toolkits on PATH is how a machine with more than one CUDA installer run looks: cudaswitch puts its
    choice first and leaves the others, which it did not add, where they are (docs/design/checks.md section 5)."""
    desc = "; ".join(f"CUDA {v}: {val}" for _, v, val in seen)
    if system.windows:
        where = N_("they come from the system Path, where each CUDA installer adds its bin and libnvvp "
                   "folders: to remove them, open System Properties > Environment Variables, edit Path under System "
                   "variables (administrator rights needed) and delete those entries, then close and reopen every "
                   "terminal; never run `setx PATH ...`, which cuts PATH to 1024 characters")
    else:
        where = N_("they come from your shell's startup files (~/.bashrc, ~/.profile, /etc/profile.d/*.sh) or a "
                   "module system: to remove them, delete the lines that add them, then open a new terminal")
    if active and seen[0][0] == active:
        cause = M("{var} holds folders of {count} toolkits ({folders}); the first, CUDA {version}, is the one "
                  "CUDA_HOME/CUDA_PATH name, so it wins", var=var, count=len(seen), folders=desc, version=seen[0][1])
        fix = M("nothing to do: cudaswitch works with the others present; {where}", where=where)
    else:
        cause = M("{var} holds folders of {count} toolkits ({folders}); the first wins", var=var, count=len(seen),
                  folders=desc)
        fix = M("put the toolkit you want first: `cudaswitch use X.Y` puts its folders first in a conda environment; "
                "{where}", where=where)
    return _f(code, WARNING, cause, fix, [val for _, _, val in seen])


# ---- ld.so.conf.d ----------------------------------------------------------------------------------------------

def ldconf_findings(system: System, toolkits, selected_root: Optional[str]) -> List[Finding]:
    from cudaswitch.discovery.toolkits import owner_of

    out: List[Finding] = []
    if system.windows:
        return out
    folder = system.local(system.machine_place("/etc/ld.so.conf.d"))
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        path = folder / name
        try:
            text = read_text(path, errors="replace")
        except OSError:
            continue
        dirs = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
        cuda_dirs = [d for d in dirs if "cuda" in d.lower() or "cuda" in name.lower()]
        if not cuda_dirs:
            continue
        owners = []
        for d in cuda_dirs:
            tk = owner_of(toolkits, d, system)
            owners.append(f"{d} (CUDA {tk.version})" if tk else d)
        tks = {owner_of(toolkits, d, system).root for d in cuda_dirs if owner_of(toolkits, d, system)}
        # ld.so searches LD_LIBRARY_PATH before /etc/ld.so.cache (LD_DEBUG=libs shows the order;
        # tests/checks/test_doctor.py checks it with the real loader): the cache decides only where the variable
        # does not name the library, and for a library a program loads without an RPATH when it is unset
        if selected_root and tks and selected_root not in tks:
            cause = M("/etc/ld.so.conf.d/{name} puts {folders} in the loader cache, which is not the toolkit the "
                      "environment uses; the hooks' LD_LIBRARY_PATH is searched before the cache, so it wins where "
                      "it is set, but the cache wins in processes that do not get it (started outside the activated "
                      "shell: services, cron, an IDE) and, when LD_LIBRARY_PATH is unset, for every library a "
                      "program loads without an RPATH", name=name, folders=Listed(owners))
        else:
            cause = M("/etc/ld.so.conf.d/{name} puts {folders} in the loader cache: a program gets these libraries "
                      "unless LD_LIBRARY_PATH or its own RPATH names another copy", name=name,
                      folders=Listed(owners))
        out.append(_f("LDCONF_PINS_CUDA", WARNING, cause,
                      M("if libraries clash (e.g. 'Multiple libcudart libraries found'), disable "
                        "/etc/ld.so.conf.d/{name} and run `sudo ldconfig`; cudaswitch reports it and never edits it",
                        name=name),
                      cuda_dirs))
    return out


# ---- WSL, Windows --------------------------------------------------------------------------------------------

def wsl_findings(system: System) -> List[Finding]:
    if system.windows:
        return []
    wsl = system.local("/usr/lib/wsl/lib")
    if not wsl.is_dir():
        return []
    out = [_f("WSL2", INFO, N_("WSL2: the NVIDIA driver is the Windows one, exposed in /usr/lib/wsl/lib"),
              N_("update the driver on Windows, never inside WSL; keep /usr/lib/wsl/lib on the loader path"))]
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"):
        for n in ("libcuda.so.1", "libcuda.so"):
            p = system.local(f"{d}/{n}")
            if p.exists() and not os.path.realpath(p).startswith(os.path.realpath(wsl)):
                lib = f"{d}/{n}"
                out.append(_f("WSL2_LINUX_LIBCUDA", ERROR,
                              M("{path} is a Linux driver library that shadows /usr/lib/wsl/lib/libcuda.so.1", path=lib),
                              N_("remove the Linux NVIDIA driver packages inside WSL (apt remove 'libnvidia-compute-*')")))
                return out
    return out


def windows_findings(system: System, prefix: Optional[str]) -> List[Finding]:
    if not system.windows:
        return []
    out: List[Finding] = []
    if prefix:
        if any(ord(c) > 127 for c in prefix):
            out.append(_f("PREFIX_NON_ASCII", WARNING, M("the environment path {prefix} has non-ASCII characters",
                                                         prefix=prefix),
                          N_("create the environment under an ASCII-only path (conda create -p C:\\envs\\NAME)")))
        if " " in prefix:
            out.append(_f("PREFIX_HAS_SPACES", WARNING, M("the environment path {prefix} has spaces", prefix=prefix),
                          N_("create the environment under a path without spaces")))
    windir = system.environ.get("SystemRoot") or system.environ.get("windir") or r"C:\Windows"
    sys32 = system.join(windir, "System32")
    missing = [n for n in ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll")
               if not system.local(system.join(sys32, n)).is_file()]
    if missing:
        out.append(_f("VCRUNTIME_MISSING", ERROR, M("{files} missing from {folder}: torch's c10.dll fails with "
                                                    "WinError 1114/126", files=Listed(missing), folder=sys32), N_("install the Microsoft Visual C++ 2015-2022 Redistributable "
                      "(x64): https://aka.ms/vs/17/release/vc_redist.x64.exe"), missing))
    return out


# ---- the environment's hooks and torch install -----------------------------------------------------------------

def hook_findings(prefix: str) -> List[Finding]:
    from cudaswitch.checks.activation_order import cuda_variables
    from cudaswitch.discovery.activation_scripts import scripts

    out: List[Finding] = []
    for script in scripts(prefix):
        if script.name.lower().startswith("cudaswitch"):
            continue
        hits = cuda_variables(script.text)
        if hits:
            out.append(_f("FOREIGN_CUDA_HOOKS", WARNING, M("{path} also sets {names} on activation; whichever hook "
                                                           "runs last wins", path=script.path, names=Listed(hits)), N_("remove that package's hook or the package that installs it "
                          "(conda list shows it), or keep it and do not use cudaswitch in this environment"),
                          [script.path]))
    return out


def _one_warning_per_script(hooks: List[Finding], reach: List[Finding], env, system: System) -> List[Finding]:
    """A script that reach's findings already explain (a user's script sorting after cudaswitch's,
    CUDA_SET_AFTER_SWITCH; conda-forge's CUDA packages' own, CONDA_FORGE_CUDA[_MIX]) is not reported a second time as
    FOREIGN_CUDA_HOOKS."""
    explained = {os.path.basename(d) for f in reach if f.code == "CUDA_SET_AFTER_SWITCH" for d in f.details}
    if any(f.code.startswith("CONDA_FORGE_CUDA") for f in reach):
        from cudaswitch.switching import condaforge

        explained |= {os.path.basename(s) for s in condaforge.read(env.prefix, system.windows).flag_scripts}
    kept = [f for f in hooks if not (f.code == "FOREIGN_CUDA_HOOKS" and f.details
                                     and all(os.path.basename(d) in explained for d in f.details))]
    return kept + reach


def torch_findings(installs: Dict, driver: Driver, windows: bool) -> List[Finding]:
    out = install_findings(installs)
    version = installs.get("version")
    if not version:
        return out
    base, local = knowledge.split_local(version)
    py = installs.get("python")
    if py:
        ok = knowledge.python_ok(base, py)
        beyond = knowledge.python_beyond(base)
        if beyond:
            out.append(_f("TABLES_BEHIND", INFO, beyond, N_("update cudaswitch, or run tools/update_tables.py")))
        if ok and not ok[0]:
            out.append(_f("PYTHON_UNSUPPORTED", WARNING, M("Python {python} has no wheel for torch {torch} "
                                                         "({range}){src}", python=py, torch=base, range=ok[1],
                                                         src=Cited(ok[2])),
                          N_("use a Python in that range, or another torch (`cudaswitch recommend`)")))
    cuda = installs.get("cuda")
    if cuda and not driver.cuda_max and not driver.driver_version:
        from cudaswitch.checks.diagnosis import no_gpu_finding

        # the finding smoke gives the same torch on the same machine: one severity, one verdict
        out.append(no_gpu_finding(driver, version, cuda, windows, cpu_ok=False))
    if cuda and driver.cuda_max:
        v = knowledge.driver_runs(driver.cuda_max, cuda, windows)
        if v.status == "ok":
            out.append(_f("TORCH_DRIVER", INFO, M("torch {version} with this driver: fine ({verdict})", version=version,
                                                  verdict=v.message), "-"))
        elif v.status == "minor-compat":
            out.append(_f("TORCH_DRIVER", INFO, M("torch {version} with this driver: {verdict}", version=version,
                                                  verdict=v.message),
                          N_("update the driver for full support")))
        elif v.status == "too-old":
            out.append(_f("DRIVER_TOO_OLD", ERROR, M("torch {version} with this driver: {verdict}", version=version,
                                                     verdict=v.message),
                          N_("update the NVIDIA driver, or install torch for the driver's CUDA (`cudaswitch recommend`)")))
    return out


# ---- driver vs toolkits ------------------------------------------------------------------------------------

def driver_findings(driver: Driver, toolkits_in_use: List, system: System) -> List[Finding]:
    if not driver.cuda_max and driver.driver_version:  # installed, and too old for nvidia-smi to name a CUDA
        return [_f("DRIVER_TOO_OLD", ERROR, M("NVIDIA driver {version} is installed but names no CUDA version ({why})",
                                                version=driver.driver_version, why=message(driver.error) or "-"),
                   N_("update the NVIDIA driver: https://www.nvidia.com/Download/index.aspx"))]
    if not driver.cuda_max:
        return [_f("NO_DRIVER", INFO, M("{what} ({why}): CPU only", what=M(N_("no NVIDIA driver found")),
                                        why=message(driver.error) or M("none")),
                   N_("install the NVIDIA driver if this machine has an NVIDIA GPU"))]
    out = []
    dmax = knowledge.vtuple(driver.cuda_max)
    for label, tk in toolkits_in_use:
        tv = knowledge.vtuple(tk.version)
        if tv and dmax and tv[:2] > dmax[:2]:
            need = knowledge.min_driver(tk.version, system.windows)
            fix = (M("update the driver to >= {driver} for CUDA {cuda}", driver=need[0], cuda=tk.cuda.short) if need else N_("update the driver"))
            same_major = tv[0] == dmax[0]
            if same_major:
                cause = M("the driver supports CUDA {dmax} but {label} is CUDA {version} ({root}): programs built with "
                          "it run only under minor-version compatibility", dmax=driver.cuda_max, label=message(label),
                          version=tk.version, root=tk.root)
            else:
                cause = M("the driver supports CUDA {dmax} but {label} is CUDA {version} ({root})",
                          dmax=driver.cuda_max, label=message(label), version=tk.version, root=tk.root)
            out.append(_f("DRIVER_BELOW_TOOLKIT", None, cause, fix, when="same_major" if same_major else None))
    return out


def cudnn_findings(toolkits) -> List[Finding]:
    out = []
    for tk in toolkits:
        if not tk.cudnn:
            continue
        ans = knowledge.cudnn_supports(tk.cudnn, tk.version)
        if ans and not ans[0]:
            out.append(_f("CUDNN_TOOLKIT_MISMATCH", WARNING, M("cuDNN {cudnn} in {root} is not listed for CUDA "
                                                               "{cuda}{src}", cudnn=tk.cudnn, root=tk.root,
                                                               cuda=tk.cuda.short, src=Cited(ans[1])), N_("install the cuDNN build for this toolkit's CUDA major")))
    return out


# ---- all together --------------------------------------------------------------------------------------------

def doctor_env(system: System, name: Optional[str], prefix: Optional[str]):
    """The environment `doctor -n/-p` names, else the active one; none is fine, unless one was named."""
    from cudaswitch.discovery.environment import resolve_env

    if not (name or prefix or system.environ.get("CONDA_PREFIX")):
        return None
    try:
        return resolve_env(system, name, prefix, command="doctor")
    except UsageError:
        if name or prefix:
            raise
        return None


def run_doctor(system: System, env=None) -> DoctorReport:
    from cudaswitch.discovery.shellstate import shell_state
    from cudaswitch.discovery.toolkits import discover

    found = discover(system)
    state = shell_state(found.toolkits, system)
    driver = drivers.query(system)
    in_use = []
    active = next((t for t in found.toolkits if t.root == state.active), None)
    if active:
        in_use.append((N_("the shell's toolkit"), active))
    selected = None
    if env is not None:
        from cudaswitch.discovery.environment import read_state

        st = read_state(env)
        if st:
            selected = next((t for t in found.toolkits if t.root == st.root), None)
            if selected and selected is not active:
                in_use.append((M("the toolkit {name} uses", name=env.name), selected))
    findings: List[Finding] = []
    if env is not None and st:
        from cudaswitch.checks.switched import switch_findings

        findings += switch_findings(env.prefix, st.version, st.root, bool(st.ld_library_path), system)
        from cudaswitch.checks import hookhealth

        findings += hookhealth.findings(env, hookhealth.health(env, st, hookhealth.toolkit_for(st, found), system))
    findings += shell_findings(state, system)
    findings += ldconf_findings(system, found.toolkits, selected.root if selected else None)
    findings += driver_findings(driver, in_use, system)
    findings += wsl_findings(system)
    findings += windows_findings(system, env.prefix if env is not None else None)
    findings += cudnn_findings(found.toolkits)
    findings += cudnn_windows_findings(system, found.cudnn_installs, found.toolkits)
    from cudaswitch.checks.modules import module_findings

    findings += module_findings(system, found.toolkits, selected)
    torch = {}
    if env is not None:
        from cudaswitch.checks.reach import reach_findings

        findings += _one_warning_per_script(hook_findings(env.prefix), reach_findings(env, st, system), env, system)
        torch = torch_installs(env.prefix)
        findings += torch_findings(torch, driver, system.windows)
        from cudaswitch.checks.diagnosis import vc_runtime_findings

        findings += vc_runtime_findings(system, env.prefix, torch)
        from cudaswitch.checks.build import build_findings

        findings += build_findings(torch, found.toolkits, system, env.prefix, selected)
    if any(f.code == "NO_GPU" for f in findings):  # it names the missing driver itself, as smoke says it
        findings = [f for f in findings if f.code != "NO_DRIVER"]
    order = {ERROR: 0, WARNING: 1, INFO: 2}
    findings.sort(key=lambda f: order.get(f.severity, 3))
    return DoctorReport(findings, driver, env.to_json() if env is not None else None,
                        active.to_json() if active else None, selected.to_json() if selected else None, torch)


def doctor_lines(report: DoctorReport) -> List[str]:
    """The text `cudaswitch doctor` prints."""
    d = report.driver
    if not d.cuda_max and not d.driver_version:
        head = _("driver: max CUDA none")
    else:
        head = (_("driver: max CUDA {cuda} (driver {version})") if d.driver_version else
                _("driver: max CUDA {cuda}")).format(cuda=d.cuda_max or _("none"), version=d.driver_version)
    lines = [head + (f" [{d.source}]" if d.source else "")]
    if report.active_toolkit:
        lines.append(_("shell toolkit: CUDA {version} ({root})").format(version=report.active_toolkit['version'],
                                                                        root=report.active_toolkit['root']))
    if report.env is not None:
        lines.append(_("environment: {name} ({prefix})").format(name=report.env['name'], prefix=report.env['prefix']))
        t = report.torch
        if t.get("version"):
            text = (_("torch (from its files): {version}, CUDA {cuda}, cuDNN {cudnn}, Python {python}") if t.get("cudnn")
                    else _("torch (from its files): {version}, CUDA {cuda}, Python {python}"))
            lines.append(text.format(version=t.get('build_version') or t['version'], cuda=t.get('cuda') or _('none'),
                                     cudnn=t.get('cudnn'), python=t.get('python') or '?'))
    if not report.findings:
        lines.append(_("no problems found"))
    for f in report.findings:
        lines.append(f"{severity_label(f.severity)} {f.code}: {tr(f.cause)}")
        if f.fix and f.fix != "-" and f.severity != "info":
            lines.append(f"{'':<8} " + _("fix: {fix}").format(fix=tr(f.fix)))
    lines.append(_("result: OK") if report.ok else _("result: problems found"))
    return lines


def cudnn_windows_findings(system: System, installs: List, toolkits) -> List[Finding]:
    """cuDNN from NVIDIA's Windows installer (cudaswitch/discovery/cudnn_windows.py finds it). CUDNN_BIN_WITHOUT_DLL: an installer bin entry on PATH holds no DLL; CUDNN_NOT_ON_PATH: cuDNN is installed but
    no cudnn64_*.dll is reachable on PATH (programs that load it from PATH fail with error 126)."""
    if not system.windows:
        return []
    from cudaswitch.cudnn.compat import joined
    from cudaswitch.discovery.cudnn_windows import dll_on_path, empty_installer_bin_entries

    out: List[Finding] = []
    with_dll = [i for i in installs if i.dll]
    hint = joined([M("{folder} (cuDNN {version} for CUDA {cuda})", folder=i.bin_dir, version=i.version or "?",
                     cuda=i.cuda) for i in with_dll])
    for entry in empty_installer_bin_entries(system):
        under = [i for i in with_dll if i.root.lower() == str(system.pure(entry.strip('"')).parent).lower()]
        fix = M("put the folder for your CUDA version on PATH instead: {folders}",
                folders="; ".join(i.bin_dir for i in under)) \
            if under else M("put the bin\\<CUDA version> folder that holds cudnn64_9.dll on PATH instead")
        out.append(Finding("CUDNN_BIN_WITHOUT_DLL", WARNING,
                           M("PATH holds {entry}, which NVIDIA's cuDNN installer adds, but no cudnn64_*.dll is in it "
                             "(the DLLs are one level down, per CUDA version)", entry=entry), fix, [entry]))
    with_cudnn = [t for t in toolkits if getattr(t, "cudnn", None)]
    if dll_on_path(system) is None and (with_dll or with_cudnn):
        where = hint or Listed(f"{system.join(t.root, 'bin')} (cuDNN {t.cudnn})" for t in with_cudnn)
        # the DLL's name follows cuDNN's major version: a toolkit with cuDNN 8 in it holds cudnn64_8.dll
        names = sorted({str(system.pure(i.dll).name) for i in with_dll} if with_dll else
                        {f"cudnn64_{t.cudnn.split('.')[0]}.dll" for t in with_cudnn})
        names_text = M("{first} or {second}", first=names[0], second=" or ".join(names[1:])) if len(names) > 1 \
            else names[0]
        out.append(Finding("CUDNN_NOT_ON_PATH", WARNING,
                           M("no cudnn64_*.dll is reachable on PATH: programs that load cuDNN from PATH (TensorFlow, "
                             "onnxruntime, your own builds) fail with error 126; torch wheels carry their own"),
                           M("put the folder holding {names} for your CUDA version on PATH: {where}", names=names_text,
                             where=where), []))
    return out
