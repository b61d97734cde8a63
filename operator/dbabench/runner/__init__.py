"""Runs and batteries of runs: one run end to end (restore, admit, agent, evaluate, record),
the pods' entry points that do the same on Kubernetes, campaigns and the self-proof."""
