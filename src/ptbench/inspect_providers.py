"""inspect_ai's entry point into ptbench (pyproject's `inspect_ai` entry-point group): inspect imports this module
when it looks up a model API it does not know yet, which registers the ones ptbench serves: `ptbench/` (a model
directory through ptbench's backends) and `scripted/` (judges that answer from a script)."""

from ptbench.verify import provider, scripted

__all__ = ["provider", "scripted"]
