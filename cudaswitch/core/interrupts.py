"""Ctrl-C held off across steps that must not be split: a file moved into place and the record that tracks it, a
switch's hook files and the state file that lists them. While held, an interrupt is only noted; the code asks for
it (`Held.check`) at the boundaries where stopping leaves the old state or the new one, never in between."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator


class Held:
    def __init__(self) -> None:
        self.pending = False

    def check(self) -> None:
        """Raise the interrupt that arrived while held, here, at a boundary where it can be undone or finished."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


@contextlib.contextmanager
def held() -> Iterator[Held]:
    h = Held()
    # signals reach only the main thread's handler; elsewhere (and where Ctrl-C is ignored already) nothing to hold
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield h
        return

    def note(_signum, _frame) -> None:
        h.pending = True

    old = signal.signal(signal.SIGINT, note)
    try:
        yield h
    finally:
        signal.signal(signal.SIGINT, old)
