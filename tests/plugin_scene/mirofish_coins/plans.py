"""A plan type from this package (entry point group ``mirofish.plans``): drift, with the water.
One row, as docs/extending.md shows it; it imports only the plan types' module of MiroFish
(it is loaded while the plan tables are built)."""

from mirofish.fish.plantypes import PlanType

DRIFT = PlanType("drift", ticks=25, events=frozenset({"planned", "crowd", "hungry"}),
                 steer=({"open": ("open_water", 3.0)},), prompt="let the water carry you", fork=("drift {ticks}",),
                 words=("drift", "carried"), deed="worked",
                 doc="let the water carry you: open water weighs three times")
