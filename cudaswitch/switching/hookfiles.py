"""Render the activation hooks of every shell from `templates/` and write them into a conda environment.

What a switch changes comes from `activation.changes_for` (one pipeline); this module only puts those values,
quoted for each shell (`shells.py`), into the templates, and owns the files: one per shell per folder, named
`cudaswitch.<ext>` in `etc/conda/activate.d` and `etc/conda/deactivate.d` (conda runs one extension per shell:
docs/design/activation.md).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from cudaswitch import __version__
from cudaswitch.core import faults, trust
from cudaswitch.switching.activation import Changes
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.core.fsutil import atomic_write
from cudaswitch.discovery.envfiles import DIRECTIONS, HOOK_DIRS, HOOK_NAME
from cudaswitch.discovery.envfiles import MARKER as HOOK_FILE_MARKER
from cudaswitch.core.shells import SHELLS, Shell, msys_path

_PLACEHOLDERS = ("CUDASWITCH_VERSION", "VERSION", "ROOT", "PATH_ADD_LIST", "PATH_ADD", "LD_ADD_LIST", "LD_ADD",
                 "MAXLEN_1", "MAXLEN_2", "MAXLEN_3", "MAXLEN", "BANG_CHECK")
_PLACEHOLDER_RE = re.compile("@(" + "|".join(_PLACEHOLDERS) + ")@")
# Test seam: None in production, and nothing a user sets turns it on; tests/seams.py assigns it so that the suite
# can write a hook with one broken line and see `use` catch it (switching/verify.py). (shell key, direction,
# rendered text, the first PATH entry as rendered) -> text.
CORRUPT: Optional[Callable[[str, str, str, str], str]] = None


def template_dir() -> Path:
    from cudaswitch.core.resources import resource_dir

    return resource_dir("templates")


def _template(name: str) -> str:
    from cudaswitch.core.trust import package_text

    return package_text(template_dir() / name)


def hook_folder(prefix: str, direction: str) -> Path:
    """etc/conda/<direction>.d, where conda finds every shell's hook."""
    return Path(prefix, "etc", "conda", f"{direction}.d")


def hook_path(prefix: str, direction: str, shell: Shell) -> Path:
    return hook_folder(prefix, direction) / f"{HOOK_NAME}.{shell.ext}"


def all_hook_paths(prefix: str) -> List[Path]:
    return [hook_path(prefix, d, s) for s in SHELLS.values() for d in DIRECTIONS]


def check_paths(changes: Changes, windows: bool) -> None:
    """Refuse what no shell can carry: a list separator inside a list entry, a newline, a NUL."""
    sep = ";" if windows else ":"
    for var, entries in changes.prepend.items():
        for entry in entries:
            if sep in entry:
                raise CudaswitchError(M("{entry!r} contains {sep!r}, the {var} separator, so it cannot be put on "
                                        "{var}; install or link the toolkit under a path without it", entry=entry,
                                        sep=sep, var=var))
    for value in [*changes.scalars.values(), *(e for es in changes.prepend.values() for e in es)]:
        if "\n" in value or "\r" in value or "\0" in value:
            raise CudaswitchError(M("{value!r}: a path with a line break cannot be written into a shell hook",
                                    value=value))


def _conda_export_breaks(windows: bool) -> List[Tuple[str, str]]:
    """(character, the shells whose conda PATH export it breaks, as shown) for the records' `conda_export` checked
    on that system, each character once, in the records' order; the shells in alphabetical order, so that the
    sentence does not depend on the records' order."""
    shells: Dict[str, List[str]] = {}
    for sh in SHELLS.values():
        export = sh.conda_export
        if export is not None and export.windows == windows:
            for ch in export.breaks:
                shells.setdefault(ch, []).append(export.shown)
    return [(ch, Listed(sorted(shown))) for ch, shown in shells.items()]


def conda_export_problem(changes: Changes, windows: bool) -> Optional[str]:
    """Why conda itself could not carry the toolkit's PATH entries through its unescaped PATH export in one of
    the shells cudaswitch writes hooks for (each record's `conda_export`), or None (docs/design/activation.md,
    "Paths a hook cannot carry")."""
    breaks = _conda_export_breaks(windows)
    for entry in changes.prepend.get("PATH", []):
        for ch, shell in breaks:
            if ch in entry:
                return M("{entry} contains {ch!r}, which conda's own unescaped PATH export in {shell} would execute "
                         "or mangle; install or link the toolkit under a path without it", entry=entry, ch=ch,
                         shell=shell)
    return None


