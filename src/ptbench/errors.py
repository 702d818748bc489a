"""The one exception type that the CLI turns into a one-line error and exit code 2, `first_line`, how
any error is cut to one line for a message, and `validation_line`, how a pydantic ValidationError is."""

from __future__ import annotations

from pydantic import ValidationError


class UserError(Exception):
    """Bad input from a user or an untrusted file: reported as one line, exit code 2, no traceback."""


def first_line(error: BaseException | str, limit: int = 4000) -> str:
    """The first non-empty line of an error (its type name when it has no text), clipped to `limit`."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else (type(error).__name__ if isinstance(error, BaseException) else "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validation_line(exc: ValidationError) -> str:
    """A pydantic error as one line: `where: problem` of its first error ("input" when at the top level);
    malformed JSON is `malformed JSON: <why>`."""
    errors = exc.errors()
    if not errors:
        return first_line(exc)
    first = errors[0]
    message = first_line(first["msg"].removeprefix("Value error, "))
    if first["type"] == "json_invalid":
        return f"malformed JSON: {first.get('ctx', {}).get('error', message)}"
    where = ".".join(str(part) for part in first["loc"]) or "input"
    return f"{where}: {message}"
