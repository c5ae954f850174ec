"""Other tools' per-sample logs, read the same way across their versions (below the
benchmarks, whose readers turn them into their own samples, and `rescore/`, which scores
them)."""
