"""Running probe.py: the environment's own Python (or cudaswitch's, isolated) runs it in a fresh process with a
timeout, and the record it writes comes back as a `ProbeOutcome` (docs/design/checks.md section 1).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError

PROBE = Path(__file__).with_name("probe.py")
RX_STAGE = re.compile(r"^cudaswitch-probe: stage (\w+)$", re.M)


def probe_source() -> str:
    from cudaswitch.core.trust import package_text

    return package_text(PROBE)


# probe.py defines the marker: it runs in other interpreters and imports nothing of cudaswitch's
MARKER = re.search(r'^MARKER = "([^"]+)"$', probe_source(), re.M).group(1)


@dataclass
class ProbeOutcome:
    """One run of probe.py: its record (None when it wrote none), exit status, output, and the last stage it
    reported on stderr."""
    record: Optional[dict]
    returncode: Optional[int]
    stdout: str
    stderr: str
    timed_out: bool
    last_stage: Optional[str]


def _parse(stdout: str) -> Optional[dict]:
    for line in reversed((stdout or "").splitlines()):
        if line.startswith(MARKER):
            try:
                return trust.parse_json(line[len(MARKER):], "the probe's record")
            except ValueError:
                return None
    return None


def _decode(data) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def run_probe(python: str, environ: Dict[str, str], timeout: float, args: Optional[List[str]] = None,
              cwd: Optional[str] = None, isolated: bool = False, progress: bool = False) -> ProbeOutcome:
    """`python -c <probe> ARGS`: -c, like the `python -c "import torch"` users type (no script folder on sys.path;
    the probe drops the working folder itself before importing anything). `isolated`: cudaswitch's own Python, run
    with -I (no PYTHONPATH, no user site, no working folder on sys.path) from the root folder, so nothing from the
    caller's folder or environment is imported. The probe writes its record to a file of its own, so whatever the
    imported modules print cannot corrupt it."""

    from cudaswitch.core.trust import run_program, run_python

    # as root, the folders of PATH and LD_LIBRARY_PATH another user could write are left out: the probe's Python
    # loads libcuda and torch's libraries by name, and whoever wrote the first folder that answers would run as root
    environ, _dropped = trust.trusted_search_folders(environ)
    with trust.private_temp_dir("cudaswitch-probe-") as tmp:
        result = os.path.join(tmp, "record.json")
        cmd = ["-c", probe_source()] + list(args or []) + ["--result", result]
        timed_out, code = False, None
        try:
            with _Status(timeout, progress):
                if isolated and cwd is None and python == sys.executable:
                    proc = run_python(cmd, timeout, env=environ, text=False)
                else:
                    # an environment's Python is often a link whose pyvenv.cfg makes it that environment (a venv)
                    proc = run_program([python] + (["-I"] if isolated else []) + cmd, timeout, env=environ,
                                       cwd=cwd or (os.path.abspath(os.sep) if isolated else None), text=False,
                                       by_link=True)
            out, err, code = proc.stdout, proc.stderr, proc.returncode
        except OSError as exc:
            from cudaswitch.core.i18n import M

            raise CudaswitchError(M("cannot run {python}: {why}", python=python, why=exc.strerror or exc)) from None
        except subprocess.TimeoutExpired as exc:
            timed_out, out, err, code = True, exc.output, exc.stderr, getattr(exc, "returncode", None)
        record = _read_record(result)
    out, err = _decode(out), _decode(err)
    stages = RX_STAGE.findall(err)
    return ProbeOutcome(record if record is not None else _parse(out), code, out, err, timed_out,
                        stages[-1] if stages else None)


def _read_record(path: str) -> Optional[dict]:
    from cudaswitch.core.trust import read_json

    try:
        return read_json(path, dict)
    except (OSError, ValueError):
        return None


class _Status:
    """One status line on stderr while the probe runs, redrawn in place, and only where a person watches (a
    terminal): never on a pipe, in a log or with --json, whose callers read stdout only."""

    def __init__(self, timeout: Optional[float], wanted: bool):
        self.timeout, self.wanted = timeout, wanted
        self.stop = None

    def __enter__(self):
        if not (sys.stderr.isatty() and self.wanted):
            return self
        import threading

        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self):
        from cudaswitch.core.i18n import _

        t0 = time.monotonic()
        text = (_("cudaswitch: smoke test running ({seconds} s of at most {limit} s)...") if self.timeout else
                _("cudaswitch: smoke test running ({seconds} s)..."))
        while not self.stop.wait(0.5):
            sys.stderr.write("\r" + text.format(seconds=f"{time.monotonic() - t0:.0f}",
                                                limit=f"{self.timeout:.0f}" if self.timeout else ""))
            sys.stderr.flush()

    def __exit__(self, *exc):
        if self.stop is not None:
            self.stop.set()
            self.thread.join()
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        return False
