"""One run end to end (restore, admit, agent, evaluate, record); campaigns build on it."""
