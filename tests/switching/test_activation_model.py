"""The Python model of a switch (`activation.apply`, used by `cudaswitch run` and the smoke test) gives exactly the
environment the real `.sh` activate hook gives in bash: one pipeline, two renderings."""

import ast
import subprocess
import sys

import pytest

from cudaswitch.switching.activation import Changes, apply, recorded_entries
from cudaswitch.switching.hookfiles import render_hook
from cudaswitch.core.system import System

KEYS = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "_CUDASWITCH_ADDED_PATH")
LINUX = System(os="linux", environ={}, python_paths=[])


def changes_for_root(root):
    return Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root},
                   prepend={"PATH": [root + "/bin"], "LD_LIBRARY_PATH": [root + "/lib64"]})


def hook_result(tmp_path, start, changes):
    hook = tmp_path / "activate.sh"
    hook.write_bytes(render_hook("sh", "activate", changes, "12.9.1"))
    printer = tmp_path / "printer.py"
    printer.write_text(f"import os\nprint(repr({{k: os.environ.get(k) for k in {KEYS!r}}}))\n")
    env = {k: v for k, v in start.items() if v is not None}
    script = f'. "{hook}"\n"{sys.executable}" "{printer}"\n'
    out = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], env=env, capture_output=True, text=True,
                         check=True)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("ld", [None, "", "/usr/lib/x:ROOT/lib64"])
@pytest.mark.parametrize("home", [None, "", "/usr/local/cuda-11.8"])
def test_model_equals_the_real_hook(tmp_path, ld, home):
    root = tmp_path / "cuda 12.9 (x86)" / "it's"  # the hook changes nothing when the toolkit is gone
    (root / "bin").mkdir(parents=True)
    root = str(root)
    changes = changes_for_root(root)
    ld = ld and ld.replace("ROOT", root)
    start = {"PATH": f"/usr/bin:{root}/bin:/bin", "LD_LIBRARY_PATH": ld, "CUDA_HOME": home, "CUDA_PATH": None}
    modelled = apply({k: v for k, v in start.items() if v is not None}, changes, LINUX)
    modelled["_CUDASWITCH_ADDED_PATH"] = root + "/bin"
    real = hook_result(tmp_path, start, changes)
    assert real["CUDA_HOME"] == root and real["PATH"].startswith(root + "/bin:")
    assert {k: modelled.get(k) for k in KEYS} == real


@pytest.mark.parametrize("old_first", [True, False])
def test_model_equals_the_real_hook_when_toolkits_are_already_on_path(tmp_path, old_first):
    """The NVIDIA-installer state: both toolkits' bin were on PATH before, and an earlier switch (to 11.3) put its
    copy in front and recorded it. Switching to 12.9 takes out that one copy only; the user's copies of both
    toolkits stay where they were, in the model as in the hook. (`old_first`: conda re-exported our old copy in
    front, or the user put another folder before it.)"""
    root = tmp_path / "cuda-12.9"
    (root / "bin").mkdir(parents=True)
    root, old = str(root), str(tmp_path / "cuda-11.3")
    changes = changes_for_root(root)
    user = f"/usr/bin:{old}/bin:{root}/bin:/bin"
    path = f"{old}/bin:/env/bin:{user}" if old_first else f"/mine:{old}/bin:/env/bin:{user}"
    start = {"PATH": path, "LD_LIBRARY_PATH": f"{old}/lib64:{old}/lib64", "CUDA_HOME": old, "CUDA_PATH": old,
             "_CUDASWITCH_ADDED_PATH": f"{old}/bin", "_CUDASWITCH_ADDED_LD_LIBRARY_PATH": f"{old}/lib64"}
    modelled = apply(start, changes, LINUX, remove=recorded_entries(start, LINUX))
    modelled["_CUDASWITCH_ADDED_PATH"] = root + "/bin"
    real = hook_result(tmp_path, start, changes)
    assert real["PATH"] == f"{root}/bin:" + ("" if old_first else "/mine:") + f"/env/bin:{user}"
    assert real["LD_LIBRARY_PATH"] == f"{root}/lib64:{old}/lib64"
    assert {k: modelled.get(k) for k in KEYS} == real


