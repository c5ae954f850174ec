"""The contracts every part of visioneval shares: records, the run store and its files, what a
benchmark is, the registry that names benchmarks, and the blocks a report is built from.
Nothing here imports a benchmark."""
