"""Numerosity (the approximate number system): two boxes of dots, 10 to 40 each; which box
has more, at ratios from 1.08 to 3, under equal dot size and equal total dot area; the
Weber fraction w of the standard model per condition."""
