"""The CUDA toolkit an environment declares: `variables: {CUDASWITCH_CUDA: "11.8"}` in environment.yml.

`variables:` is conda's own section: `conda env create -f` stores it in `<prefix>/conda-meta/state` ("env_vars")
and `conda env export` writes it back, so the choice travels with the file and nothing conda does not know is
added to it. `cudaswitch use` without a selector reads it from conda-meta/state; `cudaswitch use X.Y --save FILE`
writes it into the file.

Saving edits the file's text at the place ruamel.yaml's round-trip parser locates (line and column of the
`variables` mapping and of the value), so every other byte (comments, anchors, quoting, blank lines, `pip:`
subsections, CRLF line ends, a BOM) stays as it was; the result is parsed again and must equal the original
document plus the one entry, else nothing is written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional, Tuple

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import M

VARIABLE = "CUDASWITCH_CUDA"
DEFAULT_FILE = "environment.yml"
_ENV_KEYS = ("dependencies", "channels", "name", "prefix", "variables")
_RX_VERSION = re.compile(r"\d+(\.\d+){0,2}")


def declared(prefix: str) -> Optional[Tuple[str, str]]:
    """(version, where) the environment declares, from conda-meta/state; None when it declares none."""
    from cudaswitch.core.trust import read_json

    path = Path(prefix, "conda-meta", "state")
    try:
        # conda writes {"env_vars": {"NAME": "value"}}; anything else there is not conda's and is not acted on
        data = read_json(path, {"env_vars": ({str: (str, int, float, bool, type(None))}, type(None))})
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CudaswitchError(M("{path}: unreadable ({why}); 'conda env config vars list -p {prefix}' shows what "
                                "conda makes of it", path=path, why=exc, prefix=prefix)) from None
    value = (data.get("env_vars") or {}).get(VARIABLE) if isinstance(data, dict) else None
    if value is None or str(value).strip() == "":
        return None
    return str(value).strip(), str(path)


def _load(text: str, path: str):
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        why = " ".join(str(getattr(exc, "problem", None) or exc).split())
        if mark is not None:
            raise UsageError(M("{path}: line {line} is not valid YAML ({why}); not changed", path=path,
                               line=mark.line + 1, why=why)) from None
        raise UsageError(M("{path}: is not valid YAML ({why}); not changed", path=path, why=why)) from None


def _plain(node):
    """The document as plain Python data, for comparing before and after."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node if node is None or isinstance(node, (bool, int, float)) else str(node)


def _scalar_end(line: str, col: int, flow: bool = False) -> int:
    """End column of the one-line scalar starting at `col`: a quoted string to its closing quote, a plain one up to
    a comment or the line end."""
    q = line[col:col + 1]
    if q == "'":
        i = col + 1
        while i < len(line):
            if line[i] == "'":
                if line[i + 1:i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return -1
    if q == '"':
        i = col + 1
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] == '"':
                return i + 1
            i += 1
        return -1
    m = re.search(r"\s*[,}\]]|\s+#|[\s\r]*$" if flow else r"\s+#|[\s\r]*$", line[col:])
    return col + m.start() if m else len(line)


