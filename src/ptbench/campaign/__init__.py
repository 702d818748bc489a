"""Campaigns: the whole matrix (tasks x agents x seeds) as trials on this machine, on Slurm, or on any scheduler
by shards; the directory and its files are in layout.py."""
