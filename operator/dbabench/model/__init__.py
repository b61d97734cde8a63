"""Pydantic models at every boundary: scenario manifests, reports, traces, evaluations.

Nothing here does I/O; every other layer builds on these types.
"""
