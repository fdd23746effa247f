"""On another user's environment, work as that user (docs/design/security.md, "The boundary").

Run as root on an environment that belongs to an ordinary user, `use`, `off`, `smoke` and the hook check would
run her shells, her Python and her `.pth` files with root's rights and leave root-owned files she can no longer
remove. Checking every one of her files before each step is a list somebody forgets; this is the boundary instead:
the work is done in a child that has become the owner (her uid, her gid, her supplementary groups, and no way back
to root) before it touches the environment. Whatever she planted then runs with her own rights, and everything
written stays hers. The child hands its outcome back over a pipe as JSON; what it printed went to the same terminal.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M


@dataclass(frozen=True)
class Owner:
    uid: int
    gid: int
    name: str
    home: str

    def label(self) -> str:
        return f"{self.name} (uid {self.uid})"


def owner_to_become(prefix: str, euid: Optional[int] = None, lookup=None) -> Optional[Owner]:
    """The user cudaswitch must become before working on the environment at `prefix`: its owner, when cudaswitch
    runs as root and the environment belongs to someone else; None when the work is cudaswitch's own (an ordinary
    user, or a root-owned shared environment). Raises CudaswitchError, one line, where becoming the owner is
    impossible (no such user, no fork/setuid)."""
    if euid is None:
        euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid != 0:
        return None
    try:
        uid = os.stat(prefix).st_uid
    except OSError:
        return None  # nothing there to protect; resolve_env has already said what is missing
    if uid == 0:
        return None
    if not (hasattr(os, "fork") and hasattr(os, "setresuid")):
        raise CudaswitchError(M("refused to work on {prefix}: it belongs to uid {uid}, and this system cannot run "
                                "cudaswitch's work as that user; run it as that user; nothing was changed",
                                prefix=prefix, uid=uid))
    if lookup is None:
        import pwd

        lookup = pwd.getpwuid
    try:
        entry = lookup(uid)
    except KeyError:
        raise CudaswitchError(M("refused to work on {prefix}: it belongs to uid {uid}, which is no user on this "
                                "machine, so cudaswitch cannot work as its owner; give it to a user (chown) or run "
                                "it as that uid; nothing was changed", prefix=prefix, uid=uid)) from None
    return Owner(uid, entry.pw_gid, entry.pw_name, entry.pw_dir)


def working_as_line(owner: Owner, prefix: str) -> str:
    return M("working as {user} on their environment {prefix}: what runs there runs with their rights, and what is "
             "written stays theirs", user=owner.label(), prefix=prefix)


def drop(owner: Owner, ops=os) -> None:
    """Become `owner` for good: supplementary groups first (they need root), then the real, effective and saved
    gid, then the uids; then prove there is no way back (a setuid(0) that works means the drop failed)."""
    try:
        ops.initgroups(owner.name, owner.gid)
    except (OSError, AttributeError):
        ops.setgroups([owner.gid])
    ops.setresgid(owner.gid, owner.gid, owner.gid)
    ops.setresuid(owner.uid, owner.uid, owner.uid)
    try:
        ops.setuid(0)
    except PermissionError:
        pass
    else:
        raise OSError(M("could still become root after switching to {user}", user=owner.label()))
    if ops.getresuid() != (owner.uid,) * 3 or ops.getresgid() != (owner.gid,) * 3 or \
            (0 in ops.getgroups() and owner.gid != 0):
        raise OSError(M("the switch to {user} did not take", user=owner.label()))


def run_as(owner: Owner, work: Callable[[], object], fork=None, dropper=drop, unreadable=None):
    """work()'s JSON-able result, computed in a child that has become `owner`. A CudaswitchError, an exit
    (sys.exit) or an interrupt in the child is raised again here, with its line and code; so is a failure to drop,
    before the work starts. `fork`, `dropper` and `unreadable` (the check of cudaswitch's own files) are passed in
    by tests."""
    import signal

    fork = fork or os.fork
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # nothing buffered here may be printed twice
        except (OSError, ValueError):
            pass
    rfd, wfd = os.pipe()
    pid = fork()
    if pid == 0:  # pragma: no cover - runs in the child, checked through its effects
        os.close(rfd)
        _child(owner, work, wfd, dropper, unreadable or _unreadable_own_files)
    os.close(wfd)
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the child too; it answers for both
    try:
        chunks = []
        try:
            while sum(map(len, chunks)) < 16 << 20:  # a result record is small; a runaway child is not read on
                chunk = os.read(rfd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(rfd)
        data = b"".join(chunks)
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGINT, old)
    return _outcome(owner, data, status)


def _child(owner: Owner, work, wfd: int, dropper, unreadable) -> None:  # pragma: no cover - see run_as
    try:
        payload = json.dumps(_attempt(owner, work, dropper, unreadable)).encode("utf-8")
    except BaseException:
        payload = b'{"crash": "Exception", "message": "the result could not be sent"}'
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        view = memoryview(payload)
        while view:
            view = view[os.write(wfd, view):]
    finally:
        os._exit(0)


def _attempt(owner: Owner, work, dropper, unreadable) -> dict:
    """What the child sends back: the work's result, or how it ended."""
    try:
        dropper(owner)
    except OSError as exc:
        return {"error": M("refused to work as {user}: {why}; nothing was changed", user=owner.label(),
                           why=exc.strerror or exc), "code": 1}
    blocked = unreadable()
    if blocked:
        return {"error": M("refused to work as {user}: that user cannot read cudaswitch's own files ({path}); "
                           "install cudaswitch where every user can read it, or run it as that user; nothing was "
                           "changed", user=owner.label(), path=blocked), "code": 1}
    try:
        return {"result": work()}
    except SystemExit as exc:
        code = exc.code
        if code is None or isinstance(code, int):
            return {"exit": code}
        return {"exit": 1, "message": str(code)}
    except CudaswitchError as exc:
        from cudaswitch.core.i18n import tr

        return {"error": tr(str(exc)), "code": exc.exit_code}
    except KeyboardInterrupt:
        return {"interrupt": True}
    except BaseException as exc:
        return {"crash": type(exc).__name__, "message": str(exc)}


def _unreadable_own_files():
    """The first of cudaswitch's own folders (its package, the interpreter's standard library) the dropped child
    cannot read: it imports from them as it goes, and an install in root's 0700 home would fail half-way."""
    import cudaswitch

    for folder in (os.path.dirname(cudaswitch.__file__), os.path.dirname(os.__file__)):
        if not os.access(folder, os.R_OK | os.X_OK):
            return folder
    return None


class ChildCrash(Exception):
    """An unexpected failure in the owner's child, raised here so that the CLI reports it as it would its own."""


def _outcome(owner: Owner, data: bytes, status: int):
    try:
        out = trust.parse_json(data, "the owner's child") if data else None
    except CudaswitchError:
        out = None
    if not isinstance(out, dict):
        how = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
        raise CudaswitchError(M("the work as {user} ended without a result (exit status {code})",
                                user=owner.label(), code=how))
    if "result" in out:
        return out["result"]
    if "exit" in out:
        if out.get("message"):
            print(out["message"], file=sys.stderr)
        sys.exit(out["exit"])
    if "interrupt" in out:
        raise KeyboardInterrupt
    if "error" in out:
        err = CudaswitchError(out["error"])
        err.exit_code = out.get("code", 1)
        raise err
    raise ChildCrash(f"{out.get('crash')}: {out.get('message')}")


def as_owner_of(prefix: str, work: Callable[[], object], say: Callable[[str], None], euid: Optional[int] = None,
                runner=run_as):
    """work() done as the owner of the environment at `prefix` where cudaswitch has more privilege than that owner
    (saying so with `say`, one line), else done here."""
    owner = owner_to_become(prefix, euid)
    if owner is None:
        return work()

    def as_them():
        say(working_as_line(owner, prefix))  # said once it is true: the child has become the owner
        return work()
    return runner(owner, as_them)
