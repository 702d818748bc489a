"""Benchmark data directories without a hub: what `ptbench data build` writes and everything that reads one.

A data directory holds, per benchmark, two folders a benchmark's loader reads as its `--data-dir`:
`<benchmark>/agent/` (what the rules let the agent see: training data and the dev split) and
`<benchmark>/verifier/` (the test split, plus whatever the test split's loader also reads), and a
versioned `manifest.json` naming every file's role, origin and checksum and every missing piece
with the reason. `manifest.py` is the file format, `pieces.py` what each benchmark needs and where
it may come from, `sources.py` how a piece is fetched, `build.py` the build.
"""
