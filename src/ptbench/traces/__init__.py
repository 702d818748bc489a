"""Trace analytics (`ptbench traces`): where each trial's budget went and which habits its agent showed, read from
Harbor's ATIF trajectories or the agent's own log; the result model is `traces.traces_report.TracesReport`."""
