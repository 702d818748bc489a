"""The submission to the verifier through a host directory, for compose environments (podman, docker): no copy
through Harbor's upload, which on podman-compose 1.x (no `compose cp`) builds the whole artifact as a tar in the
host's memory, twice (Harbor 0.26's tar fallback: a BytesIO, then its bytes), so an 8 GB model wants ~17 GiB.

The agent's container already has Harbor's log dir `/logs/agent` bind-mounted from the trial's `agent/` dir. The
collect hook copies the submission there (SUBMISSION_DIR), after the agent phase; the agent-logs artifact leaves it
out. The task's `environment/docker-compose.yaml` binds the trial's `agent/` dir read-only into every container of
the task (the agent's, where it is a read-only view of its own logs, and the separate verifier's), found from
`HOST_VERIFIER_LOGS_PATH`, which Harbor sets for both; the verifier scores the copy in place. Where the mount is
absent (an environment that ignores the compose file), the submission is missing at the verifier: the hand-off
check names it, a verifier error.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

from ptbench.catalog.spec import TaskSpec
from ptbench.catalog.submission import AGENT_LOGS, artifacts, submission_path

SUBMISSION_NAME = "ptbench-submission"
SUBMISSION_DIR = AGENT_LOGS / SUBMISSION_NAME
"""Where the collect hook puts the submission in the agent's container (the trial's agent/ dir on the host)."""
VERIFIER_MOUNT = PurePosixPath("/ptbench-agent-logs")
"""The trial's agent/ dir, read-only, in the verifier's container."""

_NEEDS = "ptbench --handoff-mount needs Harbor's log mounts: --ek auto_mounting=true"
COMPOSE = f"""# Written by `ptbench tasks export --handoff-mount` (don't edit): the trial's agent/ dir, read-only, in
# every container of this task, so the separate verifier reads the submission where the agent's collect hook put it.
services:
  main:
    volumes:
      - "${{HOST_VERIFIER_LOGS_PATH:?{_NEEDS}}}/../agent:{VERIFIER_MOUNT}:ro"
"""


def copy_command(submission: PurePosixPath) -> str:
    """Shell for the collect hook: replace SUBMISSION_DIR with a copy of the submission (links kept as links); no
    submission, nothing copied (the agent's failure, scored: the verifier finds none)."""
    target, source = shlex.quote(str(SUBMISSION_DIR)), shlex.quote(str(submission))
    return (
        f"rm -rf {target} && mkdir -p {target} && "
        f"{{ {{ [ ! -e {source} ] && [ ! -L {source} ]; }} || cp -a {source} {target}/; }}"
    )


def mounted_artifacts(spec: TaskSpec) -> list[dict[str, str | list[str]]]:
    """The task's artifacts without the submission (it travels through the mount), and the agent's logs without
    the hook's copy of it."""
    submission = str(submission_path(spec))
    kept = [entry for entry in artifacts(spec) if entry["source"] != submission]
    for entry in kept:
        if entry["source"] == str(AGENT_LOGS):
            entry["exclude"] = [f"./{SUBMISSION_NAME}"]
    return kept


def verifier_path(submission: PurePosixPath) -> PurePosixPath:
    """Where the verifier finds the submission that the hook copied."""
    return VERIFIER_MOUNT / SUBMISSION_NAME / submission.name
