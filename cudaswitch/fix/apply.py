"""Apply a plan under its journal, check that it cleared what it was for, and undo the last one: the work
`doctor --fix` / `doctor --undo` and `conda doctor --fix cudaswitch` share. Records only; the callers print."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional

from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import Listed, M
from cudaswitch.fix import journal
from cudaswitch.fix.plan import Plan, build_plan, findings_for, fixer


@dataclass
class Outcome:
    """After a plan: doctor's new report, and per step the codes it was for that doctor still finds."""

    report: object
    left: List[List[str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(self.left)


def check_owner(prefix: str) -> None:
    """Root changes its own environments only: `doctor --fix` works on another user's as that user
    (core/asowner.py, before this runs); a caller that cannot (conda's own `conda doctor --fix` run as root) is
    refused here, in one line, with nothing changed."""
    from cudaswitch.core.trust import euid, user_name

    me = euid()
    if me != 0:
        return
    try:
        owner = os.stat(prefix).st_uid
    except OSError:
        return
    if owner != 0:
        raise UsageError(M("{prefix} belongs to {user}: as root, --fix and --undo do not change another user's "
                           "environment; run it as {user}", prefix=prefix, user=user_name(owner)))


def doctor_again(system, env):
    from cudaswitch.checks.doctor import run_doctor

    return run_doctor(system, env)


def plan_for(system, env, only: Optional[List[str]] = None):
    """(doctor's report, the plan built from it)."""
    journal.refuse_pending(env.prefix)
    report = doctor_again(system, env)
    return report, build_plan(findings_for(report, env, system), env, system, only)


def apply_plan(plan: Plan, env, system) -> None:
    """Every step, under one journal; a step that fails puts back what the ones before it changed."""
    from cudaswitch.core import faults

    check_owner(env.prefix)
    paths = [p for s in plan.steps for p in s.paths]
    packages = [p for s in plan.steps for p in s.data.get("packages", [])]
    j = journal.begin(env.prefix, paths, plan.codes, [s.command for s in plan.steps], packages)
    try:
        for n, step in enumerate(plan.steps, 1):
            faults.reach("fix-step", n)
            fixer(step.fixer).apply(step, env, system)
    except (CudaswitchError, OSError, subprocess.SubprocessError) as exc:
        journal.restore(j)
        raise CudaswitchError(M("{why}; every file --fix changed was put back", why=str(exc))) from None
    faults.reach("fix-commit", 1)
    journal.commit(j)


def cleared(plan: Plan, env, system) -> Outcome:
    report = doctor_again(system, env)
    found = {f.code for f in findings_for(report, env, system)}
    return Outcome(report, [[c for c in s.codes if c in found] for s in plan.steps])


def undo(env, system) -> List[str]:
    """The last plan's files back as they were; the files that differed."""
    check_owner(env.prefix)
    j = journal.read(env.prefix)
    if j is None:
        raise UsageError(M("no 'doctor --fix' to undo in {prefix}", prefix=env.prefix))
    return journal.restore(j)


def outcome_lines(plan: Plan, out: Outcome) -> List[str]:
    from cudaswitch.core.i18n import tr

    lines = []
    for n, (step, left) in enumerate(zip(plan.steps, out.left), 1):
        if left:
            lines.append(tr(M("step {n} did not clear {codes}: doctor still finds it", n=n, codes=Listed(left))))
        else:
            lines.append(tr(M("step {n} cleared {codes}", n=n, codes=Listed(step.codes))))
    return lines
