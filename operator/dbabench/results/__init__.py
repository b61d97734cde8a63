"""What a run and a campaign mean once they are over: tables, plots, pages, a judge model's
labels and re-scoring. Read from the records (``dbabench.records``), never from a live run."""
