"""The Python a user's machine starts cudaswitch with, for the benchmarks that time a fresh cudaswitch or Python
process against a baseline process: a fresh virtual environment without pip whose only startup file is one plain
path file naming the checkout and the folders click, ruamel.yaml and platformdirs were imported from, and the
`cudaswitch` script pip writes for the entry point in pyproject.toml. The interpreter running the benchmarks may
have startup files that import code (a developer's editable install, a machine's certificate hook: pathlib, typing
and zipfile in every `python -c pass`), so a baseline it starts already pays for imports the measured command needs,
and the figures are flattered. The measured command and its baseline both run in this environment, with
users_env's variables.
"""

import os
import subprocess
import tomllib
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# pip's console-script template (pip/_vendor/distlib/scripts.py, SCRIPT_TEMPLATE), which imports re
SCRIPT = """# -*- coding: utf-8 -*-
import re
import sys
from %(module)s import %(import_name)s
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(%(func)s())
"""


def users_python(where: Path, repo: Path = REPO):
    """(python, the cudaswitch script) of a fresh virtual environment at `where` holding no startup file but one
    plain path file: `repo` (a checkout of cudaswitch) and the folders click, ruamel.yaml and platformdirs were
    imported from."""
    import click
    import platformdirs
    import ruamel.yaml

    venv.create(where, with_pip=False, symlinks=os.name != "nt")
    python = where / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    folders = dict.fromkeys([str(repo)] + [str(Path(m.__file__).parents[n]) for m, n in
                                           ((click, 1), (platformdirs, 1), (ruamel.yaml, 2))])
    (site / "cudaswitch-bench.pth").write_text("\n".join(folders) + "\n")
    assert [p.name for p in site.glob("*.pth")] == ["cudaswitch-bench.pth"]
    with open(Path(repo) / "pyproject.toml", "rb") as f:
        module, func = tomllib.load(f)["project"]["scripts"]["cudaswitch"].split(":")
    script = where / "bin" / "cudaswitch"
    script.write_text(SCRIPT % {"module": module, "import_name": func.split(".")[0], "func": func})
    return str(python), str(script)


def users_env(env: dict) -> dict:
    """`env` as a user's shell has it: no PYTHONPATH (the path file puts the checkout on sys.path)."""
    return {k: v for k, v in env.items() if k != "PYTHONPATH"}
