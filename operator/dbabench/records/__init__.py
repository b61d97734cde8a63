"""Records: the one place that knows where a run's and a campaign's files lie and reads and
writes them through their versioned models (``model.artifacts`` names them)."""
