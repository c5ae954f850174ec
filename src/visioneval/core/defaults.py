"""The engine's defaults, in one place: what a run uses for a setting no flag, suite file or
Python argument gives. `EngineOptions` (what run.json records), the retry policy, the
command-line help and suite files all read these."""

CONCURRENCY = 16
"""Requests in flight per URL."""
MAX_CONCURRENCY = 4096
"""Most requests in flight per URL a run may ask for; beyond it the run is refused. A
server that takes more at once is rare, and each request in flight holds a sample, its
images and a connection."""
MAX_ATTEMPTS = 6
"""Attempts per request (the first and five retries)."""
TIMEOUT_S = 120.0
"""Seconds one attempt may take."""
BACKOFF_BASE_S = 1.0
"""First wait between attempts; it doubles per attempt."""
BACKOFF_CAP_S = 30.0
"""Longest wait between attempts."""
MAX_REPLY_MB = 32.0
"""Largest reply read from a server, in MB."""


def shown(value: float) -> str:
    """A default as the command's --help shows it (16, 120, 32: no trailing .0)."""
    return f"{value:g}"
