"""A run as one value and the code that carries it out.

Every way in (a benchmark command, `evaluate`, `layout`, `visioneval run --spec`, a suite
row, the Python API, a Ray shard task) builds a `RunSpec` (spec.py), or a `ResumeRequest`
that becomes the run's recorded RunSpec, and hands it to `execute`; nothing here knows
about flags."""
