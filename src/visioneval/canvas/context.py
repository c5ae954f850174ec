"""One sample's working state while its metric families run (`pipeline.evaluate_pair`),
which the pictures (`draw`) read too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from visioneval.canvas.figma import Layout
from visioneval.canvas.metrics import Absent
from visioneval.canvas.pairs import Pair


@dataclass
class Context:
    """What one sample's families share, and what the pictures draw."""

    pair: Pair
    out: dict[str, Any]
    absent: dict[str, str] = field(default_factory=dict)
    gt: Layout | None = None
    gen: Layout | None = None
    gt_image: Any = None  # PIL images
    gen_image: Any = None
    extras: dict[str, Any] = field(default_factory=dict)

    def put(self, values: dict[str, Any]) -> None:
        for key, value in values.items():
            if isinstance(value, Absent):
                self.absent[key] = value.reason
            else:  # plain Python numbers only (np.float64 would leak its repr)
                self.out[key] = value.item() if isinstance(value, np.generic) else value