# The one warning an activate hook prints (the toolkit is gone), as the templates spell it in English. The hook is
# rendered at `use` time and read at every activation, so it speaks the language of the user who ran `use`: the
# sentence is replaced by its translation here, with the template's own variable for the root, where the shell's file
# encoding can carry it (docs/design/i18n.md, "Hook warnings"); cmd.exe's .bat is ASCII and stays English.
GONE_WARNING = N_("CUDA {version} is gone from {root}; this environment keeps the CUDA settings it had (run "
                  "'cudaswitch use' again)")
_GONE_RE = re.compile(r"cudaswitch: warning: CUDA @VERSION@ is gone from (\$[A-Za-z_]+(?::q)?); this environment "
                      r"keeps the CUDA settings it had \(run 'cudaswitch use' again\)")
# Characters a translation must not bring into the double-quoted strings the sentence sits in: expansion, quoting and
# escapes in sh, fish, csh (`!` history) and PowerShell (which also takes typographic quotes as quotes).
_UNSAFE_IN_HOOK = set('$`"\\!\n\r\0\u2018\u2019\u201a\u201b\u201c\u201d\u201e')


def _warning_text(root_ref: str) -> Optional[str]:
    """The translated hook warning with the shell variable `root_ref` in it, or None (English: leave the template)."""
    from cudaswitch.core.i18n import ENGLISH, _, current_language

    if current_language() == ENGLISH:
        return None
    sentence, line = _(GONE_WARNING), _("warning: {message}")
    if sentence == GONE_WARNING or any(ch in _UNSAFE_IN_HOOK for ch in sentence + line):
        return None
    # fish takes any Unicode letter into a variable's name ($__cs_root已 is another variable) and csh reads `:` after
    # a name as a modifier: what follows the root must be an ASCII space or punctuation
    after = sentence.partition("{root}")[2][:1]
    if after and (not after.isascii() or after.isalnum() or after in "_:[{"):
        return None
    try:
        return "cudaswitch: " + line.format(message=sentence.format(version="@VERSION@", root=root_ref))
    except (KeyError, IndexError, ValueError):  # a translation that lost a placeholder: the English line
        return None


def _translate_warnings(text: str, shell: Shell) -> str:
    def one(m):
        translated = _warning_text(m.group(1))
        if translated is None:
            return m.group(0)
        try:
            translated.encode(shell.encoding)
        except UnicodeEncodeError:  # cmd.exe's ASCII file: English
            return m.group(0)
        return translated

    return _GONE_RE.sub(one, text)


def render_hook(shell_key: str, direction: str, changes: Changes, version: str, windows: bool = False) -> bytes:
    """The bytes of one hook file: template + library block, placeholders replaced by quoted values. With
    `windows`, the .sh hook (read by Git Bash/MSYS, which splits PATH on ':') gets MSYS spellings of the PATH
    entries; CUDA_PATH and CUDA_HOME keep the Windows spelling native tools read."""
    shell = SHELLS[shell_key]
    path_add = changes.prepend.get("PATH", [])
    if windows and shell.msys_on_windows:
        path_add = [msys_path(p) for p in path_add]
    ld_add = changes.prepend.get("LD_LIBRARY_PATH", [])
    name = shell.template(direction)
    if direction == "activate" and shell.cannot_express and shell.cannot_express(changes):
        name = shell.unsupported
    values = shell.values(shell, changes, path_add, ld_add)
    values.update(VERSION=version, CUDASWITCH_VERSION=__version__)
    text = _template(name)
    if shell.lib and "@LIB@" in text:
        text = text.replace("@LIB@", _template(f"lib.{shell.ext}").rstrip("\n"))
    text = _translate_warnings(text, shell)
    text = _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], text)
    if CORRUPT is not None and path_add:
        text = CORRUPT(shell_key, direction, text, path_add[0])
    text = text.replace("\r\n", "\n").replace("\n", shell.newline)
    if shell.encoding == "utf-8-sig" and text.isascii():
        return text.encode("ascii")  # plain ASCII needs no BOM (docs/design/activation.md, PowerShell)
    return text.encode(shell.encoding)


def render_all(changes: Changes, version: str, windows: bool = False) -> Dict[str, Dict[str, bytes]]:
    return {key: {d: render_hook(key, d, changes, version, windows) for d in DIRECTIONS} for key in SHELLS}


def is_ours(path: Path) -> bool:
    try:
        head = trust.read_bytes(path, limit=300, truncate=True)
    except OSError:
        return False
    return HOOK_FILE_MARKER.encode() in head


def write_hooks(prefix: str, changes: Changes, version: str, windows: bool = False) -> List[Path]:
    """Write every shell's hooks atomically; refuses to replace a file of the same name it did not write."""
    check_paths(changes, windows)
    rendered = render_all(changes, version, windows)
    if trust.POSIX:
        return _write_hooks_nofollow(prefix, rendered)
    targets = []
    for key, shell in SHELLS.items():
        for d in DIRECTIONS:
            path = hook_path(prefix, d, shell)
            if path.exists() and not is_ours(path):
                raise CudaswitchError(M("{path} exists and was not written by cudaswitch; move it away and run "
                                        "this again (cudaswitch never changes your own hook files)", path=path))
            targets.append((path, rendered[key][d]))
    for path, data in targets:
        atomic_write(path, data)
    return [p for p, _ in targets]


