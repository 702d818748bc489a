"""`ptbench demo`: the whole loop on a laptop (tiny model, reference recipe through Harbor, verifier, store, summary).

Public API: `run_demo(console, work_dir, budget_minutes, ...) -> DemoSummary` (pipeline.py); the
`ptbench demo` command that calls it is cli/demo.py. Importing this package is cheap:
Harbor, torch and inspect are imported only when a demo runs.
"""

from __future__ import annotations

from ptbench.demo.failures import DemoFailed
from ptbench.demo.pipeline import run_demo
from ptbench.demo.summary import DemoSummary

__all__ = ["DemoFailed", "DemoSummary", "run_demo"]
