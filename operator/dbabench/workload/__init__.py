"""The clients of the world the agent walks into: workload profiles and scheduled jobs.

They run in their own process (``python -m dbabench.workload CONFIG``, or forked by a local
harness's ``forkserver``, which has imported them once), keep running through
diagnosis and verification, write a JSON-lines business log and export prometheus metrics.
"""
