"""The Kubernetes operator: kopf handlers that drive the same runner as the CLI.

Thin by design: handlers translate resources to runner calls and results to status; grading
logic lives in ``dbabench.evaluate`` only. Status is derived by the pure functions of
``status``; the only I/O is in ``api`` (the Kubernetes API) and the runner.
"""
