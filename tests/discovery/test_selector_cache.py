"""The selectors a TAB offers, kept between TABs (cudaswitch/discovery/selector_cache.py): the kept words are given
only while everything the discovery pass looked at is as it was, and only from the user's own file.

Real toolkit trees (tests/cudatrees.py, from NVIDIA's wheels) and the real Spack modulefile of test_modules.py."""

from __future__ import annotations

import json
import marshal
import os
import time
import zlib
from pathlib import Path

import pytest

import cudatrees
from cudaswitch.core import trust
from cudaswitch.core.system import System
from cudaswitch.discovery import modules, selector_cache, toolkits
from test_modules import SPACK_LUA

WORDS_11_8 = ["11.8", "11.8.89", "cu118"]
WORDS_12_9 = ["12.9", "12.9.1", "cu129"]


def _settle():
    # a tree younger than RACY_NS is never kept (a change in the same clock tick would not show): let it age
    time.sleep(selector_cache.RACY_NS / 1e9 + 0.05)


@pytest.fixture
def machine(tmp_path):
    """A folder of toolkits on CUDASWITCH_SEARCH_PATH holding cuda-11.8, a MODULEPATH with a site's cuda/11.8, and
    a HOME whose cache folder keeps the words."""
    store = tmp_path / "toolkits"
    cudatrees.cuda_11_8(store / "cuda-11.8")
    mp = tmp_path / "modulefiles"
    (mp / "cuda").mkdir(parents=True)
    (mp / "cuda" / "11.8.lua").write_text(SPACK_LUA.format(root=store / "cuda-11.8", version="11.8.89"))
    (tmp_path / "home").mkdir()
    environ = {"CUDASWITCH_SEARCH_PATH": str(store), "MODULEPATH": str(mp), "HOME": str(tmp_path / "home"),
               "CUDASWITCH_CONFIG": str(tmp_path / "none.yaml"), "PATH": "/usr/bin:/bin"}
    _settle()
    return environ, tmp_path


def _tab(environ, incomplete="", auto=False):
    return selector_cache.offered(System(os="linux", environ=dict(environ), python_paths=[]), incomplete, auto)


def _kept(environ) -> Path:
    return Path(environ["HOME"]) / ".cache" / "cudaswitch" / selector_cache.NAME


def _record(path: Path):
    record = trust.parse_kept(path.read_bytes())
    assert isinstance(record, dict), path
    return record


def _bytes(record) -> bytes:
    return trust.kept_bytes(record)


def _sealed(body: bytes) -> bytes:
    """marshal's bytes under a right header and CRC: what only the user (or cudaswitch) could have written."""
    return trust.KEPT_HEADER + zlib.crc32(body).to_bytes(4, "big") + body


def _no_discovery(monkeypatch):
    def refuse(*a, **kw):
        raise AssertionError("discovery ran although the kept words were still true")

    monkeypatch.setattr(toolkits, "discover", refuse)


def test_the_second_tab_is_answered_from_the_kept_words(machine, monkeypatch):
    environ, _tmp = machine
    first = _tab(environ)
    assert first == [*WORDS_11_8, "cuda/11.8"]
    st = os.stat(_kept(environ))
    assert (st.st_uid, st.st_mode & 0o777) == (os.geteuid(), 0o600)
    _no_discovery(monkeypatch)
    assert _tab(environ) == first
    assert _tab(environ, "cu", auto=True) == ["cu118", "cuda/11.8"]
    assert _tab(environ, "", auto=True) == ["auto", *first]


def test_a_toolkit_added_after_the_words_were_kept_appears_at_the_next_tab(machine):
    environ, tmp = machine
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    cudatrees.cuda_12_9(tmp / "toolkits" / "cuda-12.9")
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8", *WORDS_12_9]


