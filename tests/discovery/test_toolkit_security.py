"""`install-toolkit` / `uninstall-toolkit` run as root against what another account (uid 65534) planted: code in
the working folder, on PYTHONPATH and in the user site; a package index on 127.0.0.1 named by the user's pip
configuration, serving a hostile wheel (a member leaving the toolkit, a fake higher version, a different file under
the real name, a password prompt); folders, a registry and links in places that account can write. Each ends with
one clear line (or the real toolkit), nothing written outside the intended folders and nothing of that account's
executed. Each protection is tested on its own: the pinned hashes stop a hostile wheel before the unpack's own
checks are reached, so those are tested directly. The rule is docs/design/security.md's. As root only: that is
what CI runs as.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

import nvidia_wheels as nw
from conftest import make_env, one_line_error, run_cli
from other_user import NOBODY, as_user, console_script, refused, shared_base

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.system import System
from cudaswitch.discovery import toolkit_install as ti
from cudaswitch.discovery.toolkit_store import _registered, register

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="replays attacks on root: the suite runs as root in CI")

NVCC = "nvidia-cuda-nvcc==13.0.88"


@pytest.fixture
def shared(clean_env):
    """A world-traversable folder (tmp_path is root-only) holding `attacker/` (uid 65534's), a sticky world-writable
    `tmp/` like /tmp, a root-only `victim/` with a 0600 secret, a root-owned HOME and an environment without pip
    settings of the developer's (each test gives its own)."""
    base, attacker, victim, home = shared_base("cs-tksec-")
    (base / "tmp").mkdir()
    (base / "tmp").chmod(0o1777)
    env = {k: v for k, v in clean_env.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(HOME=str(home), CUDASWITCH_TOOLKITS_DIR=str(base / "data" / "toolkits"), PIP_NO_INDEX="1",
               PIP_FIND_LINKS=str(base / "no-wheels"), PIP_CONFIG_FILE=os.devnull)
    yield base, attacker, victim, env
    shutil.rmtree(base, ignore_errors=True)


def files_of(root: Path) -> set:
    return {str(p) for p in root.rglob("*")} if root.exists() else set()


def planted_pip(folder: Path, marker: Path) -> None:
    """A `pip` package in `folder` that records it ran (as whoever ran it) and exits 1."""
    (folder / "pip").mkdir(parents=True)
    code = f"import os\nopen({str(marker)!r}, 'a').write(f'planted pip ran as uid {{os.getuid()}}\\n')\nraise SystemExit(1)\n"
    (folder / "pip" / "__init__.py").write_text(code)
    (folder / "pip" / "__main__.py").write_text(code)


def run_as_root(base: Path, args, env, cwd=None, timeout=600):
    return subprocess.run(console_script(base) + args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def real_pip_ran(proc) -> str:
    """The line pip's own failure gives: the real pip looked for NVIDIA's pinned file and found none."""
    return refused(proc, "the package index offers no nvidia-cuda-", "==13.0.", "nothing was installed")


# ---- 1. pip runs isolated, from a neutral folder ---------------------------------------------------------------------

def test_1_a_pip_planted_in_the_working_folder_is_not_run(shared):
    base, attacker, _victim, env = shared
    marker = base / "pwned"
    proj = attacker / "proj"
    as_user(lambda: planted_pip(proj, marker))
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], env, cwd=proj)
    real_pip_ran(proc)
    assert not marker.exists(), marker.read_text()


def test_1_a_pip_on_pythonpath_is_not_run(shared):
    """`sudo -E` keeps PYTHONPATH: only `-I` keeps it out of pip's sys.path (the working folder is neutral here)."""
    base, attacker, _victim, env = shared
    marker = base / "pwned"
    as_user(lambda: planted_pip(attacker / "pp", marker))
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], dict(env, PYTHONPATH=str(attacker / "pp")),
                       cwd="/")
    real_pip_ran(proc)
    assert not marker.exists(), marker.read_text()


