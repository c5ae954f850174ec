"""Touching circles, made parametric: two pairs of circles, one pair touching and the other
separated by a gap of a fraction of a pixel to 16 px; the gap a model needs to tell which
pair has it, as a threshold in pixels, in circle diameters and in image widths."""