def _hook_dir(prefix: str, direction: str, create: bool = False) -> Optional[int]:
    """etc/conda/<direction>.d of the environment, opened without following a link below the prefix (a planted
    `activate.d -> /etc/profile.d` would make every login shell run the hooks); None when it does not exist."""
    try:
        return trust.open_dir(Path(prefix), ["etc", "conda", f"{direction}.d"], create=create)
    except FileNotFoundError:
        return None


def _write_hooks_nofollow(prefix: str, rendered: Dict[str, Dict[str, bytes]]) -> List[Path]:
    for d in DIRECTIONS:  # every name is checked before anything is written
        fd = _hook_dir(prefix, d)
        if fd is None:
            continue
        try:
            for shell in SHELLS.values():
                name = f"{HOOK_NAME}.{shell.ext}"
                if trust.regular_stat(fd, name) is None:
                    continue
                head = trust.read_regular(fd, name, 300)
                if head is None or HOOK_FILE_MARKER.encode() not in head:
                    path = hook_path(prefix, d, shell)
                    raise CudaswitchError(
                        M("{path} exists and was not written by cudaswitch; move it away and run this again "
                          "(cudaswitch never changes your own hook files)", path=path) if head is not None else
                        M("{path} exists and is not a regular file (a link, FIFO or device); move it away and run "
                          "this again (cudaswitch never changes your own hook files)", path=path))
        finally:
            os.close(fd)
    written = []
    for d in DIRECTIONS:
        fd = _hook_dir(prefix, d, create=True)
        try:
            for key, shell in SHELLS.items():
                trust.write_at(fd, f"{HOOK_NAME}.{shell.ext}", rendered[key][d])
                written.append(hook_path(prefix, d, shell))
                faults.reach("hook-written", len(written))
        finally:
            os.close(fd)
    return written


def remove_hooks(prefix: str, created_dirs: List[str] = ()) -> List[Path]:
    """Remove exactly the hook files cudaswitch wrote, and the folders it created if they are empty again."""
    created_dirs = [d for d in created_dirs if d in HOOK_DIRS]  # never a folder the state file merely names
    removed = _remove_ours(prefix, list(SHELLS.values()))
    if not trust.POSIX:
        for rel in sorted(created_dirs, key=len, reverse=True):  # deepest first
            try:
                trust.remove_dir(Path(prefix, rel))
            except OSError:
                pass
        return removed
    for rel in sorted(created_dirs, key=len, reverse=True):  # deepest first
        parent, _, name = rel.rpartition("/")
        try:
            fd = trust.open_dir(Path(prefix), parent.split("/") if parent else [])
        except (OSError, CudaswitchError):
            continue
        try:
            trust.remove_dir(name, dir_fd=fd)
        except OSError:
            pass  # not empty (the user's hooks live there too), already gone, or a link
        finally:
            os.close(fd)
    return removed


def remove_shell_hooks(prefix: str, shell_key: str) -> List[Path]:
    """Remove the activate and deactivate hook of one shell kind, where cudaswitch wrote them (its marker)."""
    return _remove_ours(prefix, [SHELLS[shell_key]])


def _remove_ours(prefix: str, shells: List[Shell]) -> List[Path]:
    """The hook files of `shells` that carry cudaswitch's marker, removed without following a link below the
    prefix; the paths removed."""
    removed = []
    if not trust.POSIX:
        for shell in shells:
            for d in DIRECTIONS:
                path = hook_path(prefix, d, shell)
                if path.exists() and is_ours(path):
                    trust.remove(path)
                    removed.append(path)
        return removed
    for d in DIRECTIONS:
        try:
            fd = _hook_dir(prefix, d)
        except CudaswitchError:
            continue  # a link there was never written by cudaswitch: nothing of ours behind it
        if fd is None:
            continue
        try:
            for shell in shells:
                name = f"{HOOK_NAME}.{shell.ext}"
                head = trust.read_regular(fd, name, 300)
                if head is not None and HOOK_FILE_MARKER.encode() in head and trust.unlink_at(fd, name):
                    removed.append(hook_path(prefix, d, shell))
                    faults.reach("hook-removed", len(removed))
        finally:
            os.close(fd)
    return removed


def dirs_to_create(prefix: str) -> List[str]:
    """The hook folders (relative to the prefix) that do not exist yet, parents first: `off` removes them."""
    out = []
    for rel in HOOK_DIRS:
        if not Path(prefix, rel).is_dir():
            out.append(rel)
    return out