def test_1_code_in_the_user_site_is_not_run_by_pip(shared):
    """PYTHONUSERBASE names a user site whose `usercustomize` runs at every start of a Python that reads it (it
    acts in pip only, as a payload aimed at root's pip would); only `-I` keeps it out."""
    base, attacker, _victim, env = shared
    user_site_on = subprocess.run([sys.executable, "-c", "import site; print(site.ENABLE_USER_SITE)"],
                                  capture_output=True, text=True, env=env).stdout.strip()
    if user_site_on != "True":
        pytest.skip(f"{sys.executable} (a virtual environment) never reads a user site; CI's interpreter does")
    marker = base / "pwned"
    ub = attacker / "userbase"
    site_dir = subprocess.run([sys.executable, "-c", "import site; print(site.getusersitepackages())"],
                              capture_output=True, text=True, env=dict(env, PYTHONUSERBASE=str(ub))).stdout.strip()
    code = (f"import os, sys\nif 'pip' in sys.orig_argv:\n"
            f"    open({str(marker)!r}, 'a').write(f'usercustomize ran in pip as uid {{os.getuid()}}\\n')\n")

    def plant():
        Path(site_dir).mkdir(parents=True)
        (Path(site_dir) / "usercustomize.py").write_text(code)
    as_user(plant)
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], dict(env, PYTHONUSERBASE=str(ub)),
                       cwd="/")
    real_pip_ran(proc)
    assert not marker.exists(), marker.read_text()


def test_1_relative_pip_settings_do_not_resolve_in_the_working_folder(shared, tmp_path):
    """A relative find-links in the user's pip settings would name a folder of whoever owns the working folder;
    pip runs from a neutral folder, so the other user's wheels there are never even looked at."""
    base, attacker, _victim, env = shared
    proj = attacker / "proj"
    hostile = hostile_wheel(tmp_path, "13.0.88", escape_to=base / "zipslip.txt")
    data = hostile.read_bytes()

    def plant():
        (proj / "wheels").mkdir(parents=True)
        (proj / "wheels" / hostile.name).write_bytes(data)
    as_user(plant)
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], dict(env, PIP_FIND_LINKS="wheels"),
                       cwd=proj)
    line = real_pip_ran(proc)
    assert str(proj) not in line
    assert not (base / "zipslip.txt").exists()


# ---- 2. a hostile index from the user's pip configuration -----------------------------------------------------------

def hostile_wheel(folder: Path, version: str, escape_to: Path = None, extra=()) -> Path:
    """An nvidia-cuda-nvcc wheel with a real-looking bin/nvcc and, with `escape_to`, a member whose `..` parts
    lead there; its RECORD lists every member with the right hash (RECORD comes from the same wheel)."""
    name = f"nvidia_cuda_nvcc-{version}-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
    members = {"nvidia/cu13/bin/nvcc": b"#!/bin/sh\necho planted nvcc\n"}
    if escape_to is not None:
        members["nvidia/cu13/" + "../" * 12 + str(escape_to).lstrip("/")] = b"zip-slip\n"
    members.update(dict(extra))
    info = f"nvidia_cuda_nvcc-{version}.dist-info"
    members[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: nvidia-cuda-nvcc\nVersion: {version}\n".encode()
    members[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-manylinux2014_x86_64\n"
    rows = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
            for n, d in members.items()]
    members[f"{info}/RECORD"] = ("\n".join(rows + [f"{info}/RECORD,,"]) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / name, "w") as zf:
        for n, d in members.items():
            zi = zipfile.ZipInfo(n)
            zi.external_attr = (0o755 if n.endswith("bin/nvcc") else 0o644) << 16
            zf.writestr(zi, d)
    return folder / name


class Index:
    """A PEP 503 index on 127.0.0.1 (port chosen by the kernel), serving the wheels of `files` with their sha256,
    answering 401 to everything with `password=True`; records every path asked for. Bounded: stopped at the end
    of the test, and it never listens beyond loopback."""

    def __init__(self, files, password=False):
        self.files = {p.name: p for p in files}
        self.asked = []
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                index.asked.append(self.path)
                if password:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="lab index"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                parts = self.path.strip("/").split("/")
                if parts[0] == "simple" and len(parts) == 2:
                    proj = parts[1]
                    links = "".join(f'<a href="/files/{n}#sha256={hashlib.sha256(p.read_bytes()).hexdigest()}">{n}</a>\n'
                                    for n, p in sorted(index.files.items())
                                    if n.split("-")[0].replace("_", "-") == proj)
                    self._send(f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(), "text/html")
                elif parts[0] == "files" and len(parts) == 2 and parts[1] in index.files:
                    self._send(index.files[parts[1]].read_bytes(), "application/octet-stream")
                else:
                    self.send_error(404)

            def _send(self, data, kind):
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


def pip_conf(env, index: Index) -> dict:
    """The user's own pip configuration naming the index (the file pip reads from HOME), as a user has it."""
    conf = Path(env["HOME"]) / ".config" / "pip" / "pip.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(f"[global]\nindex-url = {index.url}\ntimeout = 20\nretries = 0\n")
    out = {k: v for k, v in env.items() if k not in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "PIP_CONFIG_FILE")}
    return out


