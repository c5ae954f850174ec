"""Crowding (critical spacing): a Landolt C at the image's centre among four flanking Cs at
a centre-to-centre spacing in target diameters; the spacing at which a model reads the
middle C's gap halfway between chance and perfect, in target diameters, px and shares of
the image, with the target alone as the control that shows it is legible."""
