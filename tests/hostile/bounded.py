"""The time limit of the hostile-user harness: a reader given a file another user planted, up to the reader's own
size limit, must end (a value or one clear line) well within it. Not a timing assert: a linear reader ends in well
under a second on these sizes, the quadratic ones this replaces took minutes to hours, and the limit only keeps a
regression from hanging the suite."""

from __future__ import annotations

import signal

TIME_LIMIT = 10  # seconds


class TookTooLong(AssertionError):
    pass


def within(fn, *args, limit: int = TIME_LIMIT, **kwargs):
    """fn(*args, **kwargs), failing the test when it runs past `limit` seconds (SIGALRM: main thread only)."""
    def expired(_signum, _frame):
        raise TookTooLong(f"{getattr(fn, '__name__', fn)} ran past the harness's {limit} s limit")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(limit)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
