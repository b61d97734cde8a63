"""Scenario manifests: loading, validation with field paths, datasets, the catalog."""