def real_wheels():
    return [nw.wheel(s) for s in nw.TOOLKIT_13_0]


def test_2_a_fake_higher_version_on_the_index_is_never_downloaded(shared, tmp_path):
    """Dependency confusion: 13.0.999 (with a zip-slip member) beside NVIDIA's real files. The versions are pinned,
    so the real 13.0.88 is installed and the fake is never fetched."""
    base, _attacker, _victim, env = shared
    escape = base / "tmp" / "zipslip.txt"
    fake = hostile_wheel(tmp_path / "fake", "13.0.999", escape_to=escape)
    dest = base / "opt" / "cuda-13.0"
    with Index(real_wheels() + [fake]) as index:
        proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again", "--into", str(dest)],
                           pip_conf(env, index), cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((dest / "version.json").read_text())["cuda"]["version"] == "13.0.88"
    assert b"planted" not in (dest / "bin" / "nvcc").read_bytes()
    assert not escape.exists() and f"/files/{fake.name}" not in index.asked
    assert sorted(os.listdir(base / "opt")) == ["cuda-13.0"]  # no staging left beside it


def test_2_a_different_file_under_the_real_name_is_refused_before_unpacking(shared, tmp_path):
    """The index serves its own nvidia-cuda-nvcc 13.0.88 (zip-slip inside, a RECORD that vouches for it): its SHA-256
    is not NVIDIA's, so nothing of it is unpacked; the line says which file and both hashes."""
    base, _attacker, _victim, env = shared
    escape = base / "tmp" / "zipslip.txt"
    fake = hostile_wheel(tmp_path / "fake", "13.0.88", escape_to=escape)
    wheels = [w for w in real_wheels() if not w.name.startswith("nvidia_cuda_nvcc-")] + [fake]
    dest = base / "opt" / "cuda-13.0"
    with Index(wheels) as index:
        proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again", "--into", str(dest)],
                           pip_conf(env, index), cwd="/")
    line = refused(proc, "the package index served a file for nvidia-cuda-nvcc 13.0.88 that is not NVIDIA's",
                   hashlib.sha256(fake.read_bytes()).hexdigest(), "56fe502eb77625a1", "nothing was installed")
    assert index.url.rsplit("/", 1)[0] in line
    assert not escape.exists() and not (base / "opt").exists()


def test_2_an_index_asking_for_a_password_fails_at_once_in_one_line(shared):
    base, _attacker, _victim, env = shared
    with Index([], password=True) as index:
        proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], pip_conf(env, index), cwd="/",
                           timeout=120)
    refused(proc, f"{index.url}/nvidia-cuda-", "asks for a user name and password (HTTP 401)", "does not prompt")
    assert index.asked


def test_2_pips_retry_warnings_reach_the_user(shared):
    """An index that does not answer: pip's retries are shown as they happen, then one error line."""
    base, _attacker, _victim, env = shared
    with Index([]) as index:
        index.server.shutdown()  # listening, never answering: every request times out
        conf = pip_conf(env, index)
        (Path(env["HOME"]) / ".config" / "pip" / "pip.conf").write_text(
            f"[global]\nindex-url = {index.url}\ntimeout = 1\nretries = 1\n")
        proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], conf, cwd="/", timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert any(ln.startswith("pip: WARNING: Retrying (") for ln in lines[:-1]), proc.stderr
    assert lines[-1].startswith("cudaswitch: error: ")


# ---- the unpack's own checks, each on its own (the pinned hashes stop such wheels before) --------------------------

@pytest.mark.parametrize("member", ["nvidia/cu13/../../../../{escape}", "/{escape}", "nvidia/cu13//bin/x",
                                    "nvidia/cu13/./bin/x", "nvidia\\cu13\\..\\..\\x"])
