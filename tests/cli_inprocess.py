"""The command line run inside the test process (click's CliRunner), for tests where a real process is not the
point: the command sees exactly the environment the test gives (os.environ is replaced for the call and put
back), stdin is not a terminal, and the result reads like `subprocess.run`'s (returncode, stdout, stderr).
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Mapping, Optional

from click.testing import CliRunner

from cudaswitch.cli import main


def run_cli_inprocess(args, env: Optional[Mapping[str, str]] = None, cwd=None, input: Optional[str] = None, **_):
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        result = CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=True)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # an escaped exception is a failure of the test, never a result
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr,
                           args=list(args))
