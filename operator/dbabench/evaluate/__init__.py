"""Graders of a finished run: each reads the trace and the scenario and yields one part of the
evaluation record (outcome, diagnosis, safety, efficiency), kept apart from the others."""