def test_a_toolkit_removed_is_gone_at_the_next_tab(machine):
    environ, tmp = machine
    cudatrees.cuda_12_9(tmp / "toolkits" / "cuda-12.9")
    _settle()
    assert WORDS_12_9[1] in _tab(environ)
    os.rename(tmp / "toolkits" / "cuda-12.9", tmp / "elsewhere")
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]


def test_a_toolkit_updated_in_place_shows_its_new_version(machine):
    """An update rewrites version.json where it was (same folder, same name, same length)."""
    environ, tmp = machine
    assert "11.8.89" in _tab(environ)
    path = tmp / "toolkits" / "cuda-11.8" / "version.json"
    text = path.read_text()
    with open(path, "r+") as fh:  # in place: the folder's own mtime does not change
        fh.write(text.replace("11.8.89", "11.8.90"))
    assert _tab(environ) == ["11.8", "11.8.90", "cu118", "cuda/11.8"]


def test_a_modulefile_added_or_a_variable_changed_is_seen(machine):
    environ, tmp = machine
    assert _tab(environ, "cuda/") == ["cuda/11.8"]
    (tmp / "modulefiles" / "cuda" / "11.8-site.lua").write_text(
        SPACK_LUA.format(root=tmp / "toolkits" / "cuda-11.8", version="11.8.89"))
    assert sorted(_tab(environ, "cuda/")) == ["cuda/11.8", "cuda/11.8-site"]
    assert _tab(dict(environ, MODULEPATH=str(tmp / "none")), "cuda/") == []
    assert _tab(dict(environ, MODULEPATH=str(tmp / "none"), CUDASWITCH_SEARCH_PATH=str(tmp / "none"))) == []


def test_a_module_link_whose_target_turns_into_a_folder_is_seen(machine):
    """A MODULEPATH entry that is a link (a site's `compiler` pointing into a shared tree): when what it points at
    turns from a file into a folder of modulefiles, the MODULEPATH folder's listing is the same, but the CUDA family
    below the link is new at the next TAB."""
    environ, tmp = machine
    target = tmp / "shared-compiler"
    target.write_text("")  # a plain file at first: no module folder
    os.symlink(target, tmp / "modulefiles" / "compiler")
    _settle()
    assert _tab(environ, "compiler/") == []
    assert _kept(environ).is_file()
    target.unlink()
    (target / "cuda").mkdir(parents=True)
    (target / "cuda" / "11.8.lua").write_text(SPACK_LUA.format(root=tmp / "toolkits" / "cuda-11.8", version="11.8.89"))
    assert _tab(environ, "compiler/") == ["compiler/cuda/11.8"]


def test_a_toolkit_registered_in_place_by_install_toolkit_appears(machine):
    """install-toolkit --into lists its toolkits in a file read below a folder descriptor (trust.read_regular): an
    entry added to that file in place, the folder's own times unchanged, is seen too."""
    environ, tmp = machine
    registry = Path(environ["HOME"]) / ".local" / "share" / "cudaswitch" / "installed-toolkits.txt"
    registry.parent.mkdir(parents=True)
    registry.write_text("")
    cudatrees.cuda_12_9(tmp / "elsewhere" / "cuda-12.9")
    _settle()
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    assert _kept(environ).exists()  # a file read below a folder descriptor is compared as any other
    folder_times = os.stat(registry.parent).st_mtime_ns
    with open(registry, "a") as fh:
        fh.write(f"{tmp / 'elsewhere' / 'cuda-12.9'}\n")
    assert os.stat(registry.parent).st_mtime_ns == folder_times
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8", *WORDS_12_9]


def _whole_pass(environ):
    """The words a fresh whole discovery pass gives, nothing kept consulted."""
    return toolkits.selector_words(toolkits.discover(System(os="linux", environ=dict(environ), python_paths=[])), "")


