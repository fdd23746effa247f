"""Messages that name the problem the user has (not click's, not another one), and the bare command's help."""

import json
import os
import sys
from pathlib import Path

from conftest import one_line_error, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fake_torch"))

import envs  # noqa: E402


def test_install_cudnn_of_an_unpacked_folder_says_to_give_the_archive(tmp_path, clean_env):
    folder = tmp_path / "cudnn-linux-x86_64-9.10.2.21_cuda12-archive"
    (folder / "include").mkdir(parents=True)
    line = one_line_error(run_cli(["install-cudnn", str(folder), "--cuda", "12.9"], env=clean_env), 2)
    assert "is a folder" in line and "the .zip or .tar.xz that folder was unpacked from" in line
    assert "is a directory" not in line


def test_envs_without_any_conda_says_so_and_exits_1(tmp_path, clean_env, monkeypatch):
    clean_env.update(HOME=str(tmp_path), PATH="/usr/bin:/bin", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    # as root, envs reads every user's ~/.conda/environments.txt (as conda does); this machine's other users and
    # their environments are not part of the case, so the run is an ordinary user's
    from cudaswitch.discovery import condaenvs

    monkeypatch.setattr(condaenvs, "_is_admin", lambda system: False)
    line = one_line_error(run_cli(["envs"], env=clean_env), 1)
    assert "no conda found" in line and "CONDA_EXE" in line
    r = run_cli(["envs", "--json"], env=clean_env)
    assert r.returncode == 1 and json.loads(r.stdout)["envs"] == []


def test_smoke_without_torch_says_how_to_get_it(tmp_path, clean_env):
    prefix = envs.make_env(tmp_path)
    r = run_cli(["smoke", "-p", str(prefix)], env=clean_env)
    assert r.returncode == 0, r.stderr
    assert "TORCH_NOT_INSTALLED" in r.stdout
    assert "fix: install torch; `cudaswitch recommend` prints the pip line" in r.stdout


def test_bare_command_prints_the_help_and_exits_2(clean_env):
    r = run_cli([], env=clean_env)
    assert r.returncode == 2
    out = r.stdout + r.stderr
    assert "Usage: cudaswitch [OPTIONS] COMMAND [ARGS]..." in out and "Commands:" in out
    assert "error:" not in out


def _display_columns(text):
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def test_tables_pad_cjk_names_by_display_width_in_the_c_locale(tmp_path, clean_env):
    """`envs` lists a folder named in Chinese; under LANG=C.UTF-8 (English) every column still starts at the same
    terminal column on every line."""
    from conftest import make_env

    envs_dir = tmp_path / "envs"
    for name in ("空 格", "plain", "混合mix"):
        make_env(envs_dir / name)
    clean_env.update(CONDA_ENVS_DIRS=str(envs_dir), LANG="C.UTF-8", HOME=str(tmp_path))
    clean_env.pop("CUDASWITCH_LANG", None)
    r = run_cli(["envs"], env=clean_env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = lines[0]
    cuda_at = _display_columns(header[:header.index("CUDA")])
    rows = [x for x in lines[1:] if str(envs_dir) in x]
    assert len(rows) == 3
    for row in rows:
        cell = row.split(str(envs_dir))[1]
        prefix_end = row.index(str(envs_dir)) + len(str(envs_dir)) + len(cell.split("  ")[0])
        assert _display_columns(row[:prefix_end]) < cuda_at
        # the CUDA column ('-') starts where its header does
        rest = row[prefix_end:]
        start = prefix_end + (len(rest) - len(rest.lstrip(" ")))
        assert _display_columns(row[:start]) == cuda_at, (header, row)


def test_init_without_shell_takes_it_from_shell_and_says_so(tmp_path, clean_env):
    for shell, name in (("/usr/bin/fish", "fish"), ("/bin/zsh", "zsh"), ("/bin/tcsh", "tcsh")):
        env = dict(clean_env, SHELL=shell, HOME=str(tmp_path))
        plain = run_cli(["init"], env=env)
        assert plain.returncode == 0 and plain.stdout == run_cli(["init", name], env=env).stdout
        rc = tmp_path / f"rc-{name}"
        r = run_cli(["init", "--install", "--rc-file", str(rc)], env=env)
        assert r.returncode == 0, r.stderr
        loaded = os.path.join(env["XDG_DATA_HOME"], "cudaswitch", "shell", f"init.{name}")
        assert r.stdout.strip() == (f"Added one line to {rc} that loads {loaded}; open a new shell to use it. "
                                    f"(shell {name}, from $SHELL={shell})")
        explicit = tmp_path / f"explicit-{name}"
        assert run_cli(["init", name, "--install", "--rc-file", str(explicit)], env=env).returncode == 0
        assert rc.read_text(encoding="utf-8") == explicit.read_text(encoding="utf-8")
    line = one_line_error(run_cli(["init"], env={k: v for k, v in clean_env.items() if k != "SHELL"}), 2)
    assert "$SHELL is not set" in line and "bash" in line and "powershell" in line
    line = one_line_error(run_cli(["init"], env=dict(clean_env, SHELL="/bin/sh")), 2)
    assert "not a shell cudaswitch init knows" in line


def test_status_names_the_init_that_removes_a_leftover_path_entry(tmp_path, clean_env):
    from conftest import make_env

    prefix = make_env(tmp_path / "envs" / "e")
    left = str(tmp_path / "old-cuda" / "bin")
    env = dict(clean_env, CONDA_PREFIX=str(prefix), CONDA_DEFAULT_ENV="e", SHELL="/bin/zsh",
               _CUDASWITCH_ADDED_PATH=left, PATH=f"{left}:/usr/bin:/bin")
    r = run_cli(["status"], env=env)
    line = next(x for x in (r.stdout + r.stderr).splitlines() if "PATH still holds" in x)
    assert line.endswith("; 'cudaswitch init zsh --install' adds a prompt-time cleanup that removes it"), line
