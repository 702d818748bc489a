"""The verifier reads no configuration from where it was started (test.sh starts it beside the agent's workspace).

inspect's eval() loads the first `.env` it finds from the working directory upward into the environment (an agent's
/app/.env could set OPENAI_BASE_URL and send the judges' calls, key included, to its own address). `private_cwd`
runs the verifier in a fresh private dir whose empty `.env` is the one found.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def private_cwd() -> Iterator[Path]:
    """Work in a fresh private dir holding an empty .env (so no other .env is looked for); back again on exit."""
    started = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="ptbench-verify-") as private:
        (Path(private) / ".env").write_text("")
        os.chdir(private)
        try:
            yield Path(private)
        finally:
            os.chdir(started)
