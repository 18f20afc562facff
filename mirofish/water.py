"""The water layer: grid, glass, plants, rocks and food (docs/design.md §1, §2).

Every grid is stored *padded*: ``pad`` extra rings of wall around the tank, so that any
fish's view window is a fixed set of flat offsets and never needs bounds checks. Cells are
addressed by their flat index in the padded grid; :meth:`Water.xy` converts back to tank
coordinates (origin top-left, x to the right, y down).

A hexagonal tank (``world.grid = "hex"``, mirofish/grid.py) is stored in *axial* coordinates: row
``y`` of the tank starts ``y // 2`` cells further left in the store than the row above it (its
``skew``), so each of the six neighbours, every cell of a view and every step is one fixed flat
offset, as on the square grid — the same compiled and numpy code serves both. The store is a
parallelogram around the rectangular tank; what lies outside the tank is off-grid wall.

Integers only; the only randomness is the world's ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from . import kernel
from .config import Config, hundredths

WATER, GLASS, PLANT, ROCK, OFFGRID = 0, 1, 2, 3, 4
NO_FOOD = -1
_NO_DRAWS = np.zeros(0)
_XY_TABLE_CELLS = 1 << 14  # padded cells up to which Water.xy looks coordinates up (two int64 tables, ≤ 256 KB:
# larger ones, read at random every tick, missed the cache: 15–18 µs a tick at 1,000 fish on 320×180, a divmod 9–10)


@functools.lru_cache(maxsize=8)
def _xy_tables(pw: int, ph: int, pad: int, skew: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Each padded cell's tank (x, y), read-only (Water.xy: a lookup is a third of a divmod's time;
    ``skew`` ≥ 0: a hexagonal tank's axial store)."""
    y, x = np.divmod(np.arange(pw * ph, dtype=np.int64), pw)
    y -= pad
    if skew >= 0:
        x += (y >> 1) - skew
    else:
        x -= pad
    x.flags.writeable = y.flags.writeable = False
    return x, y


