"""What vision science's classic paradigms share when asked of a model: the trial every
stimulus PNG describes itself with, a constant-stimuli dataset, reading an answer, tallies
per level, the fits (a threshold for forced choices, a point of subjective equality for
comparisons) and how a run of one is shown. Each paradigm is a benchmark folder of its own
(`benchmarks/<name>/`) with its stimulus, question and human reference values."""
