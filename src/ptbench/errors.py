"""The one exception type that the CLI turns into a one-line error and exit code 2, and `first_line`,
how any error is cut to one line for a message."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from a user or an untrusted file: reported as one line, exit code 2, no traceback."""


def first_line(error: BaseException | str, limit: int = 4000) -> str:
    """The first non-empty line of an error (its type name when it has no text), clipped to `limit`."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else (type(error).__name__ if isinstance(error, BaseException) else "")
    return text if len(text) <= limit else text[: limit - 1] + "…"
