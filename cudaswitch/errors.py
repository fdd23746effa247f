"""Expected failures. The CLI prints them as one line and exits with `exit_code`; never a traceback."""


class CudaswitchError(Exception):
    """Something the user can fix; the message says what and how."""

    exit_code = 1


class UsageError(CudaswitchError):
    """Bad input: an unknown or ambiguous selector, a missing option, a malformed file given by the user."""

    exit_code = 2
