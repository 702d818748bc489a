"""Library warnings (Harbor's "Artifact sources overlap", inspect's, torch's, ...) kept out of the terminal and in a
log: a UserWarning printed on every trial reads to a new user as an error. They go to `<work dir>/warnings.log`,
created on the first warning; where that cannot be written, they are shown as usual."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TextIO

WARNINGS_LOG = "warnings.log"


def keep_warnings_in_log() -> None:
    """From now on, this process's warnings are appended to the work dir's warnings.log instead of stderr."""
    shown = warnings.showwarning

    def to_log(message: Warning | str, category: type[Warning], filename: str, lineno: int,
               file: TextIO | None = None, line: str | None = None) -> None:
        try:
            with open(_log_path(), "a", encoding="utf-8") as log:
                log.write(warnings.formatwarning(message, category, filename, lineno, line))
        except OSError:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = to_log


def _log_path() -> Path:
    from ptbench.settings import settings

    work = Path(settings().workdir or ".ptbench")
    work.mkdir(parents=True, exist_ok=True)
    return work / WARNINGS_LOG
