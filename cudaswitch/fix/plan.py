"""The plan `doctor --fix` shows before it changes anything: plain records built from doctor's findings.

One Step per fixer that has something to do (several findings one fixer clears share a step: `use --refresh`
clears both a stale hook and a stale startup file), each with the findings it fixes, every change it makes and the
command a user could paste instead. A finding no fixer handles stays Advice, with doctor's own fix text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from cudaswitch.core.i18n import M

# the fixer modules, in the order their steps run (cudaswitch/fix/<name>.py)
FIXERS = ("toolkit", "refresh", "kernelspec", "usersite", "condamixed", "torchset", "numpy")


@dataclass
class Change:
    kind: str  # "file" (rewritten, created), "variable" (a variable a file sets: before -> after, None = unset),
    # "package" (a distribution: version before -> after), "index" (where pip takes it from)
    target: str
    before: Optional[str] = None
    after: Optional[str] = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "target": self.target, "before": self.before, "after": self.after}


@dataclass
class Step:
    fixer: str
    codes: List[str]
    causes: List[str]
    changes: List[Change]
    command: str  # the pasteable equivalent
    data: Dict = field(default_factory=dict)  # what the fixer needs to apply it (plain values)
    paths: List[str] = field(default_factory=list)  # every file it may write, journaled before it runs

    def to_json(self) -> dict:
        return {"fixer": self.fixer, "codes": self.codes, "causes": [str(c) for c in self.causes],
                "changes": [c.to_json() for c in self.changes], "command": self.command}


@dataclass
class Advice:
    code: str
    cause: str
    fix: str
    lines: List[str] = field(default_factory=list)  # pasteable commands for the user's own settings


@dataclass
class Plan:
    prefix: str
    name: str
    steps: List[Step]
    advice: List[Advice]
    not_found: List[str]  # codes the user asked to fix that doctor did not find here
    findings: List = field(default_factory=list)  # what the plan was built from (a choice rebuilds it from them)
    only: List[str] = field(default_factory=list)

    def rebuilt(self, env, system, choices: Dict[str, str]) -> "Plan":
        return build_plan(self.findings, env, system, self.only or None, choices)

    @property
    def codes(self) -> List[str]:
        return [c for s in self.steps for c in s.codes]


def fixer(name: str):
    import importlib

    return importlib.import_module(f"cudaswitch.fix.{name}")


def fixer_codes() -> List[str]:
    return [c for name in FIXERS for c in fixer(name).CODES]


def findings_for(report, env, system) -> List:
    """doctor's findings (the hook files' health among them, checks/hookhealth.py) and,
    where torch is installed, the smoke test's (NUMPY_ABI, a second torch, ... show only when torch is imported)."""
    out = list(report.findings)
    if env is not None and (report.torch or {}).get("version"):
        from cudaswitch.checks.smoke import run_smoke

        seen = {f.code for f in out}
        smoke = run_smoke(env, system, cpu_ok=not report.driver.cuda_max)
        out += [f for f in smoke.findings if f.code not in seen]
    return out


def build_plan(findings: List, env, system, only: Optional[List[str]] = None,
               choices: Optional[Dict[str, str]] = None) -> Plan:
    """The steps for `findings` (those of `only`, when given: codes, case-insensitive), and the rest as advice.
    `choices`: fixer name -> the choice the user made among a step's ways (Step.data["choices"]), else its
    default."""
    wanted = {c.upper() for c in only} if only else None
    problems = [f for f in findings if f.severity != "info" and (wanted is None or f.code in wanted)]
    steps: List[Step] = []
    handled = set()
    if env is not None:
        for name in FIXERS:
            mod = fixer(name)
            # a code in a fixer's ASKED is changed only when the user names it
            mine = [f for f in problems if f.code in mod.CODES
                    and (f.code not in getattr(mod, "ASKED", ()) or (wanted and f.code in wanted))]
            if not mine:
                continue
            chosen = (choices or {}).get(name)
            step = mod.plan(mine, env, system, findings, chosen) if chosen else mod.plan(mine, env, system, findings)
            if step is not None:
                steps.append(step)
                handled |= {id(f) for f in mine if f.code in step.codes}
    exact = {}  # a fixer that cannot change a finding may still name the exact command (fixer.advise)
    if env is not None:
        for name in FIXERS:
            mod = fixer(name)
            left = [f for f in problems if f.code in mod.CODES and id(f) not in handled]
            if left and hasattr(mod, "advise"):
                exact.update(mod.advise(left, env, system, findings))
    advice = [Advice(f.code, f.cause, *exact.get(id(f), (f.fix, []))) for f in problems if id(f) not in handled]
    seen = {f.code for f in findings}
    not_found = sorted(wanted - seen) if wanted else []
    return Plan(env.prefix if env is not None else "", env.name if env is not None else "", steps, advice,
                not_found, findings, list(only or []))


def plan_lines(plan: Plan) -> List[str]:
    """The plan as `doctor --fix` and `conda doctor --fix cudaswitch` print it (translated here)."""
    from cudaswitch.core.i18n import _, tr

    lines: List[str] = []
    for code in plan.not_found:
        lines.append(tr(M("{code}: doctor does not find it here; nothing to fix", code=code)))
    if plan.steps:
        lines.append(tr(M("Plan for environment {name} ({prefix}): {count} step(s); nothing changes until you "
                          "confirm", name=plan.name, prefix=plan.prefix, count=len(plan.steps))))
    for n, step in enumerate(plan.steps, 1):
        lines.append(f"{n:>2}. {_(', ').join(step.codes)}: {tr(step.causes[0])}")
        for cause in step.causes[1:]:
            lines.append(f"    {tr(cause)}")
        for ch in step.changes:
            if ch.kind == "file":
                lines.append("    " + tr(M("file {path}: {what}", path=ch.target, what=ch.after or "")))
            elif ch.kind == "package":
                lines.append("    " + tr(M("package {name}: {before} -> {after}", name=ch.target, before=ch.before,
                                             after=ch.after)))
            elif ch.kind == "index":
                lines.append("    " + tr(M("from the index {url}", url=ch.target)))
            else:
                lines.append("    " + tr(M("variable {name}: {before} -> {after}", name=ch.target,
                                             before=ch.before if ch.before is not None else M("unset"),
                                             after=ch.after if ch.after is not None else M("unset"))))
        lines.append("    " + _("same as: {command}").format(command=step.command))
        for key, label in step.data.get("choices") or []:
            mark = _("chosen") if key == step.data.get("choice") else _("or")
            lines.append("    " + _("[{mark}] {key}: {label}").format(mark=mark, key=key, label=tr(label)))
    if plan.advice:
        lines.append(_("Advice only: --fix has no safe mechanical fix for these and leaves them to you:"))
        for a in plan.advice:
            fix = tr(a.fix) if a.fix and a.fix != "-" else ""
            lines.append(f" - {a.code}: {tr(a.cause)}")
            if fix:
                lines.append("   " + _("fix: {fix}").format(fix=fix))
            for line in a.lines:
                lines.append("     " + tr(line))
    if not plan.steps:
        lines.append(_("Nothing for --fix to change."))
    return lines
