"""The terminal view: the whole tank as characters, drawn from a snapshot.

Often the quickest way to see something odd — a corner that never empties, a jam. Fish are
arrows showing their heading; ``x`` marks an exhausted fish.
"""

from __future__ import annotations

from ..grid import HEX
from ..snapshot import Snapshot

ARROWS = "^v<>"
FOOD = "%"  # not F: in the window F is the fork key, and one letter should not mean two things
LEGEND = f"# glass  * plant  o rock  {FOOD} food  ^v<> fish (heading)  x exhausted"
HEX_LEGEND = (f"# glass  * plant  o rock  {FOOD} food  {HEX.fish_chars} fish heading east, north-east, north-west, "
              f"west, south-west, south-east (a number pad's arrows)  x exhausted")


def render(snap: Snapshot, places: list[tuple[int, int, int]] | None = None) -> str:
    """The tank as ``height`` lines of ``width`` characters; ``places``: (number, x, y) of one
    fish's remembered places, drawn as their digits under food and fish (``live --headless
    --ascii K --select F`` with ``fish.places``)."""
    grid = [list(row) for row in snap.terrain]
    for j, x, y in places or ():
        grid[y][x] = str(j % 10)
    for x, y, _ in snap.food:
        grid[y][x] = FOOD
    hexes = snap.grid == "hex"
    arrows = HEX.fish_chars if hexes else ARROWS
    for f in snap.fish:
        if f.in_water:
            grid[f.y][f.x] = "x" if f.energy == 0 else arrows[f.heading]
    if hexes:  # a hexagonal tank: a space between cells, odd rows half a cell (one space) right
        return "\n".join(" " * (y & 1) + " ".join(row) for y, row in enumerate(grid))
    return "\n".join("".join(row) for row in grid)


def status_line(snap: Snapshot) -> str:
    """One line of the most telling numbers under the tank."""
    m = snap.metrics or {}

    def cur(key: str) -> float:
        return float(m.get(key, {}).get("current", 0.0))

    here = [f for f in snap.fish if f.in_water]
    energy = sum(f.energy for f in here) / max(1, len(here)) / 100
    alerts = m.get("alerts") or []
    return (
        f"tick {snap.tick}  fish {len(here)}  food {len(snap.food)}  energy {energy:.1f}  "
        f"entropy {cur('action_entropy'):.2f}  conflicts {cur('conflict_rate'):.1%}  "
        f"schooling {cur('schooling_degree'):.2f}  polarization {cur('polarization'):.2f}"
        + (f"  ALERT: {'; '.join(alerts)}" if alerts else "")
    )