def _spy(monkeypatch):
    """The toolkit folders inspected and the modulefiles read from now on."""
    seen = {"inspected": [], "read": []}
    inspect, read = toolkits.inspect, modules.read_modulefile
    monkeypatch.setattr(toolkits, "inspect", lambda system, cand, root: seen["inspected"].append(root) or
                        inspect(system, cand, root))
    monkeypatch.setattr(modules, "read_modulefile", lambda system, name, path: seen["read"].append(path) or
                        read(system, name, path))
    return seen


def test_the_first_tab_after_a_change_reads_again_only_what_changed(machine, monkeypatch):
    """Each toolkit folder's inspection and each modulefile's reading is kept with what it read: a toolkit added
    beside the others is the only folder inspected, an edited modulefile the only file read, and the words are
    those of a whole pass."""
    environ, tmp = machine
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    cudatrees.cuda_12_9(tmp / "toolkits" / "cuda-12.9")
    _settle()
    seen = _spy(monkeypatch)
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8", *WORDS_12_9]
    assert seen == {"inspected": [str(tmp / "toolkits" / "cuda-12.9")], "read": []}
    assert _whole_pass(environ) == [*WORDS_11_8, "cuda/11.8", *WORDS_12_9]
    modulefile = modulefile_of(tmp)
    with open(modulefile, "r+") as fh:  # in place, the folder's times unchanged: cuda/11.8 now loads 12.9
        fh.write(SPACK_LUA.format(root=tmp / "toolkits" / "cuda-12.9", version="11.8.89"))
    _settle()
    seen["inspected"].clear()
    seen["read"].clear()
    assert _tab(environ) == [*WORDS_11_8, *WORDS_12_9, "cuda/11.8"]
    assert seen == {"inspected": [], "read": [str(modulefile)]}
    assert _tab(environ) == [*WORDS_11_8, *WORDS_12_9, "cuda/11.8"]  # and kept again: nothing read
    assert seen == {"inspected": [], "read": [str(modulefile)]}
    assert _whole_pass(environ) == [*WORDS_11_8, *WORDS_12_9, "cuda/11.8"]


def test_list_and_init_keep_their_pass_for_the_first_tab(machine, monkeypatch):
    """`cudaswitch list` (any command that discovers) and `init --install` keep their discovery pass, so that the first
    TAB in the new shell is answered from it (no toolkit inspected, no modulefile read), with the words of a whole
    pass."""
    from conftest import run_cli

    environ, tmp = machine
    cli_env = dict(os.environ, **environ, XDG_DATA_HOME=str(tmp / "data"))
    done = run_cli(["list"], cli_env)
    assert done.returncode == 0 and "11.8.89" in done.stdout, done.stderr
    assert _record(_kept(environ))["words"] == [*WORDS_11_8, "cuda/11.8"]
    def tab():  # as launch.py asks, in this process (run_cli ran the command here, with this sys.path)
        return selector_cache.offered(System(os="linux", environ=dict(cli_env)), "")

    with monkeypatch.context() as m:
        _no_discovery(m)
        assert tab() == [*WORDS_11_8, "cuda/11.8"]
    _kept(environ).unlink()
    cudatrees.cuda_12_9(tmp / "toolkits" / "cuda-12.9")
    _settle()
    done = run_cli(["init", "bash", "--install", "--rc-file", str(tmp / "bashrc")], cli_env)
    assert done.returncode == 0, done.stderr
    seen = _spy(monkeypatch)  # init then wrote its files, which that pass did not see: only they are read again
    assert tab() == [*WORDS_11_8, "cuda/11.8", *WORDS_12_9]
    assert seen == {"inspected": [], "read": []}


def test_a_command_discovers_afresh_whatever_is_kept(machine, monkeypatch):
    """A command acts on what it finds: it reads neither the kept words nor a kept piece, even while they hold."""
    environ, tmp = machine
    system = System(os="linux", environ=dict(environ), python_paths=[])
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    seen = _spy(monkeypatch)
    monkeypatch.setattr(selector_cache, "_load", lambda where: pytest.fail("a command read the kept record"))
    found = selector_cache.discover_keeping(system)
    assert [tk.version for tk in found.toolkits] == ["11.8.89"]
    assert seen["inspected"] == [str(tmp / "toolkits" / "cuda-11.8")]
    assert seen["read"] == [str(modulefile_of(tmp))]


