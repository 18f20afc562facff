"""A recording as one self-contained HTML file: the player and the run in it (docs/web.md).

``python run.py export REC --html FILE [--from T] [--to T] [--overwrite]``

The file holds the player (plain JavaScript and a canvas, no library, nothing loaded from
anywhere: it plays from disk with the network off) and the run between the two ticks: every
fish's position, heading, energy and presence at every tick, the food, the tank's walls, rocks
and plants, the groups, the decisions with their plans and thoughts, and the metric samples —
packed as typed arrays, deflated and base64-encoded (the browser inflates them with its own
``DecompressionStream``). Its frames are the replay's states, tick for tick (the states come from
re-simulating the recording, checked against its hashes as ``replay`` checks them).

The page exposes ``window.mirofish`` (``ready``, ``tick()``, ``seek(t)``, ``state(t)``,
``follow(fish)``) for a script or a test to read what it shows.
"""

from __future__ import annotations

import base64
import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..observe.paths import check_output
from ..observe.recording import Recording, RecordingError
from ..snapshot import take_terrain

PLAYER = Path(__file__).resolve().parent.parent / "web" / "player.html"
LIMIT_BYTES = 50_000_000  # an exported file past this is refused before any work (say --from/--to)
_BYTES_PER_FISH_TICK = 1.2  # deflated position, heading, energy and presence: the estimate's rate (measured)
METRIC_KEYS = ("schooling_degree", "mean_energy", "largest_cluster", "school_size", "polarization",
               "action_entropy", "conflict_rate")


def metric_formats() -> dict[str, str]:
    """Each of :data:`METRIC_KEYS`' format, the metric table's (``Metric.fmt``: "{:.0f} fish",
    "{:.1%}" …), so the player shows "4 fish" where the window does, not "4.000"."""
    from ..observe.metrics import METRICS

    return {m.key: m.fmt for m in METRICS if m.key in METRIC_KEYS}


def metric_labels() -> dict[str, str]:
    """Each of :data:`METRIC_KEYS`' label, the metric table's (``Metric.label``: "largest school"
    for ``school_size``), so the player names a figure as the window's HUD does."""
    from ..observe.metrics import METRICS

    return {m.key: m.label for m in METRICS if m.key in METRIC_KEYS}


class HtmlExportError(RecordingError):
    """An HTML export that cannot be written (one line)."""


def estimate_bytes(ticks: int, fish: int, decisions: int = 0) -> int:
    """The exported file's size, estimated before any work (the states dominate)."""
    return int(200_000 + ticks * fish * _BYTES_PER_FISH_TICK + decisions * 40)


def _pack(arrays: list[np.ndarray]) -> tuple[str, list[dict[str, Any]]]:
    """The arrays deflated into one base64 string, and where each lies in it (name-free: by order)."""
    parts, layout, at = [], [], 0
    for a in arrays:
        b = np.ascontiguousarray(a).tobytes()
        layout.append({"type": str(a.dtype), "offset": at, "length": int(a.size)})
        parts.append(b)
        at += len(b)
        pad = (-at) % 8  # every view aligned for its typed array
        parts.append(b"\0" * pad)
        at += pad
    return base64.b64encode(zlib.compress(b"".join(parts), 9)).decode("ascii"), layout


