"""The arbiter: turns all intents of one tick into what actually happens (docs/design.md §2).

Rules, all deterministic and independent of fish ids or array order:

* **Priority.** ``age_weight·min(age, age_cap)/age_cap + energy_weight·energy/max_energy``
  (integer per-mille); equal scores are broken by a hash of (tick, fish id), so the
  winner of a tie changes from tick to tick and never favours one id.
* **Glass, plants, rocks.** A move into an obstacle is *blocked*: the fish stays.
* **Several fish, one target cell.** The highest priority wins the cell; the others are
  *refused* ("move refused").
* **Target occupied.** The winner enters only if the occupant leaves successfully this
  tick (chains A→B→C resolve front to back). If the occupant stays — it is resting,
  eating, refused or blocked — the mover is refused.
* **Head-on swaps and rotations** (A→B while B→A, or longer cycles): refused; fish do not
  pass through each other.
* **Several fish eating one food.** Each eater takes the first food among its own cell, then
  north, south, west, east. Eaters aiming at the same item are ordered by priority: the
  first eats, the others find "food taken by another fish".
* **Exhausted fish** (energy 0) can only rest; the world enforces that before arbitration.
"""

from __future__ import annotations

import numpy as np

from .rng import at_tick

MOVED, STAYED, BLOCKED, CROWDED, OCCUPIED = 0, 1, 2, 3, 4
ATE, NO_FOOD, TAKEN = 0, 1, 2


def priority(age: np.ndarray, energy: np.ndarray, max_energy: int, *, age_weight: int, energy_weight: int,
             age_cap: int) -> np.ndarray:
    """Integer arbitration score per fish (higher wins)."""
    a = np.minimum(age, age_cap).astype(np.int64) * 1000 // age_cap
    e = energy.astype(np.int64) * 1000 // max_energy
    score: np.ndarray = age_weight * a + energy_weight * e
    return score


def tie_break(tick: int, id_keys: np.ndarray) -> np.ndarray:
    """Per-fish tie-break key for this tick (higher wins); ``id_keys`` = ``mix64(seed, id)``."""
    return at_tick(id_keys, tick)


def _ranked(keys_cell: np.ndarray, score: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Order grouping by cell, best first inside each group."""
    return np.lexsort((~tie, -score, keys_cell))


def resolve_moves(cell: np.ndarray, targets: np.ndarray, moving: np.ndarray, blocked: np.ndarray,
                  occupant: np.ndarray, score: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Outcome per fish: MOVED, STAYED (did not try), BLOCKED, CROWDED or OCCUPIED.

    Args:
        cell: current flat cell of every fish.
        targets: flat target cell of every fish (ignored where ``moving`` is False).
        moving: fish that intend to move.
        blocked: flat bool grid of obstacles.
        occupant: flat grid, fish index or -1 (positions at the start of the tick).
        score, tie: :func:`priority` and :func:`tie_break`.
    """
    n = cell.size
    outcome = np.full(n, STAYED, np.int8)
    movers = np.flatnonzero(moving)
    if movers.size == 0:
        return outcome
    tgt = targets[movers]
    hit_wall = blocked[tgt]
    outcome[movers[hit_wall]] = BLOCKED
    cand, ctgt = movers[~hit_wall], tgt[~hit_wall]
    if cand.size == 0:
        return outcome
    order = _ranked(ctgt, score[cand], tie[cand])
    cand, ctgt = cand[order], ctgt[order]
    first = np.ones(cand.size, bool)
    first[1:] = ctgt[1:] != ctgt[:-1]
    outcome[cand[~first]] = CROWDED
    winners, wtgt = cand[first], ctgt[first]

    # 0 = staying, 1 = pending, 2 = leaving; resolve chains from free cells backwards.
    state = np.zeros(n, np.int8)
    state[winners] = 1
    occ = occupant[wtgt]
    state[winners[occ < 0]] = 2
    while True:
        pend = state[winners] == 1
        if not pend.any():
            break
        w, o = winners[pend], occ[pend]
        s = state[o]
        if not (s != 1).any():
            break  # only cycles left
        state[w[s == 0]] = 0
        state[w[s == 2]] = 2
    outcome[winners[state[winners] == 2]] = MOVED
    outcome[winners[state[winners] != 2]] = OCCUPIED
    return outcome


def resolve_eats(cell: np.ndarray, eating: np.ndarray, food: np.ndarray, neighbour_offsets: np.ndarray,
                 score: np.ndarray, tie: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Who eats which food.

    Args:
        neighbour_offsets: flat offsets ``[0, north, south, west, east]`` (the grid's moves in
            order after the own cell: a hexagonal tank's six).
        food: flat bool grid of food.

    Returns:
        (eaters, result per eater — ATE / NO_FOOD / TAKEN, eaten cells).
    """
    eaters = np.flatnonzero(eating)
    if eaters.size == 0:
        return eaters, np.zeros(0, np.int8), np.zeros(0, np.int64)
    around = cell[eaters, None] + neighbour_offsets[None, :]
    has = food[around]
    found = has.any(axis=1)
    choice = around[np.arange(eaters.size), has.argmax(axis=1)]
    result = np.full(eaters.size, NO_FOOD, np.int8)
    idx = np.flatnonzero(found)
    if idx.size:
        f, fc = eaters[idx], choice[idx]
        order = _ranked(fc, score[f], tie[f])
        idx, fc = idx[order], fc[order]
        first = np.ones(idx.size, bool)
        first[1:] = fc[1:] != fc[:-1]
        result[idx[first]] = ATE
        result[idx[~first]] = TAKEN
        eaten = fc[first]
    else:
        eaten = np.zeros(0, np.int64)
    return eaters, result, eaten
