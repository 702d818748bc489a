"""The import path Harbor configurations name: `-e ptbench.harbor.local:LocalEnvironment` (see `local`)."""