def test_2_a_member_leaving_the_toolkit_is_refused_and_nothing_is_written(member, tmp_path):
    escape = tmp_path / "outside" / "zipslip.txt"
    name = member.format(escape=str(escape).lstrip("/"))
    whl = hostile_wheel(tmp_path / "w", "13.0.88", extra=[(name, b"zip-slip\n")])
    root = tmp_path / "stage" / "root"
    with pytest.raises(CudaswitchError, match=r"would be written outside the toolkit; cudaswitch does not unpack such "
                                              r"a wheel; nothing was installed"):
        ti.assemble([whl], root, "13.0")
    assert not escape.exists() and not (tmp_path / "outside").exists()


def test_2_a_folder_of_the_toolkit_that_is_a_link_out_of_it_is_not_written_through(tmp_path):
    """The member names are checked before anything is written; the unpack still refuses to write through a
    folder of the staging root that is a link leading out of it (one that arrived as a link), and writes nothing
    there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "stage" / "root"
    root.mkdir(parents=True)
    os.symlink(outside, root / "bin")
    whl = hostile_wheel(tmp_path / "w", "13.0.88")
    with pytest.raises(CudaswitchError, match=r"member 'nvidia/cu13/bin/nvcc' would be written outside the toolkit; "
                                              r"nothing was installed"):
        ti.unpack(whl, root, [], 0o755)
    assert os.listdir(outside) == []


def test_2_damaged_wheels_are_one_line_not_an_internal_error(tmp_path):
    whl = hostile_wheel(tmp_path / "w", "13.0.88")
    cut = tmp_path / "cut" / whl.name
    cut.parent.mkdir()
    cut.write_bytes(whl.read_bytes()[:-30])  # the central directory's end is gone
    with pytest.raises(CudaswitchError, match="is not a readable wheel"):
        ti.assemble([cut], tmp_path / "r1", "13.0")
    latin = tmp_path / "latin" / whl.name
    latin.parent.mkdir()
    with zipfile.ZipFile(whl) as zin, zipfile.ZipFile(latin, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            zout.writestr(item, data + "# caf\xe9\n".encode("latin-1") if item.filename.endswith("RECORD") else data)
    with pytest.raises(CudaswitchError, match="its RECORD is not UTF-8 CSV"):
        ti.assemble([latin], tmp_path / "r2", "13.0")
    flipped = tmp_path / "flip" / whl.name
    flipped.parent.mkdir()
    data = bytearray(whl.read_bytes())
    with zipfile.ZipFile(whl) as zf:
        off = zf.getinfo("nvidia/cu13/bin/nvcc").header_offset + 30 + len("nvidia/cu13/bin/nvcc")
    data[off] ^= 0xFF  # one byte of the stored member: zipfile's CRC check fails
    flipped.write_bytes(bytes(data))
    with pytest.raises(CudaswitchError, match="(cannot be read|does not match its RECORD hash)"):
        ti.assemble([flipped], tmp_path / "r3", "13.0")


def test_2_a_wheel_that_is_not_the_tables_file_is_refused_by_cudaswitch_itself(tmp_path):
    """Behind pip's --require-hashes, the unpack hashes each wheel from the descriptor it then reads."""
    whl = hostile_wheel(tmp_path / "w", "13.0.88")
    known = {w.filename: w for w in ti.requirements(13, 0)}
    twin = tmp_path / "twin" / next(n for n in known if n.startswith("nvidia_cuda_nvcc-"))
    twin.parent.mkdir()
    shutil.copy(whl, twin)
    with pytest.raises(CudaswitchError, match=r"is not the file NVIDIA published: its SHA-256 is [0-9a-f]{64}, "
                                              r"NVIDIA's is 56fe502e"):
        ti.assemble([twin], tmp_path / "root", "13.0", known)
    assert not (tmp_path / "root").exists()


# ---- 3. ownership of --into, the store, the staging folder, the registry ---------------------------------------------

def test_3_into_a_folder_another_user_owns_is_refused_before_downloading(shared):
    base, attacker, _victim, env = shared
    dest = attacker / "cuda-13.0"
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again", "--into", str(dest)], env, cwd="/")
    refused(proc, f"refused to install CUDA 13.0 into {dest}", f"{attacker} belongs to nobody", "nothing was changed")
    assert os.listdir(attacker) == []


def test_3_a_store_in_a_shared_tmp_that_another_user_created_first_is_refused(shared):
    base, attacker, _victim, env = shared
    tk = base / "tmp" / "tk"
    as_user(lambda: tk.mkdir())
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], dict(env, CUDASWITCH_TOOLKITS_DIR=str(tk)),
                       cwd="/")
    refused(proc, f"{tk} belongs to nobody")
    assert os.listdir(tk) == [] and sorted(os.listdir(base / "tmp")) == ["tk"]


