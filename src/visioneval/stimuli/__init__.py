"""Stimuli drawn as vision science draws them: geometry in pixels with sub-pixel positions,
anti-aliased in linear light, luminance encoded to 8-bit sRGB (dithered where a contrast is
below one code step), each PNG carrying the parameters it was drawn from. Paradigms (Vernier,
Gabor detection, crowding, illusions) are built on these parts; see docs/stimuli.md."""
