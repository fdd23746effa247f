"""The command line run in the pytest process through click's CliRunner, for tests where a separate process is
not the point. The command sees exactly the environment the test passes (os.environ is replaced for the call, not
merged), and the result reads like `conftest.run_cli`'s CompletedProcess: returncode, stdout, stderr, with the
traceback on stderr if the command raised, as a real process would print it."""

from __future__ import annotations

import os
import subprocess
import traceback

from click.testing import CliRunner

from cudaswitch.cli import main


def invoke_cli(args, env=None, cwd=None) -> subprocess.CompletedProcess:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        result = CliRunner().invoke(main, list(args), catch_exceptions=True)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    stderr = result.stderr
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*result.exc_info))
        code = 1
    return subprocess.CompletedProcess(["cudaswitch", *args], code, result.stdout, stderr)
