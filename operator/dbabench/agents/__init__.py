"""Agents: anything that works a scenario through the tool gate and files a report.

The scripted agents here (reference, decoy, null) read the scenario, by design: they exist to
prove that a scenario can be solved, that its decoy fails and that doing nothing fails.
Evaluated agents never see the scenario, only the task (symptom, tools, budget).
"""
