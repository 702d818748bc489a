"""`ptbench.harbor.local:LocalEnvironment`, the import path Harbor configs and `harbor run -e` name; the
environment itself lives in `ptbench.sandbox.local`."""

from ptbench.sandbox.local import LocalEnvironment

__all__ = ["LocalEnvironment"]