@pytest.mark.parametrize("ld", [True, False], ids=["ld", "no-ld"])
@pytest.mark.parametrize("ld_now", ["OLD/lib64", "/mine:OLD/lib64", "", "no-record"],
                         ids=["only-ours", "user-added", "empty", "no-record"])
def test_model_equals_the_real_hook_when_cudaswitch_had_found_the_list_unset(tmp_path, ld, ld_now):
    """The "found unset, unset it again" branch (HL4): an earlier switch found LD_LIBRARY_PATH unset, added its
    lib64 and recorded both. Switching again, with or without LD_LIBRARY_PATH, gives in the model what the hook
    gives: unset again when only our entry was there and nothing is added; the user's own entry kept."""
    root = tmp_path / "cuda-12.9"
    (root / "bin").mkdir(parents=True)
    root, old = str(root), str(tmp_path / "cuda-11.3")
    changes = changes_for_root(root)
    if not ld:
        del changes.prepend["LD_LIBRARY_PATH"]
    start = {"PATH": f"{old}/bin:/usr/bin:/bin", "LD_LIBRARY_PATH": ld_now.replace("OLD", old),
             "_CUDASWITCH_ADDED_PATH": f"{old}/bin", "_CUDASWITCH_ADDED_LD_LIBRARY_PATH": f"{old}/lib64",
             "_CUDASWITCH_UNSET_LD_LIBRARY_PATH": "1"}
    if ld_now == "no-record":  # an unset-record without its list record (a hand-edited shell): nothing is ours
        start.update(LD_LIBRARY_PATH="")
        del start["_CUDASWITCH_ADDED_LD_LIBRARY_PATH"]
    modelled = apply(start, changes, LINUX, remove=recorded_entries(start, LINUX))
    modelled["_CUDASWITCH_ADDED_PATH"] = root + "/bin"
    real = hook_result(tmp_path, start, changes)
    assert {k: modelled.get(k) for k in KEYS} == real
    if not ld and ld_now == "OLD/lib64":
        assert real["LD_LIBRARY_PATH"] is None  # the branch this test exists for


from hypothesis import given, settings, strategies as st  # noqa: E402

_ENTRY = st.sampled_from(["/a", "/b", "/t/bin", "/o/bin", "", "/t/lib64", "/o/lib64"])
_LIST = st.one_of(st.none(), st.lists(_ENTRY, max_size=5).map(":".join))


@settings(max_examples=200, deadline=None)
@given(path=_LIST, ld=_LIST, rec=st.one_of(st.none(), st.sampled_from(["/o/bin", "/t/bin"])),
       ld_rec=st.one_of(st.none(), st.just("/o/lib64")), unset=st.booleans(), with_ld=st.booleans(),
       home=st.one_of(st.none(), st.just(""), st.just("/o")))
def test_the_two_python_models_agree(path, ld, rec, ld_rec, unset, with_ld, home):
    """`apply` (what `run` and a smoke test without a real shell use) and `activated` (the plan `use` checks real
    shells against) give the same four variables from any start."""
    from cudaswitch.switching.activation import activated

    start = {k: v for k, v in {"PATH": path, "LD_LIBRARY_PATH": ld, "CUDA_HOME": home, "_CUDASWITCH_ADDED_PATH": rec,
                                "_CUDASWITCH_ADDED_LD_LIBRARY_PATH": ld_rec,
                                "_CUDASWITCH_UNSET_LD_LIBRARY_PATH": "1" if unset else None}.items() if v is not None}
    ch = Changes(scalars={"CUDA_PATH": "/t", "CUDA_HOME": "/t"}, prepend={"PATH": ["/t/bin"]})
    if with_ld:
        ch.prepend["LD_LIBRARY_PATH"] = ["/t/lib64"]
    a = apply(start, ch, LINUX, remove=recorded_entries(start, LINUX))
    b = activated(start, ch, ":")
    assert {k: a.get(k) for k in KEYS[:4]} == {k: b.get(k) for k in KEYS[:4]}