def _states(rec: Recording, t0: int, t1: int) -> dict[str, Any]:
    """Every fish's state at ticks t0..t1 (inclusive) and the food, by re-simulating the recording."""
    from .replay import ReplaySession

    session = ReplaySession(rec)
    try:
        session.seek(t0)
        if session.tick != t0:
            raise HtmlExportError(f"{rec.path}: replay does not reach tick {t0} (it stops at {session.tick})")
        w = session.world
        n = w.school.n
        frames = t1 - t0 + 1
        x = np.zeros((frames, n), np.uint16)
        y = np.zeros((frames, n), np.uint16)
        heading = np.zeros((frames, n), np.uint8)
        energy = np.zeros((frames, n), np.uint8)
        present = np.zeros((frames, n), np.uint8)
        food_counts = np.zeros(frames, np.uint32)
        food: list[np.ndarray] = []
        top = max(1, int(w.top_energy))
        for k in range(frames):
            if k:
                before = session.tick
                if session.step() is None or session.tick != before + 1:
                    raise HtmlExportError(f"{rec.path}: replay stops at tick {before} (the recording ends or "
                                          f"leaves its states there); export --to {before}")
            v = session.view()
            x[k], y[k] = v.x, v.y
            heading[k] = v.heading
            energy[k] = np.clip(v.energy.astype(np.int64) * 100 // top, 0, 100)
            present[k] = 1 if v.present is None else v.present
            cells = np.stack([v.food_x, v.food_y], axis=1).astype(np.uint16).ravel()
            food_counts[k] = cells.size // 2
            food.append(cells)
        terrain = take_terrain(w)
        traits = w.school.traits.copy()
        return {"x": x, "y": y, "heading": heading, "energy": energy, "present": present,
                "food_counts": food_counts, "food": np.concatenate(food) if food else np.zeros(0, np.uint16),
                "terrain": terrain, "traits": traits, "n": n, "max_energy": top / 100}
    finally:
        session.close()


def _parent_states(rec: Recording, t0: int, t1: int) -> tuple[dict[str, Any] | None, str]:
    """A fork's parent's states over the same ticks (its recording, named by the fork's header,
    opened read-only like any recording), or None and why not."""
    parent = rec.header.get("parent")
    if rec.header.get("fork_tick") is None or not isinstance(parent, str):
        return None, ""
    try:
        prec = Recording(Path(parent))
        if prec.config.fish.slots != rec.config.fish.slots or not prec.first_tick <= t0 or prec.last_tick < t1:
            return None, f"its parent {Path(parent).name} does not cover ticks {t0}..{t1} of these fish"
        return _states(prec, t0, t1), ""
    except (RecordingError, OSError, ValueError) as exc:
        return None, f"its parent cannot be read ({str(exc)[:120]})"


def recorded_decisions(rec: Recording, t0: int, t1: int) -> list[list[Any]]:
    """Each decision applied in t0..t1: [tick, fish, plan in words, thought, tier, status]."""
    from .tables import decisions_table

    d = decisions_table(rec, t0, t1 + 1)
    return [[int(t), int(f), str(p or ""), str(th or ""), str(tier or ""), str(st or "")]
            for t, f, p, th, tier, st in zip(d["tick"], d["fish"], d["plan"], d["thought"], d["tier"], d["status"])]


def recorded_metrics(rec: Recording, t0: int, t1: int) -> dict[str, list[Any]]:
    from .tables import metrics_table

    m = metrics_table(rec, t0, t1 + 1)
    out: dict[str, list[Any]] = {"tick": [int(t) for t in m.get("tick", [])]}
    for key in METRIC_KEYS:
        if key in m:
            out[key] = [None if v is None or (isinstance(v, float) and v != v) else round(float(v), 4)
                        for v in m[key]]
    return out


def export_html(path: str | os.PathLike[str], out: str | os.PathLike[str], t0: int | None = None,
                t1: int | None = None, overwrite: bool = False, limit_bytes: int = LIMIT_BYTES) -> dict[str, Any]:
    """Write recording ``path`` (ticks ``t0``..``t1``) as one self-contained HTML file ``out``."""
    start = time.perf_counter()
    target = check_output(out, (path,), overwrite, "HTML file")
    rec = Recording(Path(path))  # (a recording of another scene is refused here, in one line)
    first, last = rec.first_tick, rec.last_tick
    a = first if t0 is None else t0
    b = last if t1 is None else min(t1, last)
    if not first <= a < b:
        raise HtmlExportError(f"{path}: --from {a} --to {b}: the recording holds ticks {first}..{last}")
    n = rec.config.fish.slots
    guess = estimate_bytes(b - a + 1, n)
    if guess > limit_bytes:
        raise HtmlExportError(f"{path}: ticks {a}..{b} of {n} fish would make an HTML file of about "
                              f"{guess / 1e6:.0f} MB (more than {limit_bytes / 1e6:.0f} MB): cut it with --from/--to")
    states = _states(rec, a, b)
    arrays = [states["x"], states["y"], states["heading"], states["energy"], states["present"],
              states["food_counts"], states["food"], states["traits"].astype(np.uint8)]
    ghost, why = _parent_states(rec, a, b)
    if ghost is not None:  # a fork: where the parent's fish are, drawn as rings (as the window does)
        arrays += [ghost["x"], ghost["y"], ghost["present"]]
    data, layout = _pack(arrays)
    cfg = rec.config
    groups = [{"name": g.name, "colour": g.colour, "hunts": bool(g.hunts), "mark": g.mark} for g in cfg.fish.groups]
    meta = {
        "format": 1, "title": Path(path).name, "seed": cfg.seed, "t0": a, "t1": b, "n": states["n"],
        "width": cfg.world.width, "height": cfg.world.height, "terrain": states["terrain"],
        "tick_seconds": cfg.world.tick_seconds, "groups": groups,
        "group_of": cfg.fish.group_of() if cfg.fish.groups else [],
        "radius": cfg.perception.radius, "sight": cfg.view_radii() or [],  # (the followed fish's square of view)
        "grid": cfg.world.grid,  # (a hexagonal tank: its odd rows half a cell right, six headings)
        "fork": {"tick": rec.header.get("fork_tick"), "fish": rec.header.get("fork_fish"),
                 "action": rec.header.get("fork_action"), "rings": ghost is not None, "why_no_rings": why}
        if rec.header.get("fork_tick") is not None else None,
        "layout": layout, "decisions": recorded_decisions(rec, a, b), "metrics": recorded_metrics(rec, a, b),
        "formats": metric_formats(), "labels": metric_labels(),
    }
    page = PLAYER.read_text(encoding="utf-8")
    # every "<" of the run's own text (thoughts, plans, the file's name) escaped inside its JSON
    # strings, so none can end or re-open the page's <script> (e.g. "<!--<script" or "</script>")
    meta_text = json.dumps(meta, separators=(",", ":")).replace("<", "\\u003c")
    html = page.replace("MIROFISH_DATA", data, 1).replace("/*MIROFISH_META*/null", meta_text, 1)
    if len(html) > limit_bytes:  # (the estimate counts the states; a run's thoughts can be long)
        raise HtmlExportError(f"{path}: ticks {a}..{b} make an HTML file of {len(html) / 1e6:.0f} MB (more "
                              f"than {limit_bytes / 1e6:.0f} MB): cut it with --from/--to")
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        part.write_text(html, encoding="utf-8")
        os.replace(part, target)
    finally:
        if part.exists():
            part.unlink()
    return {"html": str(target), "from": a, "to": b, "fish": states["n"], "bytes": target.stat().st_size,
            "decisions": len(meta["decisions"]), "seconds": round(time.perf_counter() - start, 2)}
