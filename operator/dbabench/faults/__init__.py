"""Fault-program primitives a scenario composes: SQL steps now; jobs run in the workload."""
