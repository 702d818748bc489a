"""`ptbench demo`: the whole loop on a laptop (tiny model, reference recipe through Harbor, verifier, store, summary).

Public API: `ptbench.demo.pipeline.run_demo(console, work_dir, budget_minutes, ...) -> DemoSummary`
(`ptbench.demo.summary`); the `ptbench demo` command that calls it is cli/demo.py. Importing this package is cheap
(every `ptbench` command imports its config): Harbor, torch and inspect are imported only when a demo runs.
"""