def test_a_version_file_that_appears_is_read(machine):
    """The toolkit had no version.json (its version came from cuda.h): the piece that inspected it only found the
    file missing, and a file now there is enough to inspect it again."""
    environ, tmp = machine
    version_json = tmp / "toolkits" / "cuda-11.8" / "version.json"
    text = version_json.read_text()
    version_json.unlink()
    _settle()
    without = _tab(environ)
    assert "11.8.89" not in without and "11.8" in without
    version_json.write_text(text)
    _settle()
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"] == _whole_pass(environ)


def test_pieces_inside_pieces_in_a_shell_lmod_set_up(machine, monkeypatch):
    """Where Lmod's variables name the module system, the module tree's piece has read no path yet when the first
    folder's walk (a piece inside it) begins: both have read the same when the walk ends, and each is kept with its
    own inputs."""
    environ, tmp = machine
    lmod = dict(environ, LMOD_CMD="/usr/share/lmod/lmod/libexec/lmod", LMOD_VERSION="8.7.32")
    assert _tab(lmod) == [*WORDS_11_8, "cuda/11.8"]
    assert _kept(lmod).exists()
    cudatrees.cuda_12_9(tmp / "toolkits" / "cuda-12.9")
    _settle()
    seen = _spy(monkeypatch)
    assert _tab(lmod) == [*WORDS_11_8, "cuda/11.8", *WORDS_12_9]
    assert seen == {"inspected": [str(tmp / "toolkits" / "cuda-12.9")], "read": []}


def test_a_kept_piece_is_compared_with_the_variables_it_read(machine):
    """MODULEPATH now names another folder, whose cuda/11.8 loads 12.9: the module tree's kept reading, its files
    all unchanged, is not the answer, since the variable it read differs."""
    environ, tmp = machine
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    cudatrees.cuda_12_9(tmp / "elsewhere" / "cuda-12.9")
    other = tmp / "other-modulefiles"
    (other / "cuda").mkdir(parents=True)
    (other / "cuda" / "11.8.lua").write_text(SPACK_LUA.format(root=tmp / "elsewhere" / "cuda-12.9",
                                                              version="11.8.89"))
    _settle()
    moved = dict(environ, MODULEPATH=str(other))
    assert _tab(moved) == [*WORDS_11_8, *WORDS_12_9, "cuda/11.8"] == _whole_pass(moved)


def test_a_changed_cudaswitch_reuses_no_kept_piece(machine, monkeypatch):
    """A source file of cudaswitch's that the last pass had loaded differs (an upgrade): every piece is computed
    again, since the new code may read the same files differently."""
    environ, tmp = machine
    source = tmp / "discovery_source.py"
    source.write_text("# the code that discovered\n")
    monkeypatch.setattr(selector_cache, "_own_files", lambda: [str(source)])
    _settle()
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    source.write_text("# the code that discovers now\n")
    _settle()
    seen = _spy(monkeypatch)
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    assert seen == {"inspected": [str(tmp / "toolkits" / "cuda-11.8")], "read": [str(modulefile_of(tmp))]}


def modulefile_of(tmp):
    return tmp / "modulefiles" / "cuda" / "11.8.lua"


