"""What the conda plugin (cudaswitch/conda_plugin.py) says, as plain records, testable without conda.

`health(prefix)`: the lines `conda doctor` prints for an environment: the toolkit it is switched to is missing,
its hook files are not what this build writes for the same switch (checks/hookhealth.py), CUDA_HOME / CUDA_PATH /
nvcc disagree, torch was built for another CUDA major than the toolkit.

`after_change(prefix)`: after `conda install/update/remove`, one line when something `use` decided depends on
what changed, else None. It reads only the state file and a few folder listings, and returns at once (one stat)
in an environment cudaswitch does not switch.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import List, Optional

from cudaswitch import __version__
from cudaswitch.checks.severities import INFO, fails, severity
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.core.shellquote import for_user


@dataclass
class Check:
    severity: str  # the table's (checks/severities.py), as `doctor` and `smoke` report the same code
    code: str
    message: str
    fix: Optional[str] = None

    @property
    def ok(self) -> bool:
        """A fact, not a problem."""
        return self.severity == INFO


def _check(code: str, message: str, fix: Optional[str] = None) -> Check:
    return Check(severity(code), code, message, fix)


def _env(prefix: str, system):
    from cudaswitch.discovery.environment import _make

    return _make(prefix, system)


def health(prefix: str, system=None) -> List[Check]:
    from cudaswitch.discovery.environment import read_state
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.system import System

    system = system or System.current()
    env = _env(prefix, system)
    try:
        state = read_state(env)
    except CudaswitchError as exc:
        return [_check("STATE_UNREADABLE", str(exc))]
    out: List[Check] = []
    if state is None:
        out.append(_check("NOT_SWITCHED", N_("cudaswitch does not switch CUDA in this environment")))
    else:
        from cudaswitch.checks.switched import switch_findings

        facts = switch_findings(prefix, state.version, state.root, bool(state.ld_library_path))
        if not any(f.code == "TOOLKIT_MISSING" for f in facts):
            out.append(_check("TOOLKIT", M("switched to CUDA {version} ({root})", version=state.version,
                                           root=state.root)))
        out += [Check(f.severity, f.code, f.cause, f.fix) for f in facts]
        from cudaswitch.checks import hookhealth
        from cudaswitch.discovery.toolkits import discover

        result = hookhealth.health(env, state, hookhealth.toolkit_for(state, discover(system)), system)
        bad = hookhealth.findings(env, result)
        out += [Check(f.severity, f.code, f.cause, f"cudaswitch use --refresh -p {for_user([prefix])}") for f in bad]
        if not bad and result.known and result.files:
            out.append(_check("HOOKS", M("{count} hook files from cudaswitch {version}", count=len(result.files),
                                         version=__version__)))
    out.extend(_shell_agreement(system))
    return out


def health_lines(checks: List[Check], ok_mark: str, x_mark: str, verbose: bool = False) -> List[str]:
    """What `conda doctor` prints for `health()`: the cross mark when a check fails the result (an error, as in
    `cudaswitch doctor`), the check mark otherwise; every warning and error with its severity, as doctor shows it."""
    from cudaswitch.checks.diagnosis import severity_label
    from cudaswitch.core.i18n import _, tr

    bad = [c for c in checks if not c.ok]
    if not bad:
        return [f"{ok_mark} " + _("CUDA (cudaswitch): {checks}.").format(checks=_("; ").join(tr(c.message)
                                                                                        for c in checks)), ""]
    if any(fails(c.severity) for c in bad):
        lines = [f"{x_mark} " + _("CUDA (cudaswitch):")]
    else:
        facts = [tr(c.message) for c in checks if c.ok]
        lines = [f"{ok_mark} " + (_("CUDA (cudaswitch): {checks}.").format(checks=_("; ").join(facts)) if facts
                                  else _("CUDA (cudaswitch):"))]
    for c in bad:
        lines.append(f"  {severity_label(c.severity)} {c.code}: {tr(c.message)}")
        if c.fix:
            lines.append("    " + _("fix: {fix}").format(fix=tr(c.fix)))
    if verbose:
        lines += ["  " + _("ok: {message}").format(message=tr(c.message)) for c in checks if c.ok]
    return lines + [""]


def _shell_agreement(system) -> List[Check]:
    """CUDA_HOME / CUDA_PATH / nvcc on PATH as the shell running conda has them."""
    env = system.environ
    values = {v: env.get(v) for v in ("CUDA_HOME", "CUDA_PATH") if env.get(v)}
    nvcc = system.which("nvcc")
    if nvcc:  # a wrapper script such as /usr/local/bin/nvcc names its toolkit as status and doctor read it
        from cudaswitch.discovery.toolkits import nvcc_root

        values["nvcc"] = nvcc_root(system, nvcc)
    roots = {os.path.realpath(str(system.local(v.rstrip("\\/")))) for v in values.values()}
    if len(roots) > 1:
        shown = Listed(f"{k}={v}" for k, v in values.items())
        return [_check("CUDA_VARS_DISAGREE", M("this shell's CUDA settings disagree: {values}", values=shown),
                      N_("conda activate the environment again (its hooks set them), or `cudaswitch status`"))]
    return []


def after_change(prefix: Optional[str]) -> Optional[str]:
    """One line for the user after conda changed the environment, or None."""
    if not prefix:
        return None
    state_path = os.path.join(prefix, "etc", "cudaswitch", "state.yaml")
    if not os.path.isfile(state_path):
        return None
    from cudaswitch.discovery.environment import read_state
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.system import System

    system = System.current()
    try:
        state = read_state(_env(prefix, system))
    except CudaswitchError:
        return None
    if state is None:
        return None
    from cudaswitch.checks.diagnosis import severity_word
    from cudaswitch.checks.switched import switch_findings

    # the same findings, with the same severities, as `conda doctor`, `cudaswitch doctor` and `smoke` report
    notes = [M("{severity} {code}: {cause}; fix: {fix}", severity=severity_word(f.severity), code=f.code,
               cause=f.cause, fix=f.fix)
             for f in switch_findings(prefix, state.version, state.root, bool(state.ld_library_path))]
    if not notes:
        return None
    line = notes[-1]
    for note in reversed(notes[:-1]):
        line = M("{note}; and {other}", note=note, other=line)
    return M("cudaswitch: {note}", note=line)
