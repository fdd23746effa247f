"""Tab completion: what a TAB costs, against `python -c pass` (the interpreter's own start, which no completion
written in Python can avoid), in the same run.

The completions, each the protocol a shell's completion function speaks (click's `_CUDASWITCH_COMPLETE`):
a command name (`cudaswitch u<TAB>`), an option (`cudaswitch use --n<TAB>`), both answered without importing
click (cudaswitch/launch.py); a toolkit selector (`cudaswitch use <TAB>`) on a cluster-like machine: 20 toolkits in a
/usr/local-like folder on CUDASWITCH_SEARCH_PATH and the ten-site module tree of bench_modules.py (18 MODULEPATH
folders, 400 other modules) on MODULEPATH, answered four ways (discovery/selector_cache.py): from the kept selectors;
as the first TAB after a toolkit was added (a folder on CUDASWITCH_SEARCH_PATH that was empty when the record was
kept now holds a 21st toolkit) and as the first TAB after a modulefile was edited (one of the 37 CUDA modulefiles
rewritten with a comment more), each run starting from the record kept before that change, so it reads again only
what changed; as the first TAB after `cudaswitch list` (any command that discovers, and `init --install`, keeps
its pass for the next TAB), from the record that command kept; and cold, with nothing kept (the record deleted
before each run, as after an upgrade of cudaswitch or on the very first TAB: a whole discovery pass, recorded and
kept for the next TAB); the same selector on a workstation (three toolkits in a /usr/local-like folder, no module
system): kept, the first TAB after a fourth toolkit was added, and cold; the same selector on each site's login
node (those three toolkits and only that site's own MODULEPATH, in a copy of the tree of its own, as a real
cluster has one site's modules, not ten): kept, the first TAB after one of its CUDA modulefiles was edited, and
cold; an environment name
(`cudaswitch doctor -n <TAB>`, 30 environments in an envs folder) and a finding code (`cudaswitch doctor --fix H<TAB>`). Each selector answer is
checked against a whole pass in the same environment. `python -c "import click"` runs in the same loop, to show
what click alone costs. Everything runs as a user's machine runs it (userpython.py): in a virtual environment of
its own, with cudaswitch and its dependencies on sys.path by a plain path file and no startup file that imports
anything (a developer's editable install, or a machine's certificate hook, imports pathlib, typing and zipfile in every
`python -c pass` and so hides what a TAB pays to import them), and a TAB runs the `cudaswitch` script pip writes
(pip's own template, which imports re). The commands run interleaved, so machine noise hits all of them; the
figures are medians and the time a completion adds to `python -c pass`. Budget: a completion adds under 50 ms. Run with bytecode
caching on, as users have it:
env -u PYTHONDONTWRITEBYTECODE python benchmarks/bench_completion.py [--runs 30]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_list import make_toolkits  # noqa: E402
from bench_modules import ENVMODULES, LMOD, SITES, make_tree  # noqa: E402
from userpython import users_env, users_python  # noqa: E402


def timed(cmd, env):
    """(wall, CPU) seconds of one run; the CPU time (user + system, from wait4) is what a loaded machine
    distorts least."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, cmd
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


CASES = {"command": "cudaswitch u", "option": "cudaswitch use --n", "selector (kept)": "cudaswitch use ",
         "selector (first TAB after a toolkit was added)": "cudaswitch use ",
         "selector (first TAB after a modulefile was edited)": "cudaswitch use ",
         "selector (first TAB after `cudaswitch list`)": "cudaswitch use ",
         "selector (cold: nothing kept)": "cudaswitch use ",
         "workstation selector (kept)": "cudaswitch use ",
         "workstation selector (first TAB after a toolkit was added)": "cudaswitch use ",
         "workstation selector (cold: nothing kept)": "cudaswitch use ",
         "environment name": "cudaswitch doctor -n ", "finding code": "cudaswitch doctor --fix H"}
