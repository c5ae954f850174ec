"""Vernier acuity: two collinear line segments, the lower one offset left or right by a
fraction of a pixel to a few pixels; the offset a model needs to tell the side, as a
point of subjective equality (its bias) and a JND, in pixels and in segment lengths."""
