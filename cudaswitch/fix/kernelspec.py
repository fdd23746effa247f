"""KERNELSPEC_SETS_CUDA: a Jupyter kernel.json whose `env` pins CUDA_HOME/CUDA_PATH (or a CUDA folder on PATH):
those members are cut out of the file's text, every other byte stays as it was (the user's indentation, key order
and other entries), so the kernel gets the environment's CUDA from the Python startup file."""

from __future__ import annotations

import json
from typing import List, Optional, Tuple

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M
from cudaswitch.fix.plan import Change, Step

CODES = ("KERNELSPEC_SETS_CUDA",)
_WS = " \t\r\n"


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _members(text: str, i: int) -> Tuple[List[Tuple[str, int, int, int]], int]:
    """The members of the JSON object starting at text[i] == '{': (key, key start, value start, value end), and
    the index after its '}'. One linear pass with the standard library's own scanners."""
    from json.decoder import scanstring

    dec = json.JSONDecoder()
    out = []
    i = _skip(text, i + 1)
    if text[i:i + 1] == "}":
        return out, i + 1
    while True:
        if text[i:i + 1] != '"':
            raise ValueError("expected a key")
        key, j = scanstring(text, i + 1)
        j = _skip(text, j)
        if text[j:j + 1] != ":":
            raise ValueError("expected ':'")
        v = _skip(text, j + 1)
        _, end = dec.raw_decode(text, v)
        out.append((key, i, v, end))
        k = _skip(text, end)
        if text[k:k + 1] == ",":
            i = _skip(text, k + 1)
            continue
        if text[k:k + 1] == "}":
            return out, k + 1
        raise ValueError("expected ',' or '}'")


def without_keys(text: str, keys: List[str]) -> str:
    """kernel.json's text with `keys` taken out of its top-level `env` object; nothing else changes."""
    top, _ = _members(text, _skip(text, 0))
    env = next(((v, e) for k, _, v, e in top if k == "env"), None)
    if env is None or text[env[0]] != "{":
        return text
    members, _ = _members(text, env[0])
    kept = [n for n, m in enumerate(members) if m[0] not in keys]
    if len(kept) == len(members):
        return text
    if not kept:
        cut = [(members[0][1], members[-1][3])]
    else:
        last = kept[-1]
        # one before a kept member: it, its comma and the space up to the next key; after the last kept member:
        # from that member's end (its comma with them) to the object's last value
        cut = [(members[n][1], members[n + 1][1]) for n in range(last) if n not in kept]
        if last < len(members) - 1:
            cut.append((members[last][3], members[-1][3]))
    out, pos = [], 0
    for s, e in cut:
        out.append(text[pos:s])
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _cuda_keys(path: str) -> List[str]:
    from cudaswitch.core.trust import read_json
    from cudaswitch.discovery.kernelspecs import Kernelspec

    data = read_json(path)
    env = data.get("env") if isinstance(data, dict) else None
    if not isinstance(env, dict):
        return []
    spec = Kernelspec("", path, [], {k: v for k, v in env.items() if isinstance(v, str)})
    return list(spec.cuda_env())


def plan(mine: List, env, system, findings) -> Optional[Step]:
    from cudaswitch.core.trust import read_json

    changes, paths, data, causes = [], [], {}, []
    for f in mine:
        for path in f.details:
            try:
                keys = _cuda_keys(path)
                values = read_json(path)["env"]
            except (OSError, ValueError, KeyError, TypeError, CudaswitchError):
                continue
            if not keys or path in data:
                continue
            data[path] = keys
            paths.append(path)
            causes.append(f.cause)
            changes.append(Change("file", path, after=M("{keys} removed from its env; every other byte kept",
                                                        keys=Listed(keys))))
            changes += [Change("variable", f"{path}: env.{k}", values[k], None) for k in keys]
    if not data:
        return None
    command = "; ".join(_command(p, k, system) for p, k in data.items())
    return Step("kernelspec", ["KERNELSPEC_SETS_CUDA"], causes, changes, command, {"keys": data}, paths)


def _command(path: str, keys: List[str], system) -> str:
    """What a user could run instead: Python's json module, which rewrites the whole file (the fixer keeps it)."""
    from cudaswitch.core.shellquote import for_user

    code = ("import json,sys; p=sys.argv[1]; d=json.load(open(p)); "
            + "".join(f"d['env'].pop({k!r},None); " for k in keys) + "json.dump(d,open(p,'w'),indent=1)")
    return for_user(["python", "-c", code, path], system.environ, system.windows)


def apply(step: Step, env, system) -> None:
    from cudaswitch.core.trust import parse_json, read_bytes, write_file

    for path, keys in step.data["keys"].items():
        raw = read_bytes(path)
        try:
            text = raw.decode("utf-8")
            new = without_keys(text, keys)
            parse_json(new, path)
        except (UnicodeDecodeError, ValueError, CudaswitchError) as exc:
            raise CudaswitchError(M("{path} is not JSON cudaswitch can edit ({why}); nothing was changed in it",
                                    path=path, why=str(exc))) from None
        write_file(path, new.encode("utf-8"))
