"""Short labels for messages and the store: an environment's name (`LOCAL_ENVIRONMENT` is `--env local`)."""

from __future__ import annotations

import importlib

from harbor.models.trial.config import EnvironmentConfig

LOCAL_ENVIRONMENT = "ptbench.sandbox.local:LocalEnvironment"
"""`--env local`, the default: our bubblewrap sandbox on this machine (also `ptbench.harbor.local:LocalEnvironment`,
the path README and Harbor configs name)."""


def names_local_environment(import_path: str | None) -> bool:
    """Whether an import path names our local environment class, by whatever module exports it (only ptbench's own
    modules are imported to find out)."""
    if import_path == LOCAL_ENVIRONMENT:
        return True
    module, _, name = (import_path or "").partition(":")
    if not name or module.split(".")[0] != "ptbench":
        return False
    from ptbench.sandbox.local import LocalEnvironment

    try:
        return getattr(importlib.import_module(module), name, None) is LocalEnvironment
    except ImportError:
        return False


def environment_label(env: EnvironmentConfig) -> str:
    """`local`, the Harbor environment type, or the import path."""
    if names_local_environment(env.import_path):
        return "local"
    return env.import_path or (env.type.value if env.type else "unknown")
