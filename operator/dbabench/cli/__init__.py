"""The ``dbabench`` command line: a thin shell over the runner."""
