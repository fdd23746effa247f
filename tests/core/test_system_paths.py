"""System.join, System.local_text and system.under skip pathlib's parsing where the text already is what pathlib
would print: each must give pathlib's own answer for every input, odd spellings included ("//", "/./", a trailing
"/", ".", "" and Windows spellings), under the real root, a relocated one and a Windows-flavoured one."""

from __future__ import annotations

import itertools
from pathlib import Path, PurePosixPath, PureWindowsPath

from cudaswitch.core.system import System, under

# pieces whose concatenations cover every case the fast paths tell apart
PIECES = ["", "/", "//", ".", "/.", "..", "a", "/b", ".x", "b.c", "\\", "C:", " "]


def _texts(most: int = 3):
    for n in range(most + 1):
        for combo in itertools.product(PIECES, repeat=n):
            yield "".join(combo)


def _systems(tmp_path):
    return [System(os="linux", environ={}), System(os="windows", environ={}),
            System(os="linux", environ={}, root=tmp_path), System(os="linux", environ={}, root=Path("/")),
            System(os="windows", environ={}, root=tmp_path)]


def test_join_is_pathlibs_join(tmp_path):
    parts = ["a", "", ".", "/b", "c/", "..", "d\\e"]
    for system in _systems(tmp_path):
        pure = PureWindowsPath if system.windows else PurePosixPath
        for base in _texts(2):
            for n in range(3):
                for names in itertools.product(parts, repeat=n):
                    assert system.join(base, *names) == str(pure(base).joinpath(*names)), (system.os, base, names)


def test_local_text_is_the_local_path_as_text(tmp_path):
    for system in _systems(tmp_path):
        for path in _texts():
            assert system.local_text(path) == str(system.local(path)), (system.os, system.root, path)


def test_under_is_pathlibs_join_of_a_local_path():
    for local in _texts():
        for names in [(), ("bin",), ("bin", "nvcc"), ("",), (".",), ("a/b",), ("/abs",)]:
            assert under(local, *names) == str(Path(local).joinpath(*names)), (local, names)


def test_the_usual_toolkit_paths_are_joined_as_written():
    system = System(os="linux", environ={})
    assert system.join("/usr/local/cuda-12.4", "targets", "x86_64-linux", "lib") == \
        "/usr/local/cuda-12.4/targets/x86_64-linux/lib"
    assert system.join("/usr/local/cuda-12.4/", "bin") == "/usr/local/cuda-12.4/bin"
    assert system.join("/", "opt") == "/opt"
    assert System(os="windows", environ={}).join("C:\\CUDA\\v12.4", "bin") == "C:\\CUDA\\v12.4\\bin"
