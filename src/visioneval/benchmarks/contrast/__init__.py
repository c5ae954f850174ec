"""Contrast detection and the contrast sensitivity function: a Gabor patch in one half of
the image, the other blank, "left or right?"; per spatial frequency (cycles per image
width) the Michelson contrast at 75% correct, and the CSF (a log-parabola) through the
sensitivities: peak sensitivity, peak frequency, bandwidth."""
