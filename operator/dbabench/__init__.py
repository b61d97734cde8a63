"""dbabench: judge agents that operate a live, faulty PostgreSQL.

Packages are layered; a lower layer never imports a higher one (see ``.importlinter``):
model < scenario < env < workload < faults < policy < tools < agents < evaluate < runner < cli.
"""

__version__ = "0.1.0"
