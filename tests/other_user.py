"""Another account on the machine, for the tests that replay attacks on root (tests/core/test_security.py,
tests/discovery/test_toolkit_security.py): files planted by the unprivileged uid 65534, and the command line run as
a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
import traceback
from pathlib import Path

from conftest import REPO, one_line_error

NOBODY = 65534


def as_user(fn, uid: int = NOBODY) -> None:
    """Run fn() in a forked child as `uid` (what an ordinary account on the machine can do)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            fn()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the planting child failed"


def refused(proc, *needles):
    """one_line_error with any failing code, no traceback on stdout either, and the line names each of `needles`."""
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Traceback" not in out and "internal error" not in out, out
    line = one_line_error(proc, proc.returncode)
    for n in needles:
        assert n.lower() in line.lower(), line
    return line


def console_script(base: Path) -> list:
    """The command line as pip installs it (a script whose folder, not the working folder, leads sys.path), without
    the test seams of tests/seams.py: what a user runs."""
    script = base / "cudaswitch-entry"
    script.write_text(f"import sys\nsys.path[0] = {str(REPO)!r}\nfrom cudaswitch.cli import main\nmain()\n")
    return [sys.executable, str(script)]


def shared_base(prefix: str):
    """(base, attacker, victim, home): a world-traversable folder (pytest's tmp_path is root-only) holding
    `attacker/` (owned by uid 65534), a root-only `victim/` with a 0600 secret, and a root-owned `home/`."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o755)
    attacker = base / "attacker"
    attacker.mkdir()
    os.chown(attacker, NOBODY, NOBODY)
    victim = base / "victim"
    victim.mkdir(mode=0o700)
    (victim / "secret").write_bytes(b"root only\n")
    (victim / "secret").chmod(0o600)
    home = base / "home"
    home.mkdir()
    return base, attacker, victim, home


def readable_cli(base: Path, args, env, uid=None, cwd="/", timeout=300):
    """The command line (console_script) as a real process whose interpreter every user can read: this one, from a
    bind mount at base/py in a private mount namespace (the suite's interpreter may sit in root's 0700 home, where
    the other side of the privilege boundary, cudaswitch working as an environment's owner, could not import from
    it; an installed cudaswitch lives where every user can). `uid`: run as that user instead of root."""
    src = Path(os.path.realpath(sys.base_prefix))
    dst = base / "py"
    dst.mkdir(exist_ok=True)
    dst.chmod(0o755)
    python = dst / Path(os.path.realpath(sys.executable)).relative_to(src)
    # the run-time dependencies where the bind mount shows them (not every build finds its own site-packages when
    # started from another prefix)
    site = dst / Path(os.path.realpath(sysconfig.get_paths()["purelib"])).relative_to(src)
    script = console_script(base)
    script[0] = str(python)
    user = [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           'mount --bind "$0" "$1" && shift && exec "$@"', str(src), str(dst), *user, *script,
                           *map(str, args)], env=dict(env, PYTHONPATH=str(site)), capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def without_working_as(proc):
    """(`proc` with its notes taken off stderr, the line saying cudaswitch worked as the environment's owner), for
    the checks that want the rest of stderr to be one error line."""
    lines = proc.stderr.splitlines(keepends=True)
    said = [ln for ln in lines if ln.startswith("cudaswitch: note: working as ")]
    assert said, proc.stderr
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout, "".join(
        ln for ln in lines if not ln.startswith("cudaswitch: note: "))), said[0]
