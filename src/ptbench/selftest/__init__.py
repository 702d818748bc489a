"""`ptbench integrity selftest`: the integrity checks tried on known cheats and honest runs (an orchestrator beside
the demo; the checks themselves live in `integrity/`)."""
