"""Library warnings stay out of the terminal and land in the work dir's warnings.log (Harbor's "Artifact sources
overlap" UserWarning was printed four times in `ptbench demo`'s output)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A command that warns the way Harbor does when a trial is built, run through the real entry point.
PROGRAM = """
import sys, warnings
from ptbench.cli.main import app, main

@app.command("warn-like-harbor")
def warn_like_harbor() -> None:
    warnings.warn("Artifact sources overlap: /logs/artifacts", UserWarning, stacklevel=1)
    from harbor.utils.logger import logger  # Harbor 0.26 warns through its logger while an agent is built
    logger.warning("LiteLLM could not resolve model 'google/gemini-2.5-pro'; passing it unchanged")
    print("done")

sys.argv = ["ptbench", "warn-like-harbor"]
main()
"""


def test_warnings_go_to_the_log_not_the_terminal(tmp_path: Path) -> None:
    work = tmp_path / "work"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"} | {"PTBENCH_WORKDIR": str(work)}
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    assert "Warning" not in result.stderr and "overlap" not in result.stderr
    assert "LiteLLM" not in result.stderr
    log = (work / "warnings.log").read_text()
    assert "UserWarning: Artifact sources overlap" in log
    assert "WARNING harbor.utils.logger: LiteLLM could not resolve model 'google/gemini-2.5-pro'" in log
