"""Expected failures. The CLI prints them as one line and exits with `exit_code`; never a traceback."""


class CudaswitchError(Exception):
    """Something the user can fix; the message says what and how."""

    exit_code = 1

    def __str__(self) -> str:
        # the message itself, so that an `i18n.M` message reaches the CLI with its template and is translated
        if len(self.args) == 1 and isinstance(self.args[0], str):
            return self.args[0]
        return super().__str__()


class UsageError(CudaswitchError):
    """Bad input: an unknown or ambiguous selector, a missing option, a malformed file given by the user."""

    exit_code = 2


class FinishedInterrupted(CudaswitchError):
    """Ctrl-C arrived while a step that cannot be split was under way; the step was finished, and the message says
    what is now in place (exit 130, as for any interrupt)."""

    exit_code = 130
