"""A metric from this package (entry point group ``mirofish.metrics``): the share of fish
resting. It imports a part of MiroFish that itself reads the metrics table at import
(``observe.recording``) — a plug-in may import whatever it needs, with no import trap."""

from __future__ import annotations

import numpy as np

from mirofish.actions import Action
from mirofish.observe import recording  # noqa: F401 — (what used to trap a plug-in)
from mirofish.observe.metrics import Metric

RESTING = Metric("resting_share", "resting", "share of the fish in the water that rested this tick", "share",
                 "{:.0%}", "sample",
                 lambda s: float(np.mean(s.f.executed[s.ids] == int(Action.REST))) if len(s.ids) else 0.0,
                 hud=10)  # a HUD column after the built-in ones
