"""Geometric illusions as points of subjective equality: Müller-Lyer, Ebbinghaus and Ponzo,
each beside its control without the inducers; how much larger the comparison must be to
look equal to the standard, and the illusion's strength as the difference of the two."""
