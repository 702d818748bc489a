"""Short labels for messages and the store: an environment's name (`LOCAL_ENVIRONMENT` is `--env local`)."""

from __future__ import annotations

from harbor.models.trial.config import EnvironmentConfig

LOCAL_ENVIRONMENT = "ptbench.sandbox.local:LocalEnvironment"
"""`--env local`, the default: our bubblewrap sandbox on this machine."""


def environment_label(env: EnvironmentConfig) -> str:
    """`local`, the Harbor environment type, or the import path."""
    if env.import_path == LOCAL_ENVIRONMENT:
        return "local"
    return env.import_path or (env.type.value if env.type else "unknown")

