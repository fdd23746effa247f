"""The state file `use` leaves in an environment lists the files it wrote; `off` and the hook check act on that list,
so a state file naming any other file is refused (its owner, or anyone in a shared environment, can edit it).
The names come from cudaswitch/discovery/envfiles.py, the one place switching and discovery both read them."""

import pytest

from conftest import make_env, run_cli
from cudaswitch.discovery.envfiles import is_written_file
from cudaswitch.switching.hookfiles import all_hook_paths


def test_every_file_use_writes_is_one_the_state_file_may_name(tmp_path):
    written = [str(p.relative_to(tmp_path)) for p in all_hook_paths(str(tmp_path))]
    assert len(written) == 10
    written += ["lib/python3.11/site-packages/_cudaswitch_cuda.py", "lib/python3.13t/site-packages/_cudaswitch_cuda.pth",
                "Lib\\site-packages\\_cudaswitch_cuda.pth", "etc\\conda\\activate.d\\cudaswitch.bat"]
    assert all(is_written_file(f) for f in written), [f for f in written if not is_written_file(f)]


FOREIGN = ["etc/conda/activate.d/other.sh", "etc/conda/activate.d/cudaswitch.sh/../../../../etc/passwd",
           "../etc/conda/activate.d/cudaswitch.sh", "/etc/conda/activate.d/cudaswitch.sh",
           "etc/conda/activate.d/cudaswitch.", "etc/conda/activate.d/cudaswitch.sh.bak", "etc/cudaswitch/state.yaml",
           "lib/python3.11/site-packages/other.pth", "lib/python3.11/site-packages/_cudaswitch_cuda.so"]


@pytest.mark.parametrize("rel", FOREIGN)
def test_a_state_file_naming_another_file_is_refused(rel, tmp_path):
    env = make_env(tmp_path / "env")
    (env / "etc" / "cudaswitch").mkdir(parents=True)
    (env / "etc" / "cudaswitch" / "state.yaml").write_text(
        "selector: '12.9'\nversion: 12.9.1\nroot: /usr/local/cuda-12.9\ntime: '2026-11-30T00:11:02+00:00'\n"
        f"cudaswitch_version: 0.1.0\nld_library_path: true\nfiles: [{rel!r}]\ncreated_dirs: []\n")
    r = run_cli(["use", "--refresh", "-p", str(env)], env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0, r.stdout + r.stderr
    assert r.stderr.strip().endswith("'cudaswitch off' removes it, 'cudaswitch use SELECTOR' rewrites it"), r.stderr
    assert "not a state file cudaswitch wrote" in r.stderr and len(r.stderr.strip().splitlines()) == 1
