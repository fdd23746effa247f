"""The chain driver -> CUDA toolkit -> cuDNN -> PyTorch -> Python, drawn at the top of `doctor` and the end of `smoke`:
marks and colours on a UTF-8 terminal, ASCII on a console that cannot show ✓ (GBK, cp437), no colour with NO_COLOR
or on a pipe, and nothing of it in `--json`. The terminal is a real pseudo-terminal, the consoles real processes
with that stdout encoding."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import envs  # noqa: E402
import seams  # noqa: E402
from conftest import REPO, run_cli  # noqa: E402

ESC = "\x1b["


@pytest.fixture
def broken(clean_env, tmp_path):
    """A shell whose CUDA_PATH names a folder that is gone: an error finding on the toolkit link."""
    return dict(clean_env, CUDA_PATH=str(tmp_path / "cuda-11.8"), PYTHONPATH=str(REPO))


def _on_a_terminal(args, env):
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, seams.ENTRY, *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the other side closed: the program ended
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(60)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def _chain_block(text):
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "chain:" in line or "依赖链：" in line)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_doctor_starts_with_the_chain_coloured_on_a_utf8_terminal(broken):
    code, out = _on_a_terminal(["doctor"], dict(broken, TERM="xterm", PYTHONIOENCODING="utf-8", LANG="C.UTF-8"))
    assert code == 1, out
    assert out.lstrip().startswith("chain: ")
    block = _chain_block(out)
    assert "→" in block[0] and len(block) >= 6, block
    toolkit = next(line for line in block if "CUDA toolkit" in line and "✗" in line)
    assert "\x1b[31;1m✗\x1b[0m" in toolkit and "the chain breaks here" in toolkit
    below = block[block.index(toolkit) + 1]
    assert "└ CUDA_PATH_MISSING:" in below and "cuda-11.8" in below
    assert out.index("chain:") < out.index("result:")


def test_no_color_keeps_the_marks_and_drops_the_colours(broken):
    code, out = _on_a_terminal(["doctor"], dict(broken, TERM="xterm", NO_COLOR="1", PYTHONIOENCODING="utf-8"))
    assert code == 1
    assert ESC not in out
    assert any("✗ CUDA toolkit" in line for line in _chain_block(out))


def test_a_pipe_gets_the_marks_without_colours(broken):
    r = run_cli(["doctor"], env=dict(broken, PYTHONIOENCODING="utf-8"), process=True)
    assert r.returncode == 1
    assert ESC not in r.stdout
    block = _chain_block(r.stdout)
    assert block[0] == "chain: driver → CUDA toolkit → cuDNN → PyTorch → Python"
    assert any(line.startswith("  ✗ CUDA toolkit") for line in block)


@pytest.mark.parametrize("encoding", ["gbk", "cp437"])
def test_a_console_that_cannot_show_the_marks_gets_ascii(broken, encoding):
    env = dict(broken, PYTHONIOENCODING=encoding)
    proc = subprocess.run([sys.executable, seams.ENTRY, "doctor"], env=env, capture_output=True)
    out = proc.stdout.decode(encoding)
    block = _chain_block(out)
    assert block[0] == "chain: driver -> CUDA toolkit -> cuDNN -> PyTorch -> Python"
    assert any(line.startswith("  x CUDA toolkit") and "<- the chain breaks here" in line for line in block), block
    assert any(line.strip().startswith("`- CUDA_PATH_MISSING:") for line in block)
    assert "\\u" not in "\n".join(block)  # nothing had to be escaped: every character is the console's


def test_a_chinese_gbk_console_reads_the_chain_in_chinese(broken):
    env = dict(broken, PYTHONIOENCODING="gbk", LANG="zh_CN.UTF-8")
    proc = subprocess.run([sys.executable, seams.ENTRY, "doctor"], env=env, capture_output=True)
    block = _chain_block(proc.stdout.decode("gbk"))
    assert block[0] == "依赖链：显卡驱动 -> CUDA 工具包 -> cuDNN -> PyTorch -> Python", block
    assert any("x CUDA 工具包" in line and "依赖链在这里断开" in line for line in block), block


def test_json_carries_no_chain_and_keeps_its_schema(broken):
    r = run_cli(["doctor", "--json"], env=broken)
    data = json.loads(r.stdout)
    assert set(data) == {"schema", "ok", "exit_code", "findings", "driver", "env", "active_toolkit", "selected_toolkit", "torch"}
    assert "chain:" not in r.stdout and "→" not in r.stdout


def test_smoke_ends_with_the_chain_and_marks_torch_when_its_dll_fails(clean_env, tmp_path):
    env = envs.make_env(tmp_path)
    envs.fake_import_failure(env, "win1114")
    r = run_cli(["smoke", "-p", str(env)], env=clean_env)
    assert r.returncode == 1
    block = _chain_block(r.stdout)
    assert r.stdout.rstrip().splitlines()[-len(block):] == block  # the last thing printed
    torch = next(line for line in block[1:] if "PyTorch" in line)
    assert "✗" in torch and "the chain breaks here" in torch
    assert "DLL_INIT_FAILED" in block[block.index(torch) + 1]
    r = run_cli(["smoke", "-p", str(env), "--json"], env=clean_env)
    assert "chain:" not in r.stdout and json.loads(r.stdout)["code"] == "DLL_INIT_FAILED"


class _Terminal:
    encoding = "utf-8"

    def isatty(self):
        return True


@pytest.mark.parametrize("environ,windows,colour", [
    ({}, False, True), ({"NO_COLOR": "1"}, False, False), ({"NO_COLOR": ""}, False, True), ({"TERM": "dumb"}, False, False),
    ({}, True, False),  # an old Windows console prints ANSI escapes as text
    ({"WT_SESSION": "1b2c"}, True, True), ({"TERM_PROGRAM": "vscode"}, True, True)])
def test_colours_only_where_the_terminal_reads_them(environ, windows, colour):
    from cudaswitch.cli.chainview import use_colour

    assert use_colour(_Terminal(), environ, windows=windows) is colour


def test_with_two_broken_links_the_first_is_where_the_chain_breaks():
    """A toolkit that is gone and a PyTorch whose import fails: the chain breaks at the toolkit, the first of the
    two (fix it first; the later one may follow from it), and is marked there only."""
    from cudaswitch.checks.chain import Chain, Link
    from cudaswitch.checks.diagnosis import ERROR, Finding
    from cudaswitch.cli.chainview import chain_lines

    chain = Chain([Link("driver", "580.65, max CUDA 13.0", "libcuda"),
                   Link("toolkit", "12.4.0", "/usr/local/cuda-12.4",
                        [Finding("CUDA_PATH_MISSING", ERROR, "CUDA_PATH=/gone does not exist", "unset it")]),
                   Link("cudnn", None, "not found"),
                   Link("torch", "2.13.0", "/envs/x",
                        [Finding("IMPORT_FAILED", ERROR, "libc10.so: cannot open shared object file", "reinstall")]),
                   Link("python", "3.11.7", "/envs/x/bin/python")])
    lines = chain_lines(chain, unicode=False, colour=False)
    marked = [line.split()[1] for line in lines if "the chain breaks here" in line]
    assert marked == ["CUDA"], lines
    assert sum(line.startswith("  x ") for line in lines) == 2
