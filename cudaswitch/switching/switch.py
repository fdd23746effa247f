"""The switch itself: what `cudaswitch use`, `off` and `run` decide and do, as functions that return records.

The command line only parses, asks (the base environment, through a callback) and prints what these return;
the hooks are rendered and written by `hookfiles.py`.
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from cudaswitch import __version__
from cudaswitch.core import faults
from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.switching import hookfiles
from cudaswitch.switching.activation import Changes, apply, changes_for, recorded_entries
from cudaswitch.core.shells import SHELLS


@dataclass
class Choice:
    """What `use` was asked for, after the refresh rules and the environment file: the selector to resolve, the
    one the state file records, where a declared one came from, the LD_LIBRARY_PATH flag, the previous state."""

    selector: Optional[str]
    recorded: Optional[str]
    declared: Optional[str]
    ld_flag: Optional[bool]
    old: object  # SwitchState or None
    refresh: bool
    python_hook: Optional[bool] = None  # --python-hook/--no-python-hook; None: pythonhook.wanted decides
    force: bool = False  # --force: put the toolkit's nvcc over a conda-forge CUDA compiler in the environment


@dataclass
class SwitchResult:
    """What `use` did: the toolkit, the changes every hook makes, the files written, and what to tell the user."""

    toolkit: object
    changes: Changes
    written: List[Path]
    ld_library_path: bool
    ld_note: Optional[str]  # why LD_LIBRARY_PATH was left alone, or None
    unexpressible: Dict[str, str]  # shell name -> why its hook only warns
    first_switch: bool  # no earlier choice: the reconciler tip is shown once
    python_files: List[Path] = field(default_factory=list)  # the Python startup file (pythonhook.py), if written
    python_note: Optional[str] = None  # why it was not written, or None
    python_removed: List[Path] = field(default_factory=list)  # an earlier Python version's copy, taken out
    conda_cuda: object = None  # condaforge.CondaCuda: conda-forge's CUDA packages in the environment
    forced: Optional[str] = None  # the mix --force let through (condaforge.conflict), or None


@dataclass
class OffResult:
    removed: List[Path]
    had_state: bool
    state: object  # the SwitchState it held, or None
    still_set_here: bool  # this shell is inside the env and still has the removed toolkit set


def choose(env, selector: Optional[str], refresh: bool, ld_flag: Optional[bool]) -> Choice:
    """The refresh rules of `use`: --refresh takes the recorded root (and its LD_LIBRARY_PATH choice) and refuses
    a selector beside it; without a selector, the one the environment file declares."""
    from cudaswitch.discovery.environment import read_state

    try:
        old = read_state(env)
    except CudaswitchError:
        if refresh:
            raise
        old = None  # a new choice replaces a broken state file
    declared = None
    if refresh:
        if selector:
            raise UsageError(N_("give either SELECTOR or --refresh, not both"))
        if old is None:
            raise UsageError(M("environment {name!r} has no cudaswitch choice to refresh; run 'cudaswitch use SELECTOR'",
                                name=env.name))
        selector = old.root
        if ld_flag is None:
            ld_flag = old.ld_library_path
    elif not selector:
        from cudaswitch.switching.envfile import declared_selector

        selector, declared = declared_selector(env)
    # the state file records 'auto', not the folder it resolved to
    recorded = old.selector if refresh else selector
    return Choice(selector, recorded, declared, ld_flag, old, refresh)


def resolve_toolkit(found, choice: Choice, env, system, notes=None):
    """The toolkit the choice names among those discovery found; of two identical ones, the one the environment
    already records (`notes` hears the choice)."""
    from cudaswitch.discovery.toolkits import select

    if choice.refresh:
        old = choice.old
        # the state file lies in the environment: its root is taken only if discovery finds that toolkit itself
        tk = next((t for t in found.toolkits if old.root in (t.root, *t.aliases)), None)
        if tk is None:
            raise CudaswitchError(M("{state} records {root!r}, which is not a toolkit cudaswitch finds ('cudaswitch "
                                    "list' shows them); choose again with 'cudaswitch use SELECTOR'; nothing was changed",
                                    state=env.state_path, root=old.root))
        return tk
    try:
        return select(found, choice.selector, system, prefer=choice.old.root if choice.old else None, notes=notes)
    except UsageError as exc:
        if choice.declared:
            from cudaswitch.switching.envfile import missing_declared

            raise missing_declared(exc, choice.declared) from None
        raise


def check_switchable(tk) -> None:
    if not tk.bin_dirs:
        raise UsageError(M("CUDA {version} at {root} has no bin folder to put on PATH", version=tk.version, root=tk.root))


def check_coexistence(env, tk, choice: Choice, system):
    """(conda-forge's CUDA packages in the environment, the mix --force lets through or None); refuses the mix
    without --force (condaforge.py)."""
    from cudaswitch.switching import condaforge

    conda_cuda = condaforge.read(env.prefix, system.windows)
    forced = condaforge.conflict(conda_cuda, tk)
    if forced and not choice.force:
        raise CudaswitchError(condaforge.refusal(conda_cuda, tk))
    return conda_cuda, forced


def use(env, tk, choice: Choice, system) -> SwitchResult:
    """Switch the environment to `tk`: every shell's hooks, the Python startup file, then the state file."""
    from cudaswitch.switching import pythonhook

    conda_cuda, forced = check_coexistence(env, tk, choice, system)
    ld, note = ld_choice(env.prefix, choice.ld_flag)
    if choice.refresh and not ld and choice.old is not None and choice.ld_flag == choice.old.ld_library_path:
        note = N_("LD_LIBRARY_PATH left alone, as the recorded choice says (--ld-library-path adds it)")
    changes = changes_for(tk, system, ld_library_path=ld)
    want = pythonhook.wanted(choice.python_hook, env.is_base, choice.old)
    place = pythonhook.live_place(env.prefix, system.windows) if want else None
    if place is not None:
        pythonhook.check_place(env.prefix, place)  # refused before any hook is written
    from cudaswitch.core import interrupts

    # Ctrl-C held across the files of one switch: the environment keeps its old switch or gets the whole new one
    with interrupts.held() as held:
        written = write_switch(env, changes, tk, choice.recorded, choice.old, system.windows,
                               python=(want, place))
        removed = pythonhook.remove(env.prefix, keep=place)  # an older Python version's copy, or all when not wanted
    if held.pending:
        from cudaswitch.core.errors import FinishedInterrupted

        raise FinishedInterrupted(M("interrupted after the switch was written: environment {name} now uses CUDA "
                                    "{version} ({root})", name=env.name, version=tk.version, root=tk.root))
    py_files = [p for p in written if p.name in pythonhook.NAMES]
    py_note = None if py_files else (
        N_("no Python startup file: this environment has no Python") if want else
        N_("no Python startup file: a Python of this environment started without activation does not get the switch "
           "(the default in base; --python-hook writes it)") if env.is_base and choice.python_hook is None else
        N_("no Python startup file (--no-python-hook): a Python of this environment started without activation does "
           "not get the switch"))
    unexpressible = {sh.name: why for sh in SHELLS.values() if sh.cannot_express
                     for why in [sh.cannot_express(changes)] if why}
    return SwitchResult(tk, changes, [p for p in written if p not in py_files], ld, note, unexpressible,
                        choice.old is None, py_files, py_note, removed, conda_cuda, forced)


def run_environ(tk, ld_flag: Optional[bool], system) -> Dict[str, str]:
    """The environment `cudaswitch run` gives its command: this shell's, with an active cudaswitch environment's
    entries taken out first (as a hook would) and the toolkit's applied."""
    ld, _ = ld_choice(system.environ.get("CONDA_PREFIX"), ld_flag)
    changes = changes_for(tk, system, ld_library_path=ld)
    hookfiles.check_paths(changes, system.windows)  # a ':' inside the toolkit's path would split into two entries
    return apply(system.environ, changes, system, remove=recorded_entries(system.environ, system))


def off(env, environ) -> OffResult:
    """`cudaswitch off`: exactly the files `use` wrote, and the state file."""
    removed, had_state, state = unswitch(env)
    still = state is not None and env.prefix == environ.get("CONDA_PREFIX") and \
        state.root in (environ.get("CUDA_HOME"), environ.get("CUDA_PATH"))
    return OffResult(removed, had_state, state, still)


def shell_function_applies(env, environ) -> bool:
    """Whether the shell function (`cudaswitch init`) that runs this command applies its result to its shell: it
    re-runs the hooks of the environment that shell has active, and only those, so a `use`/`off` of another
    environment (-n/-p) changes nothing there."""
    if environ.get("CUDASWITCH_APPLIES") != "1" or not environ.get("CONDA_PREFIX"):
        return False
    norm = lambda p: os.path.normcase(os.path.realpath(p)).rstrip("\\/")  # noqa: E731
    return norm(environ["CONDA_PREFIX"]) == norm(env.prefix)


def pip_cuda_wheels(prefix: str) -> List[str]:
    """The pip `nvidia-*` CUDA wheels installed in an environment (torch from pip brings them). Prepending a
    system toolkit's lib64 to LD_LIBRARY_PATH there breaks torch (`undefined symbol __nvJitLink...`,
    pytorch/pytorch#111469), so `use` leaves LD_LIBRARY_PATH alone in such an environment unless asked."""
    from cudaswitch.discovery.environment import site_packages

    found = {p.name.split("-")[0].replace("_", "-") for sp in site_packages(prefix)
             for p in Path(sp).glob("nvidia_*.dist-info")}
    return sorted(found)


def ld_choice(prefix: Optional[str], flag: Optional[bool]):
    """(put the lib folder on LD_LIBRARY_PATH?, a note for the user). The flag wins; by default yes, unless the
    environment has pip CUDA wheels (see pip_cuda_wheels)."""
    if flag is not None:  # asked for; where left out, still said, as the default's reason is
        return flag, None if flag else N_("LD_LIBRARY_PATH left alone (--no-ld-library-path)")
    wheels = pip_cuda_wheels(prefix) if prefix else []
    if wheels:
        return False, M("LD_LIBRARY_PATH left alone: this environment has pip CUDA wheels ({wheels}), which a system "
                        "lib64 first on LD_LIBRARY_PATH breaks (undefined symbol __nvJitLink...); --ld-library-path "
                        "adds it anyway", wheels=Listed(wheels[:3] + (["..."] if len(wheels) > 3 else [])))
    return True, None


def write_switch(env, changes: Changes, toolkit, selector: str, old=None, windows: bool = False,
                 python=(False, None)) -> List[Path]:
    """Every shell's hooks, the Python startup file where `python` = (wanted, place) names one, then the state file
    recording the choice and what was written. `old` is the previous state (its record of created folders is kept,
    so `off` still removes them)."""
    from cudaswitch.discovery.environment import SwitchState, check_state_place, write_state

    problem = hookfiles.conda_export_problem(changes, windows)
    if problem:
        raise CudaswitchError(problem)
    _check_writable(env)
    created = hookfiles.dirs_to_create(env.prefix) if old is None else list(old.created_dirs)
    check_state_place(env)  # a link in place of etc/cudaswitch is refused before any hook is written
    written = hookfiles.write_hooks(env.prefix, changes, toolkit.version, windows=windows)
    want, place = python
    if place is not None:
        from cudaswitch.switching import pythonhook

        module = pythonhook.render_module(env.prefix, toolkit.root, toolkit.version, changes.prepend.get("PATH", []),
                                          changes.prepend.get("LD_LIBRARY_PATH", []), windows)
        written += pythonhook.write(env.prefix, place, module)
        faults.reach("python-written", 1)
    write_state(env, SwitchState(
        selector=selector, version=toolkit.version, root=toolkit.root,
        time=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        cudaswitch_version=__version__, ld_library_path=bool(changes.prepend.get("LD_LIBRARY_PATH")),
        files=[str(p.relative_to(env.prefix)) for p in written], created_dirs=created, python_hook=want))
    faults.reach("state-written", 1)
    return written


def _check_writable(env) -> None:
    from cudaswitch.core.fsutil import check_writable

    for folder in [hookfiles.hook_folder(env.prefix, d) for d in hookfiles.DIRECTIONS] + \
            [env.state_path.parent]:
        check_writable(folder, M("switch an environment you own (-n/-p), or ask its owner to run this"))


def unswitch(env):
    """(hook files removed, whether a state file was removed, the state it held or None)."""
    from cudaswitch.discovery.environment import clear_state, read_state

    _check_writable(env)
    try:
        state = read_state(env)
    except CudaswitchError:
        state = None  # a broken state file goes all the same; the hooks are found by name and marker
    from cudaswitch.core import interrupts
    from cudaswitch.switching import pythonhook

    # Ctrl-C held: the environment stays switched or is wholly unswitched, never a state file without its hooks
    with interrupts.held() as held:
        had_state = clear_state(env)
        faults.reach("state-cleared", 1)
        removed = pythonhook.remove(env.prefix) + hookfiles.remove_hooks(env.prefix,
                                                                         state.created_dirs if state else [])
    if held.pending:
        from cudaswitch.core.errors import FinishedInterrupted

        raise FinishedInterrupted(M("interrupted after the switch was removed: environment {name} is no longer "
                                    "switched", name=env.name))
    return removed, had_state, state


def apply_now_hint(name: str, prefix: str, windows: bool = False, system=None) -> str:
    """The one command that applies a new choice to the shell the user is in: activating the environment again
    re-runs its hooks (a reactivation: docs/design/activation.md, conda-path-first). The name is given only where
    conda can find the environment by it (base, or a folder in one of the envs folders); otherwise, and for a name with odd
    characters, the full prefix, which always works."""
    from cudaswitch.core.shellquote import for_user

    named = system is None or _conda_knows_name(prefix, system)
    if named and re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        return f"conda activate {name}"
    return for_user(["conda", "activate", prefix], system.environ if system else None, windows)


def _conda_knows_name(prefix: str, system) -> bool:
    from cudaswitch.discovery.condaenvs import conda_root
    from cudaswitch.discovery.environment import envs_dirs

    norm = lambda p: os.path.normcase(os.path.abspath(p)).rstrip("\\/")  # noqa: E731
    root = conda_root(system)
    if root and norm(root) == norm(prefix):
        return True
    return norm(os.path.dirname(norm(prefix))) in {norm(d) for d in envs_dirs(system)}