def test_3_a_store_in_a_shared_tmp_stages_inside_itself_and_leaves_nothing_on_failure(shared):
    """No `/tmp/.cudaswitch-staging` another user could create first: the staging folder is a 0700 folder in the
    store, which cudaswitch made; a failed install removes both."""
    base, _attacker, _victim, env = shared
    tk = base / "tmp" / "tk"
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again"], dict(env, CUDASWITCH_TOOLKITS_DIR=str(tk)),
                       cwd="/")
    real_pip_ran(proc)
    assert os.listdir(base / "tmp") == []


def test_3_another_user_cannot_reach_into_the_staging_folder(shared, tmp_path):
    """While pip downloads, uid 65534 tries what the demonstration did: swap `root` for a link into a root-only
    folder, or plant its own files. The staging folder is root's and 0700: each attempt fails."""
    base, _attacker, victim, env = shared
    dest = base / "tmp" / "cuda-13.0"
    attacked = []

    def attacker_pip(args, show):
        stage = Path(args[args.index("-d") + 1]).parent
        st = os.lstat(stage)
        assert st.st_uid == 0 and st.st_mode & 0o777 == 0o700 and stage.parent == dest.parent

        def attack():  # in the child: each attempt must be denied, or the child fails
            for act in (lambda: os.symlink(victim, stage / "root"), lambda: os.rename(stage, stage.with_name("x")),
                        lambda: (stage / "wheels" / "evil.whl").write_bytes(b"x")):
                with pytest.raises(PermissionError):
                    act()
        as_user(attack)
        attacked.append(stage)
        assert sorted(os.listdir(stage)) == ["requirements.txt", "wheels"] and os.listdir(stage / "wheels") == []
        return subprocess.CompletedProcess(args, 1, "", "ERROR: No matching distribution found for x\n")

    with pytest.raises(CudaswitchError):
        ti.install("13.0", System(os="linux", environ=env), str(dest), runner=attacker_pip, again=True)
    assert attacked
    assert os.listdir(base / "tmp") == [] and os.listdir(victim) == ["secret"]


def test_3_a_staging_root_that_became_a_link_is_not_renamed_into_place(shared, monkeypatch):
    """Behind the 0700 staging folder, the last check before the rename: a `root` that is a link (what the
    demonstration swapped in) is refused, and what it points to is neither moved nor registered."""
    base, _attacker, victim, env = shared
    dest = base / "opt" / "cuda-13.0"

    def real_wheels_pip(args, show):
        for w in real_wheels():
            os.link(w, Path(args[args.index("-d") + 1]) / w.name)
        return subprocess.CompletedProcess(args, 0, "", "")

    def swapped(wheels, root, requested, known=None, progress=None):
        os.symlink(victim, root)
        return ti.InstallResult("13.0.88", str(root))

    monkeypatch.setattr(ti, "assemble", swapped)
    with pytest.raises(CudaswitchError, match="is no longer the folder cudaswitch built; nothing was installed"):
        ti.install("13.0", System(os="linux", environ=env), str(dest), runner=real_wheels_pip, again=True)
    assert not os.path.lexists(dest) and os.listdir(victim) == ["secret"] and not (base / "opt").exists()
    assert str(dest) not in _registered(System(os="linux", environ=env))


def test_3_a_registry_another_user_wrote_is_refused_before_downloading(shared):
    """The list of --into toolkits sits beside the store: in a shared tmp, another user's file there would choose
    what root's discovery lists."""
    base, _attacker, _victim, env = shared
    tk = base / "tmp" / "tk"
    reg = base / "tmp" / "installed-toolkits.txt"
    as_user(lambda: reg.write_text("/home/attacker/cuda\n"))
    dest = base / "opt" / "cuda-13.0"
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again", "--into", str(dest)],
                       dict(env, CUDASWITCH_TOOLKITS_DIR=str(tk)), cwd="/")
    refused(proc, f"refused to record {dest} in the list of installed toolkits", f"{reg} belongs to nobody")
    assert reg.read_text() == "/home/attacker/cuda\n" and not (base / "opt").exists()


def clone(toolkit: Path, dest: Path) -> Path:
    """A toolkit install-toolkit made, as a hard-linked copy of the suite's (files, links and manifest alike)."""
    shutil.copytree(toolkit, dest, symlinks=True, copy_function=os.link)
    return dest


