"""How a run ended, as a command's exit code: the same for a run in this process, a suite
and a shard on Ray."""

EXIT_INTERRUPTED = 130
EXIT_USAGE = 2
EXIT_STOPPED = 2  # the run could not go on (refused key): as for a run that cannot start
EXIT_COST_LIMIT = 3  # --max-cost was spent: what finished is recorded, --resume continues
