"""Psychophysics: psychometric thresholds of vision-language models on odd-one-out arrays
(SalBench's P3 look), measured as vision science measures people: one feature of the target
varied in controlled steps (orientation in degrees, colour as CIEDE2000, size as a log area
ratio), feature and conjunction search, target-absent arrays for yes/no answers."""