def test_3_uninstall_of_a_link_or_of_another_users_toolkit_is_one_line_and_leaves_nothing(shared, toolkit_13_0):
    base, attacker, _victim, env = shared
    mine = clone(toolkit_13_0, base / "opt" / "cuda-13.0")
    link = base / "tmp" / "cuda-13.0"
    as_user(lambda: os.symlink(mine, link))
    proc = run_as_root(base, ["uninstall-toolkit", str(link)], env, cwd="/")
    refused(proc, f"{link} is a symlink", "never through a link")
    theirs = attacker / "cuda-13.0"
    shutil.copytree(toolkit_13_0, theirs, symlinks=True)
    subprocess.run(["chown", "-R", "-h", f"{NOBODY}:{NOBODY}", str(theirs)], check=True)
    register(System(os="linux", environ=env), str(theirs))
    proc = run_as_root(base, ["uninstall-toolkit", str(theirs)], env, cwd="/")
    refused(proc, f"refused to remove {theirs}", "belongs to nobody")
    assert (theirs / "bin" / "nvcc").exists() and (mine / "bin" / "nvcc").exists() and link.is_symlink()
    left = [p for p in [*base.rglob(".*removing-*")]]
    assert left == []


# ---- 5. the low ones -----------------------------------------------------------------------------------------------

def test_5_a_malformed_or_odd_manifest_blocks_no_other_uninstall(shared, toolkit_13_0):
    base, _attacker, _victim, env = shared
    store = Path(env["CUDASWITCH_TOOLKITS_DIR"])
    store.mkdir(parents=True)
    for name, text in (("cuda-13.1", "[1, 2]"), ("cuda-13.2", '{"version": 13, "files": "x"}'),
                       ("cuda-13.3", "not json")):
        (store / name).mkdir()
        (store / name / ti.MANIFEST).write_text(text)
    (store / "cuda-13.4").mkdir()
    os.mkfifo(store / "cuda-13.4" / ti.MANIFEST)  # reading it must not hang
    clone(toolkit_13_0, store / "cuda-13.0")
    r = run_cli(["uninstall-toolkit", "13.0"], env=env)
    assert r.returncode == 0 and r.stdout == f"Removed {store / 'cuda-13.0'}.\n", r.stderr
    assert sorted(os.listdir(store)) == ["cuda-13.1", "cuda-13.2", "cuda-13.3", "cuda-13.4"]
    line = one_line_error(run_cli(["uninstall-toolkit", str(store / "cuda-13.1")], env=env), 2)
    assert "was not installed by 'cudaswitch install-toolkit'" in line


def test_5_wrong_problem_messages_name_the_right_problem(shared, tmp_path):
    base, _attacker, _victim, env = shared
    line = one_line_error(run_cli(["uninstall-toolkit", str(base / "nonexistent" / "cuda-13.0")], env=env), 2)
    assert line == f"cudaswitch: error: no such folder: {base / 'nonexistent' / 'cuda-13.0'}"
    # the working folder deleted under the shell: a relative --into or folder cannot be resolved
    script = 'mkdir "$0" && cd "$0" && rmdir "$0" && exec "$@"'
    for args in (["install-toolkit", "13.0", "--again", "-q", "--into", "cuda-13.0"],
                 ["uninstall-toolkit", "./cuda-13.0"]):
        proc = subprocess.run(["sh", "-c", script, str(tmp_path / "gone"), *console_script(base), *args], env=env,
                              capture_output=True,
                              text=True, timeout=120)
        line = one_line_error(proc, 2)
        assert "is relative, and the working folder no longer exists; give an absolute path" in line


def test_5_a_failed_install_removes_the_folders_it_made_and_no_other(shared):
    """A pre-existing empty --into parent (a 2770 group folder) stays; the parents the install created go."""
    base, _attacker, _victim, env = shared
    group = base / "group"
    group.mkdir()
    group.chmod(0o2750)
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again", "--into", str(group / "cuda-13.0")], env)
    real_pip_ran(proc)
    assert group.is_dir() and os.listdir(group) == [] and group.stat().st_mode & 0o7777 == 0o2750
    proc = run_as_root(base, ["install-toolkit", "13.0", "-q", "--again", "--into", str(group / "a" / "b" / "cuda")],
                       env)
    real_pip_ran(proc)
    assert os.listdir(group) == []