def updated_text(text: str, version: str, path: str = DEFAULT_FILE) -> Tuple[str, bool]:
    """(new text, changed?) with `variables: CUDASWITCH_CUDA` set to `version`; UsageError when `text` is not a
    conda environment file or the entry cannot be written without touching anything else."""
    if not _RX_VERSION.fullmatch(version):
        raise UsageError(M("{version!r} is not a CUDA version like 11.8", version=version))
    body = text[1:] if text.startswith("\ufeff") else text
    bom = text[: len(text) - len(body)]
    data = _load(body, path)
    if not isinstance(data, dict) or not any(k in data for k in _ENV_KEYS):
        raise UsageError(M("{path} is not a conda environment file (expected a mapping with 'dependencies:' or "
                           "'channels:'); not changed", path=path))
    variables = data.get("variables")
    if variables is not None and not isinstance(variables, dict):
        raise UsageError(M("{path}: 'variables:' is not a mapping; not changed", path=path))
    if variables and str(variables.get(VARIABLE)) == version:
        return text, False
    nl = "\r\n" if "\r\n" in body else "\n"
    lines = body.split("\n")  # a CRLF file keeps its "\r" at each line's end
    quoted = f'"{version}"'
    if variables is not None and VARIABLE in variables:
        line, col = variables.lc.value(VARIABLE)
        end = _scalar_end(lines[line], col, flow=bool(variables.fa.flow_style()))
        if end < 0:
            raise UsageError(M("{path}: cannot rewrite the {var} value on line {line}; edit it by hand", path=path,
                               var=VARIABLE, line=line + 1))
        old = lines[line][col:end]
        new = f"'{version}'" if old.startswith("'") else quoted
        lines[line] = lines[line][:col] + new + lines[line][end:]
    elif variables is not None and (not variables or variables.fa.flow_style()) and \
            re.match(r"\s*(&\S+\s+)?\{", lines[data.lc.value("variables")[0]][data.lc.value("variables")[1]:]):
        line, col = data.lc.value("variables")
        brace = lines[line].find("{", col)
        if brace < 0:
            raise UsageError(M("{path}: cannot add {var} to the 'variables:' on line {line}; edit it by hand",
                               path=path, var=VARIABLE, line=line + 1))
        sep = ", " if len(variables) else ""
        lines[line] = lines[line][:brace + 1] + f"{VARIABLE}: {quoted}{sep}" + lines[line][brace + 1:]
    elif variables:
        first = next(iter(variables))
        line, col = variables.lc.key(first)
        cr = "\r" if nl == "\r\n" else ""
        lines.insert(line, " " * col + f"{VARIABLE}: {quoted}{cr}")
    else:
        key_line, _ = data.lc.key("variables") if "variables" in data else (None, None)
        cr = "\r" if nl == "\r\n" else ""
        if key_line is not None:  # `variables:` with nothing under it
            indent = len(lines[key_line]) - len(lines[key_line].lstrip(" "))
            lines[key_line] = re.sub(r"(variables\s*:)[^#\r]*", r"\1", lines[key_line], count=1)
            if key_line == len(lines) - 1:  # `variables:` ends the file without a line break
                lines[key_line] += cr
                lines.append("")
            lines.insert(key_line + 1, " " * (indent + 2) + f"{VARIABLE}: {quoted}{cr}")
        else:
            if lines[-1] != "":  # the file does not end with a line break: give its last line one
                lines[-1] += cr
                lines.append("")
            lines[-1:] = [f"variables:{cr}", f"  {VARIABLE}: {quoted}{cr}", ""]
    new_text = bom + "\n".join(lines)
    expected = _plain(data)
    expected.setdefault("variables", {})
    if expected["variables"] is None:
        expected["variables"] = {}
    expected["variables"][VARIABLE] = version
    got = _plain(_load(new_text[len(bom):], path))
    if got != expected or (got.get("variables") or {}).get(VARIABLE) != version:
        entry = "'variables: {" + VARIABLE + ': "' + version + "\"}'"
        raise UsageError(M("{path}: could not add {var} without changing anything else; add {entry} by hand",
                           path=path, var=VARIABLE, entry=entry))
    return new_text, True


def read_file(path: str) -> str:
    from cudaswitch.core.trust import read_bytes, refuse_foreign_link

    # as root, another user's link named environment.yml could lead to a root-only file: neither read nor rewritten
    refuse_foreign_link(path, M("run it as that user, or give the file itself: --save FILE"))
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        raise UsageError(M("no environment file {path}; 'conda env export --from-history > {path}' makes one, or "
                           "give its path: --save FILE", path=path)) from None
    except OSError as exc:
        raise UsageError(M("{path}: unreadable ({why}); not changed", path=path, why=exc.strerror or exc)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(M("{path} is not UTF-8 text, so not a conda environment file; not changed", path=path)) from None


def write_file(path: str, text: str) -> None:
    """Atomically, keeping the file's mode and owner; a symlinked file is written at its target, unless, as root,
    the link is another user's (trust.write_file refuses it)."""
    from cudaswitch.core.trust import refuse_foreign_link, write_file as atomic_write

    refuse_foreign_link(path, M("run it as that user, or give the file itself: --save FILE"))
    real = os.path.realpath(path)
    st = os.stat(real)
    atomic_write(real, text.encode("utf-8"), mode=st.st_mode & 0o7777)
    if hasattr(os, "chown"):
        try:
            now = os.stat(real)
            if (now.st_uid, now.st_gid) != (st.st_uid, st.st_gid):
                trust.chown(real, st.st_uid, st.st_gid)
        except OSError:
            pass


def short_version(toolkit) -> str:
    """What goes in the file: major.minor, which matches the same release on another machine."""
    v = str(toolkit.version).split(".")
    return ".".join(v[:2])


NVIDIA_ARCHIVE = "https://developer.nvidia.com/cuda-toolkit-archive"


def declared_selector(env) -> Tuple[str, str]:
    """For `cudaswitch use` without a selector: (selector, note) from the environment's declaration, else the
    usage error that says what to give."""
    found = declared(env.prefix)
    if found is None:
        entry = "'variables: {" + VARIABLE + ': "11.8"}\''
        raise UsageError(M("missing SELECTOR, e.g. 'cudaswitch use 11.8' ('cudaswitch list' shows what is "
                           "installed); an environment created from an environment.yml with {entry} needs none",
                           entry=entry))
    version, where = found
    return version, M("this environment declares CUDA {version} ({var} in {where})", version=version, var=VARIABLE,
                      where=where)


def missing_declared(exc: Exception, note: str) -> UsageError:
    return UsageError(M("{error}; {note}: install that toolkit (NVIDIA publishes every release at {url}), or give "
                        "another selector", error=str(exc), note=note, url=NVIDIA_ARCHIVE))


def plan_save(path: str, toolkit) -> Tuple[str, str, bool]:
    """(path, new text, changed?) for `use --save`, checked before anything is switched."""
    version = short_version(toolkit)
    text = read_file(path)
    new, changed = updated_text(text, version, path)
    return path, new, changed