class Water:
    """Static terrain plus the food field of one tank.

    Attributes:
        width, height: tank size in cells, glass included.
        pad: rings of off-grid wall around the tank (= perception radius).
        pw: padded row length; a move north is ``-pw``.
        terrain: padded flat ``uint8`` terrain codes.
        blocked: padded flat bool, True where no fish may be.
        food_born: padded flat ``int32``, the tick a food item spawned, or ``NO_FOOD``.
    """

    def __init__(self, cfg: Config, rng: np.random.Generator):
        w, h, m = cfg.world.width, cfg.world.height, cfg.world.wall_margin
        self.width, self.height, self.margin = w, h, m
        self.pad = p = cfg.perception.radius
        self.pw, self.ph = w + 2 * p, h + 2 * p
        # a hexagonal tank's axial store (the module doc): row y starts skew - y // 2 cells in
        self.hexes = cfg.world.grid == "hex"
        self.skew = -1
        if self.hexes:
            self.skew = (h - 1) // 2 + p
            self.pw = w + self.skew + p
        self.food_energy = hundredths(cfg.food.energy)
        self.rot_ticks = cfg.food.rot_ticks
        self.spawn_rate = cfg.food.spawn_rate

        tank = np.full((h, w), WATER, np.uint8)
        tank[:m, :] = tank[-m:, :] = GLASS
        tank[:, :m] = tank[:, -m:] = GLASS
        _grow_plants(tank, m, cfg.world.plant_patches, cfg.world.plant_height, rng)
        _place_rocks(tank, m, cfg.world.rocks, rng)
        _seal_pockets(tank)

        padded = np.full((self.ph, self.pw), OFFGRID, np.uint8)
        if self.hexes:
            for y in range(h):
                start = self.skew - (y >> 1)
                padded[p + y, start : start + w] = tank[y]
        else:
            padded[p : p + h, p : p + w] = tank
        self.food_born = np.full(self.ph * self.pw, NO_FOOD, np.int32)
        # no food is older than this tick (a lower bound kept by the compiled tick so that it scans
        # the grid for rot only when something may be due); None: not known — whoever puts food
        # down other than by spawning (a keyframe, an intervention) sets it to None
        self.oldest_food: int | None = None
        # the food on the grid as (born tick, cell), oldest first, for the compiled tick's rot
        # (_tick.food; valid while oldest_food is known, rebuilt from the grid when it is not)
        self._ring = np.zeros((64, 2), np.int32)
        self._ring_at = np.zeros(2, np.int64)  # its first entry and its length
        self._bias = cfg.food.open_water_bias
        self.base_terrain = padded.ravel()
        self.base_terrain.flags.writeable = False
        self._set_terrain(self.base_terrain)

    def _set_terrain(self, terrain: np.ndarray) -> None:
        """Take ``terrain`` (padded flat codes) and derive the rest: blocked cells, open cells, food spawn weights."""
        self.terrain_version = getattr(self, "terrain_version", -1) + 1  # views redraw the terrain when it changes
        self.terrain = terrain
        self.terrain.flags.writeable = False
        self.blocked = self.terrain != WATER
        self.blocked.flags.writeable = False
        self.open_cells = np.flatnonzero(~self.blocked).astype(np.int32)
        padded = self.terrain.reshape(self.ph, self.pw)
        weights = _open_water_weights(padded, self._bias).ravel()[self.open_cells]
        cdf = np.cumsum(weights, dtype=np.float64)
        self._spawn_cdf = cdf / cdf[-1]
        # where a draw's search in the cdf starts and ends, by bucket of [0, 1) (the compiled
        # tick's food(): a large tank's spawns without a binary search over the whole cdf)
        buckets = 1 << max(4, min(16, int(self._spawn_cdf.size // 4).bit_length()))
        edges = np.arange(buckets + 1, dtype=np.float64) / buckets
        self.spawn_index = np.searchsorted(self._spawn_cdf, edges, side="right").astype(np.int32)

    @property
    def edited(self) -> bool:
        """Whether rocks were placed or removed since the tank was built (an intervention)."""
        return self.terrain is not self.base_terrain and not np.array_equal(self.terrain, self.base_terrain)

    def edit(self, cells: np.ndarray, code: int) -> None:
        """Set the terrain of ``cells`` (padded flat) to ``code`` (ROCK or WATER); food there goes."""
        terrain = self.terrain.copy()
        terrain[cells] = code
        if code != WATER:
            self.food_born[cells] = NO_FOOD
        self._set_terrain(terrain)

    def load_terrain(self, terrain: np.ndarray | None) -> None:
        """Restore a keyframe's terrain (None: the tank as built)."""
        if terrain is None:
            if self.terrain is not self.base_terrain:
                self._set_terrain(self.base_terrain)
        elif not np.array_equal(terrain, self.terrain):
            self._set_terrain(np.array(terrain, np.uint8))

    # ------------------------------------------------------------ geometry

    def cell(self, x: int | np.ndarray, y: int | np.ndarray) -> Any:
        """Tank coordinates → padded flat index."""
        if self.hexes:
            y = np.asarray(y)
            return (y + self.pad) * self.pw + (np.asarray(x) - (y >> 1) + self.skew)
        return (np.asarray(y) + self.pad) * self.pw + (np.asarray(x) + self.pad)

    def xy(self, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Padded flat index → tank coordinates (x, y) (int64; every tick's frame: looked up in two
        tables shared by every tank of this shape, up to :data:`_XY_TABLE_CELLS` padded cells)."""
        if self.ph * self.pw <= _XY_TABLE_CELLS:
            tx, ty = _xy_tables(self.pw, self.ph, self.pad, self.skew)
            return tx[cell], ty[cell]
        y, x = np.divmod(np.asarray(cell), self.pw)
        y = y - self.pad
        return (x + (y >> 1) - self.skew if self.hexes else x - self.pad), y

    def view_offsets(self) -> np.ndarray:
        """Flat offsets of the (2r+1)² view window, row by row, centre included (a hexagonal
        tank's: the hexes within r steps, row by row: mirofish/grid.py)."""
        if self.hexes:
            from .grid import HEX

            u, v = HEX.window_cells(self.pad)
            hexes: np.ndarray = (v * self.pw + u).astype(np.int32)
            return hexes
        r = self.pad
        dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
        offsets: np.ndarray = (dy * self.pw + dx).ravel().astype(np.int32)
        return offsets

    def tank_terrain(self) -> np.ndarray:
        """Unpadded (height, width) terrain codes."""
        p = self.pad
        if self.hexes:
            y, x = np.mgrid[0 : self.height, 0 : self.width]
            codes: np.ndarray = self.terrain[self.cell(x, y)]
            return codes
        return self.terrain.reshape(self.ph, self.pw)[p : p + self.height, p : p + self.width]

    # ------------------------------------------------------------ food

    def has_food(self) -> np.ndarray:
        has: np.ndarray = self.food_born != NO_FOOD
        return has

    def food_cells(self) -> np.ndarray:
        return np.flatnonzero(self.food_born != NO_FOOD)

    def spawn_food(self, rng: np.random.Generator, tick: int) -> int:
        """Drop new food: Binomial(open cells, spawn_rate) items, placed by open-water weight.

        A draw that lands on a cell already holding food is lost (the cell keeps one item).
        Returns the number of items that appeared.
        """
        n = int(rng.binomial(self.open_cells.size, self.spawn_rate)) if self.spawn_rate else 0
        if n == 0:
            return 0
        picks = self.open_cells[np.searchsorted(self._spawn_cdf, rng.random(n), side="right")]
        picks = picks[self.food_born[picks] == NO_FOOD]
        if picks.size > 1:  # two draws may land on one cell (np.unique costs more than the rest)
            picks = np.unique(picks)
        self.food_born[picks] = tick
        return int(picks.size)

    def feed_compiled(self, k: Any, rng: np.random.Generator, tick: int) -> tuple[int, int]:
        """:meth:`spawn_food` then :meth:`rot_food` with the compiled tick ``k`` (_tick.food):
        the same draws, picks and rot. Returns (spawned, rotted)."""
        n = int(rng.binomial(self.open_cells.size, self.spawn_rate)) if self.spawn_rate else 0
        draws = rng.random(n) if n else _NO_DRAWS
        if self.oldest_food is None or self._ring_at[1] + n > self._ring.shape[0]:  # rebuilt from the grid
            need = int(np.count_nonzero(self.food_born != NO_FOOD)) + n
            full = self.oldest_food is not None  # (the ring also holds the eaten food's entries until
            if need > self._ring.shape[0] or full:  # their rot tick: a full one is doubled, not compacted)
                self._ring = np.zeros((max(64, 2 * need, 2 * self._ring.shape[0] if full else 0), 2), np.int32)
            self.oldest_food = None
        spawned, rotted, self.oldest_food = k.food(self.food_born, self.open_cells, self._spawn_cdf, draws, tick,
                                                   self.rot_ticks, self.oldest_food, self.spawn_index, self._ring,
                                                   self._ring_at)
        return int(spawned), int(rotted)

    def rot_food(self, tick: int) -> int:
        """Remove food older than ``rot_ticks``; returns how many rotted."""
        cells = np.flatnonzero((self.food_born != NO_FOOD) & (self.food_born <= tick - self.rot_ticks))
        self.food_born[cells] = NO_FOOD
        return int(cells.size)

    def carrying_capacity(self, fish_drain_per_tick: int) -> float:
        """How many fish the expected food supply feeds if every item is eaten (docs/tank.md, "Carrying capacity")."""
        supply = self.open_cells.size * self.spawn_rate * self.food_energy
        return supply / fish_drain_per_tick if fish_drain_per_tick else float("inf")


# ---------------------------------------------------------------- terrain generation


def _grow_plants(tank: np.ndarray, m: int, patches: int, tallest: int, rng: np.random.Generator) -> None:
    """Plant patches: clumps of stems rising from the floor."""
    h, w = tank.shape
    floor = h - m - 1
    inner_w = w - 2 * m
    for _ in range(patches):
        width = int(rng.integers(2, 5))
        if inner_w <= width + 4:
            return
        x0 = int(rng.integers(m + 2, w - m - 2 - width + 1))
        for x in range(x0, x0 + width):
            stem = int(rng.integers(max(1, tallest // 3), tallest + 1))
            top = max(m + 2, floor - stem + 1)
            tank[top : floor + 1, x] = PLANT


def _place_rocks(tank: np.ndarray, m: int, rocks: int, rng: np.random.Generator) -> None:
    """Rocks: small rough blobs anywhere in the open water."""
    h, w = tank.shape
    if w - 2 * m < 10 or h - 2 * m < 10:
        return
    for _ in range(rocks):
        cx = int(rng.integers(m + 3, w - m - 3))
        cy = int(rng.integers(m + 3, h - m - 3))
        radius = int(rng.integers(1, 3))
        for dy in range(-radius, radius + 1):
            for dx in range(-radius, radius + 1):
                if dx * dx + dy * dy <= radius * radius + int(rng.integers(0, 2)) and tank[cy + dy, cx + dx] == WATER:
                    tank[cy + dy, cx + dx] = ROCK


def _seal_pockets(tank: np.ndarray) -> None:
    """Fill water cut off from the main body (a fish born there could never leave): the largest
    4-connected body of water stays (the first in row-major order on a tie), the rest is rock.
    The compiled tick's union-find when it is built (linear in the grid: 1,000×600 in a few
    milliseconds), else a flood fill."""
    k = kernel.compiled_tick()
    if k is not None:
        water = tank == WATER
        h, w = tank.shape
        idx = np.arange(h * w, dtype=np.int64).reshape(h, w)
        across, down = water[:, :-1] & water[:, 1:], water[:-1, :] & water[1:, :]
        i = np.concatenate([idx[:, :-1][across], idx[:-1, :][down]])
        j = np.concatenate([idx[:, 1:][across], idx[1:, :][down]])
        labels = np.empty(h * w, np.int64)
        k.components(h * w, i, j, labels)
        labels = labels.reshape(h, w)
        bodies = np.bincount(labels[water], minlength=h * w)
        if np.count_nonzero(bodies) > 1:
            tank[(labels != int(np.argmax(bodies))) & water] = ROCK
        return
    water = tank == WATER
    label = np.zeros(tank.shape, np.int32)
    sizes = []
    h, w = tank.shape
    for start in zip(*np.nonzero(water)):
        if label[start]:
            continue
        sizes.append(0)
        lab = len(sizes)
        stack = [start]
        label[start] = lab
        while stack:
            y, x = stack.pop()
            sizes[-1] += 1
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= ny < h and 0 <= nx < w and water[ny, nx] and not label[ny, nx]:
                    label[ny, nx] = lab
                    stack.append((ny, nx))
    if len(sizes) > 1:
        keep = int(np.argmax(sizes)) + 1
        tank[(label != keep) & water] = ROCK


def _open_water_weights(padded: np.ndarray, bias: float) -> np.ndarray:
    """Spawn weight per cell: low next to glass/plants/rocks, 1 from three cells away."""
    obstacle = padded != WATER
    dist = np.full(padded.shape, 4, np.int8)
    ring = obstacle.copy()
    for d in range(1, 4):
        grown = ring.copy()
        grown[1:, :] |= ring[:-1, :]
        grown[:-1, :] |= ring[1:, :]
        grown[:, 1:] |= ring[:, :-1]
        grown[:, :-1] |= ring[:, 1:]
        newly = grown & ~ring
        dist[newly & (dist == 4)] = d
        ring = grown
    openness = (np.minimum(dist, 4) - 1) / 3.0  # 0 next to an obstacle … 1 far away
    return (1.0 - bias) + bias * openness