def _register_many(environ, tag, n, start):
    start.wait()
    system = System(os="linux", environ=environ)
    for i in range(n):
        register(system, f"/opt/{tag}-{i}")


def test_5_concurrent_installs_all_stay_registered(shared):
    """Four installs with --into finishing at once: the registry's read-modify-write is locked, none is lost."""
    import multiprocessing

    _base, _attacker, _victim, env = shared
    ctx = multiprocessing.get_context("fork")
    start = ctx.Event()
    procs = [ctx.Process(target=_register_many, args=(env, f"tk{k}", 25, start)) for k in range(4)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    got = _registered(System(os="linux", environ=env))
    assert sorted(got) == sorted(f"/opt/tk{k}-{i}" for k in range(4) for i in range(25))


def test_5_ctrl_c_during_the_unpack_stops_and_leaves_no_partial(shared):
    """Ctrl-C while the wheels unpack (at the third file of a wheel), then again while it cleans up (an impatient
    user): exit 130 with one line, and neither the toolkit nor its staging folder is left. The seam of
    tests/seams.py sends the Ctrl-C at those points."""
    base, _attacker, _victim, env = shared
    env = dict(env, PIP_FIND_LINKS=str(nw.cache_dir() / "wheels"), CUDASWITCH_FAULT="sigint@unpack:3,sigint@cleanup:1")
    for spec in nw.TOOLKIT_13_0:
        nw.wheel(spec)
    opt = base / "opt"
    opt.mkdir()
    r = run_cli(["install-toolkit", "13.0", "-q", "--again", "--into", opt / "cuda-13.0"], env, timeout=600)
    assert r.returncode == 130 and r.stderr.strip().splitlines() == ["cudaswitch: error: interrupted"], r.stderr
    assert os.listdir(opt) == []
    assert _registered(System(os="linux", environ=env)) == []


def test_5_ctrl_c_after_the_move_into_place_says_the_toolkit_is_installed(shared):
    """Ctrl-C once the toolkit is in place (while the finished install removes its staging folder): it is not
    lost and not a plain "interrupted": exit 130 with the line saying the toolkit is installed and how to remove
    it, the toolkit listed, and no staging folder left."""
    base, _attacker, _victim, env = shared
    env = dict(env, PIP_FIND_LINKS=str(nw.cache_dir() / "wheels"), CUDASWITCH_FAULT="sigint@cleanup:1")
    for spec in nw.TOOLKIT_13_0:
        nw.wheel(spec)
    opt = base / "opt"
    opt.mkdir()
    dest = opt / "cuda-13.0"
    r = run_cli(["install-toolkit", "13.0", "-q", "--again", "--into", dest], env, timeout=600)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 130 and len(lines) == 1, r.stderr
    assert lines[0].startswith("cudaswitch: error: interrupted after CUDA 13.0") and str(dest) in lines[0], lines
    assert f"cudaswitch uninstall-toolkit {dest}" in lines[0]
    assert os.listdir(opt) == ["cuda-13.0"] and (dest / "bin" / "nvcc").is_file()
    assert _registered(System(os="linux", environ=env)) == [str(dest)]


# ---- issue 21: a toolkit environments use ----------------------------------------------------------------------

def test_uninstall_of_a_toolkit_environments_use_lists_them_and_asks_for_yes(shared, toolkit_13_0):
    base, _attacker, _victim, env = shared
    tk = clone(toolkit_13_0, base / "opt" / "cuda-13.0")
    prefix = make_env(base / "envs" / "work")
    env = dict(env, CONDA_ENVS_DIRS=str(base / "envs"))  # where conda (and so cudaswitch) finds it
    r = run_cli(["use", str(tk), "-p", str(prefix), "--no-smoke"], env=env)
    assert r.returncode == 0, r.stderr
    line = one_line_error(run_cli(["uninstall-toolkit", str(tk)], env=env), 1)
    assert line == (f"cudaswitch: error: {tk} is the CUDA of 1 conda environment(s): {prefix}; switch them first "
                    f"(cudaswitch use VERSION -p PREFIX, or cudaswitch off -p PREFIX), or give --force to remove it "
                    f"anyway; nothing was removed")
    assert (tk / "bin" / "nvcc").exists()
    r = run_cli(["uninstall-toolkit", str(tk), "--yes"], env=env)
    assert r.returncode == 0 and not tk.exists(), r.stderr