def test_kept_pieces_are_read_only_from_the_users_own_file(machine):
    """A record whose whole answer no longer holds (a variable the pass read differs) still offers its pieces: the
    user's own file is her word; one that anyone else could have written is not read at all."""
    environ, _tmp = machine
    real = _tab(environ)
    kept = _kept(environ)
    record = _record(kept)
    record["env"]["CUDASWITCH_CONFIG"] = "/elsewhere.yaml"  # no whole answer
    inspected = next(k for k in record["pieces"] if k.startswith("('inspect'"))
    assert record["pieces"][inspected]["value"][0][0] == "11.8.89"
    record["pieces"][inspected]["value"][0][0] = "11.8.77"
    forged = _bytes(record)
    kept.write_bytes(forged)
    os.chmod(kept, 0o600)
    assert _tab(environ) == ["11.8", "11.8.77", "cu118", "cuda/11.8"]  # the piece was taken from her own file
    kept.write_bytes(forged)
    os.chmod(kept, 0o622)
    assert _tab(environ) == real
    if os.geteuid() == 0:
        kept.write_bytes(forged)
        os.chmod(kept, 0o600)
        os.chown(kept, 65534, 65534)
        assert _tab(environ) == real
    kept.write_bytes(forged)
    os.chmod(kept.parent, 0o777)
    assert _tab(environ) == real


def test_a_damaged_piece_is_computed_again(machine):
    environ, _tmp = machine
    real = _tab(environ)
    kept = _kept(environ)
    good = _record(kept)
    good["env"]["CUDASWITCH_CONFIG"] = "/elsewhere.yaml"
    for damage in [lambda p: p.update(paths=[10 ** 9]), lambda p: p.update(paths=["x"]),
                   lambda p: p.update(paths=[-2]), lambda p: p.update(env=[]), lambda p: p.update(value=[1]),
                   lambda p: p.update(value={"M": 1}), lambda p: p.pop("value"), lambda p: p.clear()]:
        record = trust.parse_kept(_bytes(good))
        for piece in record["pieces"].values():
            damage(piece)
        kept.write_bytes(_bytes(record))
        os.chmod(kept, 0o600)
        assert _tab(environ) == real


def test_kept_bytes_are_read_only_under_their_header_and_crc():
    body = marshal.dumps({"format": selector_cache.FORMAT, "words": ["12.9"]}, 4)
    assert trust.parse_kept(_sealed(body)) == {"format": selector_cache.FORMAT, "words": ["12.9"]}
    assert trust.parse_kept(trust.KEPT_HEADER + bytes(4) + body) is None  # the CRC does not hold
    assert trust.parse_kept(b"C" + _sealed(body)[1:]) is None  # another header
    assert trust.parse_kept(body) is None  # marshal's bytes alone


def _plain(value, where="record"):
    kind = type(value)
    if kind is dict:
        for k, v in value.items():
            assert type(k) is str, (where, k)
            _plain(v, f"{where}[{k!r}]")
    elif kind is list:
        for n, v in enumerate(value):
            _plain(v, f"{where}[{n}]")
    else:
        assert kind in (str, int, float, bool, type(None)), (where, kind)


def test_every_kept_piece_is_plain_values(machine):
    """The record keeps each piece's result as it was given: a tuple would come back a tuple, which a decoder that
    takes a list turns away, so that piece would be computed again at every TAB that reads it."""
    environ, _tmp = machine
    _tab(environ)
    record = _record(_kept(environ))
    assert {k.split(",")[0] for k in record["pieces"]} >= {"('walk'", "('modulefile'", "('inspect'", "('where'",
                                                          "('modules'"}, list(record["pieces"])
    _plain(record)


def _planted(environ, words):
    """The kept record, its fingerprint still true, with other words: what only a file trusted as kept could say."""
    record = _record(_kept(environ))
    record["words"] = words
    return _bytes(record)