ADDED, EDITED = "selector (first TAB after a toolkit was added)", "selector (first TAB after a modulefile was edited)"
LISTED = "selector (first TAB after `cudaswitch list`)"
COLD = "selector (cold: nothing kept)"
WS_KEPT, WS_ADDED = "workstation selector (kept)", "workstation selector (first TAB after a toolkit was added)"
WS_COLD = "workstation selector (cold: nothing kept)"
WORKSTATION = (WS_KEPT, WS_ADDED, WS_COLD)
OURS = []  # the interpreter and script a TAB runs (users_python)
SITE_HOW = ("kept", "edited", "cold")
SITE_CASES = []  # "<site>: kept", "<site>: edited", "<site>: cold" for each site of bench_modules.SITES


def record(env) -> Path:
    return Path(env["XDG_CACHE_HOME"]) / "cudaswitch" / "selectors.marshal"


def forget(env):
    """No record: the next TAB is the first after an upgrade of cudaswitch (or the very first)."""
    record(env).unlink(missing_ok=True)


def kept_record(env, *command):
    """The selector record one TAB (or `command`) keeps in env's cache folder, as bytes."""
    subprocess.run([*OURS, *command], env=env, check=True, capture_output=True)
    return record(env).read_bytes()


def restore(env, kept: bytes):
    """The record kept before the change, back in place: the next TAB is again the first one after it."""
    path = record(env)
    path.write_bytes(kept)
    path.chmod(0o600)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roots = make_toolkits(Path(tmp) / "usr-local")
        apps = make_toolkits(Path(tmp) / "apps", 6)
        modulepath = make_tree(Path(tmp) / "site", apps)
        spare = make_toolkits(Path(tmp) / "spare", 21)[-1]  # cuda-12.0: a version the 20 do not have
        (Path(tmp) / "added").mkdir()
        for n in range(30):
            (Path(tmp) / "envs" / f"env-{n}" / "conda-meta").mkdir(parents=True)
            (Path(tmp) / "envs" / f"env-{n}" / "conda-meta" / "history").write_text("")
        base_env = users_env(dict(os.environ, CUDASWITCH_SEARCH_PATH=os.pathsep.join(roots), HOME=tmp,
                                  MODULEPATH=":".join(modulepath), CONDA_ENVS_DIRS=str(Path(tmp) / "envs"),
                                  XDG_CACHE_HOME=str(Path(tmp) / "cache"),
                                  CUDASWITCH_CONFIG=str(Path(tmp) / "none.yaml")))
        python, script = users_python(Path(tmp) / "venv")
        ours = OURS[:] = [python, script]
        envs = {k: dict(base_env, COMP_WORDS=line, _CUDASWITCH_COMPLETE="powershell_complete")
                for k, line in CASES.items()}
        envs[COLD]["XDG_CACHE_HOME"] = str(Path(tmp) / "cache-cold")
        # a workstation: three toolkits, nothing on MODULEPATH, the same environments
        desk = make_toolkits(Path(tmp) / "desk-usr-local", 3)
        desk_spare = make_toolkits(Path(tmp) / "desk-spare", 4)[-1]  # cuda-10.3: a version the three do not have
        (Path(tmp) / "desk-added").mkdir()
        for k in WORKSTATION:
            envs[k].pop("MODULEPATH", None)
            envs[k]["CUDASWITCH_SEARCH_PATH"] = os.pathsep.join(desk)
            envs[k]["XDG_CACHE_HOME"] = str(Path(tmp) / f"cache-desk-{WORKSTATION.index(k)}")
        # one site's login node: the same three toolkits and that site's own MODULEPATH (a real machine has one
        # site's modules, not ten), each site in a copy of the tree of its own, so that one site's edit is no
        # other case's change: kept, the first TAB after one of its CUDA modulefiles was edited, and cold
        site_edits, site_before = {}, {}
        for site, (mp, systems, _) in SITES.items():
            base = Path(tmp) / "sites" / site
            # the site's own module system, as its shells' init leaves it (an Environment Modules site reads only
            # Tcl: the same tree under Lmod would be another site)
            system = {"LMOD_CMD": LMOD} if systems[0] == "lmod" else {"MODULES_CMD": ENVMODULES}
            make_tree(base, apps)
            folders = [f"{base}{f}" for f in mp.split(":")]
            site_edits[site] = next(p for f in folders for p in sorted(Path(f).rglob("*"))
                                    if p.is_file() and not p.name.startswith(".")
                                    and "cuda" in str(p.relative_to(f)).lower())
            for how in SITE_HOW:
                envs[f"{site}: {how}"] = dict(base_env, COMP_WORDS="cudaswitch use ",
                                             _CUDASWITCH_COMPLETE="powershell_complete",
                                             CUDASWITCH_SEARCH_PATH=os.pathsep.join(desk), MODULEPATH=":".join(folders),
                                             XDG_CACHE_HOME=str(base / f"cache-{how}"), **system)
                SITE_CASES.append(f"{site}: {how}")
        envs[WS_ADDED]["CUDASWITCH_SEARCH_PATH"] += os.pathsep + str(Path(tmp) / "desk-added")
        envs[ADDED]["CUDASWITCH_SEARCH_PATH"] += os.pathsep + str(Path(tmp) / "added")
        envs[ADDED]["XDG_CACHE_HOME"] = str(Path(tmp) / "cache-added")
        envs[EDITED]["XDG_CACHE_HOME"] = str(Path(tmp) / "cache-edited")
        time.sleep(0.2)  # the tree older than the pass that keeps what it read (selector_cache.RACY_NS)
        for site, edit in site_edits.items():
            site_before[site] = kept_record(envs[f"{site}: edited"])
            edit.write_text(edit.read_text() + ("-- " if edit.suffix == ".lua" else "# ") + "the admin edited this\n")
        before = {EDITED: kept_record(envs[EDITED])}
        edited = next(p for p in sorted((Path(tmp) / "site").rglob("*.lua")) if p.parent.name.lower() == "cuda")
        edited.write_text(edited.read_text() + "-- the site's admin edited this file\n")
        time.sleep(0.2)
        before[ADDED] = kept_record(envs[ADDED])
        before[WS_ADDED] = kept_record(envs[WS_ADDED])
        os.rename(spare, Path(tmp) / "added" / Path(spare).name)
        os.rename(desk_spare, Path(tmp) / "desk-added" / Path(desk_spare).name)
        envs[LISTED]["XDG_CACHE_HOME"] = str(Path(tmp) / "cache-listed")
        time.sleep(0.2)
        before[LISTED] = kept_record({k: v for k, v in envs[LISTED].items()
                                      if k not in ("COMP_WORDS", "_CUDASWITCH_COMPLETE")}, "list")
        answers, fresh = {}, {}
        for k in CASES:
            if k in before:
                restore(envs[k], before[k])
            got = subprocess.run(ours, env=envs[k], check=True, capture_output=True, text=True).stdout
            answers[k] = got.splitlines()
            if k == WS_COLD:
                forget(envs[k])
            forget(envs[COLD])
            cold = dict(envs[k], XDG_CACHE_HOME=envs[COLD]["XDG_CACHE_HOME"])
            fresh[k] = subprocess.run(ours, env=cold, check=True, capture_output=True, text=True).stdout.splitlines()
        forget(envs[COLD])
        assert answers[COLD] == subprocess.run(ours, env=envs[COLD], check=True, capture_output=True,
                                               text=True).stdout.splitlines()
        assert record(envs[COLD]).is_file()  # the cold TAB kept its pass, as the first TAB on a machine does
        for k in ("selector (kept)", ADDED, EDITED, LISTED, COLD, *WORKSTATION):
            assert answers[k] == fresh[k], (k, answers[k], fresh[k])  # the words a whole pass gives
        for site in SITES:
            restore(envs[f"{site}: edited"], site_before[site])
            for how in SITE_HOW:
                k = f"{site}: {how}"
                got = subprocess.run(ours, env=envs[k], check=True, capture_output=True, text=True).stdout.splitlines()
                assert set(answers[WS_COLD]) < set(got), (k, got)  # the three toolkits, and the site's CUDA modules
                answers[k] = got
            # the edited file is one the pass had read: the first TAB after the edit computed and kept a new record
            assert record(envs[f"{site}: edited"]).read_bytes() != site_before[site], (site, site_edits[site])
            assert answers[f"{site}: kept"] == answers[f"{site}: edited"] == answers[f"{site}: cold"], site
            assert record(envs[f"{site}: kept"]).is_file(), site
        assert answers[WS_KEPT] == answers[WS_COLD], answers
        assert all(f"plain\t{v}" in answers[WS_KEPT] for v in ("10.0.1", "10.1.1", "10.2.1")), answers[WS_KEPT]
        assert not any("/" in w or w.startswith("plain\t11.") for w in answers[WS_KEPT]), answers[WS_KEPT]
        desk_new = ["plain\t10.3", "plain\t10.3.1", "plain\tcu103"]
        assert [w for w in answers[WS_ADDED] if w not in desk_new] == answers[WS_KEPT], answers[WS_ADDED]
        assert all(w in answers[WS_ADDED] and w not in answers[WS_KEPT] for w in desk_new), answers[WS_ADDED]
        assert record(envs[WS_KEPT]).is_file()  # the kept case is answered from the record
        assert answers["selector (kept)"] == answers[EDITED] == answers[COLD], answers
        assert answers[LISTED] == answers["selector (kept)"], answers
        new = ["plain\t12.0", "plain\t12.0.1", "plain\tcu120"]  # the added toolkit's words, and only those
        assert [w for w in answers[ADDED] if w not in new] == answers["selector (kept)"], answers[ADDED]
        assert all(w in answers[ADDED] and w not in answers["selector (kept)"] for w in new), answers[ADDED]
        assert "plain\tcu118" in answers["selector (kept)"], answers  # the completion really ran discovery
        assert "plain\tCUDA/11.1.1" not in answers["selector (kept)"]  # (no spider cache: Lmod's own, not here)
        assert sum("cuda/" in a.lower() for a in answers["selector (kept)"]) >= 10, answers  # and the module tree
        assert (Path(tmp) / "cache" / "cudaswitch" / "selectors.marshal").is_file()
        assert len(answers["environment name"]) == 30, answers
        assert "plain\tHOOKS_STALE" in answers["finding code"], answers
        baseline = [python, "-c", "pass"]
        click = [python, "-c", "import click"]
        times = {k: [] for k in ["python -c pass", "import click", *CASES, *SITE_CASES]}
        for _ in range(args.runs):
            times["python -c pass"].append(timed(baseline, base_env))
            times["import click"].append(timed(click, base_env))
            for k in CASES:
                if k in before:
                    restore(envs[k], before[k])
                if k in (COLD, WS_COLD):
                    forget(envs[k])
                times[k].append(timed(ours, envs[k]))
            for k in SITE_CASES:
                site, how = k.split(": ")
                if how == "edited":
                    restore(envs[k], site_before[site])
                if how == "cold":
                    forget(envs[k])
                times[k].append(timed(ours, envs[k]))
    for i, what in ((0, "wall"), (1, "CPU")):
        base = statistics.median(t[i] for t in times["python -c pass"])
        print(f"{what}: python -c pass {base * 1000:.1f} ms (median of {args.runs})")
        med = statistics.median(t[i] for t in times["import click"])
        print(f"  python -c 'import click': {med * 1000:.1f} ms, +{(med - base) * 1000:.1f} ms (ratio {med / base:.2f})")
        for k, line in CASES.items():
            med = statistics.median(t[i] for t in times[k])
            print(f"  {k}, {line!r}<TAB>: {med * 1000:.1f} ms, +{(med - base) * 1000:.1f} ms over python -c pass "
                  f"(ratio {med / base:.2f}); budget +50 ms")
        added = {k: (statistics.median(t[i] for t in times[k]) - base) * 1000 for k in SITE_CASES}
        for how in SITE_HOW:
            mine = {k.split(": ")[0]: v for k, v in added.items() if k.endswith(": " + how)}
            print(f"  one site's modules ({len(mine)} sites) and three toolkits, selector {how}: "
                  f"+{min(mine.values()):.1f} to +{max(mine.values()):.1f} ms over python -c pass; budget +50 ms ("
                  + ", ".join(f"{site} +{v:.0f}" for site, v in mine.items()) + ")")


if __name__ == "__main__":
    main()
