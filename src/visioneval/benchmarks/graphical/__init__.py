"""Graphical perception (Cleveland & McGill 1984): two marked elements of a simple chart,
"what percentage is the smaller of the larger?", per encoding (position along a common or
non-aligned scales, length, angle, area, shading), the midmean log2 error and the order of
the encodings beside people's."""