def test_kept_words_are_read_only_from_the_users_own_file(machine):
    environ, _tmp = machine
    real = _tab(environ)
    kept = _kept(environ)
    forged = _planted(environ, ["12.0"])
    kept.write_bytes(forged)
    os.chmod(kept, 0o600)
    assert _tab(environ) == ["12.0"]  # the user's own file is the user's word (and shows the record is still true)
    kept.write_bytes(forged)
    os.chmod(kept, 0o622)  # writable by others: anyone could have written it
    assert _tab(environ) == real
    if os.geteuid() == 0:
        kept.write_bytes(forged)
        os.chmod(kept, 0o600)
        os.chown(kept, 65534, 65534)  # another user's file
        assert _tab(environ) == real
        kept.write_bytes(forged)
        os.chown(kept, 0, 0)
        os.chown(kept.parent, 65534, 65534)  # the user's own file in another user's folder
        assert _tab(environ) == real
        os.chown(kept.parent, 0, 0)
    kept.write_bytes(forged)
    os.chmod(kept.parent, 0o777)  # in a folder others may write
    assert _tab(environ) == real


def test_a_damaged_or_foreign_shaped_record_is_a_fresh_pass(machine):
    environ, _tmp = machine
    real = _tab(environ)
    kept = _kept(environ)
    good = kept.read_bytes()
    record = _record(kept)
    body = good[len(trust.KEPT_HEADER) + 4:]
    for damaged in [good[: len(good) // 2], b"", _bytes([]), _bytes(dict(record, words=[1, *record["words"]])),
                    _bytes(dict(record, paths={"/": "x"})), b"\xff\xfe", _bytes(dict(record, format=0)),
                    good[:-40] + bytes(40),  # a disk's damage at the end: the CRC no longer holds
                    b"(\xff\xff\xff\x7f",  # marshal's tuple of 2**31 - 1 items (16 GB), with no header
                    good[: len(trust.KEPT_HEADER)] + b"(\xff\xff\xff\x7f",  # the same behind the header
                    _sealed(body[: len(body) // 2]), _sealed(b"\xff" + body[1:]),  # marshal's own errors
                    json.dumps(record).encode()]:  # the record as JSON text
        kept.write_bytes(damaged)
        os.chmod(kept, 0o600)
        assert _tab(environ) == real, damaged[:80]


def test_nothing_is_kept_in_a_folder_others_may_write(machine):
    environ, _tmp = machine
    folder = _kept(environ).parent
    folder.mkdir(parents=True)
    os.chmod(folder, 0o777)
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    assert not _kept(environ).exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_root_with_another_users_home_creates_nothing_there(machine):
    """`su` without `-`: root's HOME is hers; no cache folder of root's appears in it, none of hers is read."""
    environ, _tmp = machine
    home = Path(environ["HOME"])
    os.chown(home, 65534, 65534)
    assert _tab(environ) == [*WORDS_11_8, "cuda/11.8"]
    assert list(home.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_root_whose_home_is_inside_another_users_folder_keeps_nothing_and_the_command_runs(machine):
    """Root's own HOME, but below a folder of hers (she could swap it for a link): `list` keeps no TAB record there,
    and is not stopped by the write door for trying (it was, once commands kept their pass)."""
    from conftest import run_cli

    environ, tmp = machine
    hers = tmp / "hers"
    hers.mkdir()
    home = hers / "home"
    home.mkdir()
    os.chown(hers, 65534, 65534)
    r = run_cli(["list"], dict(os.environ, **dict(environ, HOME=str(home)), XDG_DATA_HOME=str(tmp / "data")))
    assert r.returncode == 0 and "11.8.89" in r.stdout, r.stderr
    assert list(home.iterdir()) == []


def test_a_tree_changed_just_before_the_tab_is_not_kept(tmp_path):
    """A change in the same clock tick as the pass would not show in an mtime: such a pass keeps nothing."""
    cudatrees.cuda_11_8(tmp_path / "toolkits" / "cuda-11.8")
    (tmp_path / "home").mkdir()
    environ = {"CUDASWITCH_SEARCH_PATH": str(tmp_path / "toolkits"), "HOME": str(tmp_path / "home"),
               "CUDASWITCH_CONFIG": str(tmp_path / "none.yaml")}
    assert _tab(environ) == WORDS_11_8
    assert not _kept(environ).exists()
