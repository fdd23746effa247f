"""A command whose stderr is a real terminal (a pty) and whose stdout is a pipe: what a user at a terminal sees of
the progress bars and status lines that cudaswitch draws only on a terminal."""

from __future__ import annotations

import os
import subprocess
import threading


def stderr_on_a_terminal(cmd, env, timeout=600, cwd=None):
    """(returncode, stdout text, what reached the terminal as text). The pty is read while the command runs, so a
    full terminal never blocks it."""
    master, slave = os.openpty()
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # EIO: the command closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    try:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=slave)
    finally:
        os.close(slave)
    reader.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(10)
        os.close(master)
    return proc.returncode, out.decode("utf-8", "replace"), b"".join(chunks).decode("utf-8", "replace")
