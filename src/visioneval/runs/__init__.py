"""Runs as typed requests: what a run (or a resume) is, and the code that carries one out.

Every way in (a benchmark command, `evaluate`, `layout`, the Python API) builds a
`RunRequest` or a `ResumeRequest` and hands it here; nothing here knows about flags."""
