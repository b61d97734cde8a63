"""Environment backends: build golden dirty state, restore it per run, start the services a
run needs (PostgreSQL, Prometheus, exporters) and stop all of them by pid."""
