"""``serve``: watch (and, when allowed, steer) a live tank or a recording from a browser (docs/web.md).

``python run.py serve [REC] [live options] [--host 127.0.0.1] [--port 8765] [--speed S]``

One process runs the tank (a live session stepping on its own thread at ``--speed``, or a
recording replayed on demand) and serves the player page (``mirofish/web/player.html``, the same
page ``export --html`` writes, nothing loaded from elsewhere) and a WebSocket at ``/ws``: the page
is told the tank's shape once (``hello``: its size, walls, groups, the fish's traits — never a
key, a server address or any config), then receives binary frames — a whole one (every fish's
position, heading, energy and presence, and the food: :func:`encode_frame`), then deltas against
the frame it holds (:func:`delta_frame`) — and asks for what it shows: a past tick
(``seek``), a followed fish's plan, thought and memories (``fish``). A live tank keeps going;
its recent frames (``KEEP`` ticks) can be scrubbed. Each viewer gets the newest frame when it is
ready for one, at most ``FPS_CAP`` a second (a slow viewer, or a tank faster than a screen, skips
frames; nothing queues without bound), so the tank's speed does not depend on the viewers.

**Who may steer.** Bound to 127.0.0.1 by default, where every viewer may pause and change the
speed. Bound to any other address, steering needs the token (``MIROFISH_WEB_TOKEN``, or one made
and printed once at start): a page opened without it (``/#token=…``) watches but every
state-changing message is refused. A message over :data:`MAX_MESSAGE` bytes, or that is not a
JSON object with a known ``op``, is dropped with one log line.

Needs the optional extra ``web`` (Starlette and uvicorn).
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import ipaddress
import json
import secrets
import struct
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from ..fish.plans import NO_END
from ..fish.triggers import TRIGGER_NAMES
from ..observe.recording import RecordingError

PLAYER = Path(__file__).resolve().parent / "player.html"
MAX_MESSAGE = 4096  # bytes: a viewer's message past this is dropped (one log line)
KEEP = 3000  # a live tank's recent frames a viewer may scrub back to
FPS_CAP = 60  # frames a second sent to one viewer at most (a screen shows no more; the newest wins)
STEER_OPS = ("pause", "resume", "speed", "fork", "back")  # what changes the tank (the token's business off-loopback)
VIEW_OPS = ("seek", "live", "fish", "key")  # key: send me a whole frame (a page that lost track)


def _whole(value: Any) -> TypeGuard[int]:
    """A whole number a message may carry (not a bool, which JSON's true would make one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


KEY, DELTA = b"MFK1", b"MFD1"  # a binary message's first four bytes: a whole frame, or one against the last sent
KEY_EVERY = 600  # a viewer is sent a whole frame at least this often (frames), deltas between


def encode_frame(tick: int, view: Any, top: int, parent: Any = None) -> bytes:
    """One whole frame, little-endian: ``MFK1``; tick, fish, food count (uint32 each); x, y
    (uint16 a fish); heading, energy in percent, in the water (uint8 a fish); padding to even;
    food x, y (uint16); and for a fork, its parent's x, y (uint16 a fish) and in the water (uint8
    a fish). What the server keeps and seeks; a viewer is mostly sent :func:`delta_frame`'s."""
    n = len(view.x)
    present = np.ones(n, np.uint8) if view.present is None else np.asarray(view.present, np.uint8)
    energy = np.clip(np.asarray(view.energy, np.int64) * 100 // max(1, top), 0, 100).astype(np.uint8)
    food = np.stack([view.food_x, view.food_y], axis=1).astype("<u2").ravel()
    body = b"".join([KEY, struct.pack("<III", tick, n, food.size // 2), np.asarray(view.x, "<u2").tobytes(),
                     np.asarray(view.y, "<u2").tobytes(), np.asarray(view.heading, np.uint8).tobytes(),
                     energy.tobytes(), present.tobytes()])
    if len(body) % 2:
        body += b"\0"
    body += food.tobytes()
    if parent is not None:  # where the parent's fish are: the page rings the ones the fork moved
        there = np.ones(n, np.uint8) if parent.present is None else np.asarray(parent.present, np.uint8)
        body += np.asarray(parent.x, "<u2").tobytes() + np.asarray(parent.y, "<u2").tobytes() + there.tobytes()
    return body


class _Cursor:
    """Arrays read one after another from a frame's bytes (read-only views, no copies)."""

    def __init__(self, data: bytes, at: int):
        self.data, self.at = data, at

    def take(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype, count, self.at)
        self.at += out.nbytes
        return out


def whole_fields(frame: bytes) -> dict[str, Any]:
    """A whole frame's fields as arrays: tick, x, y, heading, energy, present, food ((k, 2)
    uint16) and parent (None, or x, y, present)."""
    if frame[:4] != KEY:
        raise ValueError("not a whole frame")
    tick, n, fc = struct.unpack_from("<III", frame, 4)
    c = _Cursor(frame, 16)
    out: dict[str, Any] = {"tick": tick, "x": c.take("<u2", n), "y": c.take("<u2", n),
                           "heading": c.take("u1", n), "energy": c.take("u1", n), "present": c.take("u1", n)}
    c.at += c.at % 2
    out["food"] = c.take("<u2", 2 * fc).reshape(-1, 2)
    out["parent"] = ({"x": c.take("<u2", n), "y": c.take("<u2", n), "present": c.take("u1", n)}
                     if c.at < len(frame) else None)
    return out


def _cells(food: np.ndarray) -> np.ndarray:
    """Food cells (x, y pairs) as one integer each."""
    cells: np.ndarray = food[:, 0].astype(np.int64) << 16 | food[:, 1]
    return cells


@functools.lru_cache(maxsize=16)  # viewers that hold the same frame share one delta (bytes hash once)
def delta_frame(base: bytes, frame: bytes) -> bytes | None:
    """``frame`` as a delta against ``base`` (both whole frames; the viewer holds ``base``), or
    None when the two do not line up (another fish count, rings on one side only, food cells
    given twice) or the delta is no smaller than the frame.

    Little-endian: ``MFD1``; tick, the base's tick, fish, has rings, food cells gone, food cells
    new, fish that jumped, parent fish that jumped (uint32 each); then for each field — x, y,
    heading, energy, in the water, and with rings the parent fish's x, y and in the water — a bit
    a fish (did it change; ceil(fish / 8) bytes, least significant bit first) followed by the
    changes of the fish that did, a byte each (x and y: a signed step; the others: the change
    modulo 256); then the fish that moved more than 127 cells either way (a young born far from
    where its room was kept, a seek), their x and y steps left out above: their indices (uint32),
    then their x and their y (uint16 each), and so for the parent's; then the food cells gone
    and the new ones (x, y uint16 each). A fish mostly moves one way a cell or none, rarely
    turns, and its energy moves a percent now and then; the food mostly stays."""
    a, b = whole_fields(base), whole_fields(frame)
    n = len(b["x"])
    if len(a["x"]) != n or (a["parent"] is None) != (b["parent"] is None):
        return None
    pairs = [(a, b)] + ([(a["parent"], b["parent"])] if b["parent"] is not None else [])
    steps, jumps = [], []
    for old, new in pairs:  # x and y as steps; a fish that went further is sent where it is
        dx, dy = new["x"].astype(np.int32) - old["x"], new["y"].astype(np.int32) - old["y"]
        far = (dx < -128) | (dx > 127) | (dy < -128) | (dy > 127)
        dx[far] = dy[far] = 0
        steps += [dx, dy]
        jumps.append(np.flatnonzero(far))
    gone = came = np.zeros(0, np.int64)
    if not np.array_equal(a["food"], b["food"]):  # (mostly it is: no set arithmetic then)
        old_cells, new_cells = _cells(a["food"]), _cells(b["food"])
        if len(np.unique(old_cells)) != len(old_cells) or len(np.unique(new_cells)) != len(new_cells):
            return None
        gone, came = np.setdiff1d(old_cells, new_cells), np.setdiff1d(new_cells, old_cells)
    rings = b["parent"] is not None
    parts = [DELTA, struct.pack("<IIIIIIII", b["tick"], a["tick"], n, rings, len(gone), len(came), len(jumps[0]),
                                len(jumps[1]) if rings else 0)]
    changes = [steps[0], steps[1], *((b[k] - a[k]).astype(np.uint8) for k in ("heading", "energy", "present"))]
    if rings:
        changes += [steps[2], steps[3], (b["parent"]["present"] - a["parent"]["present"]).astype(np.uint8)]
    for change in changes:  # which fish changed (a bit each), then by how much
        nonzero = change != 0
        parts += [np.packbits(nonzero, bitorder="little").tobytes(), change[nonzero].astype(np.int8).tobytes()]
    for (_, new), far in zip(pairs, jumps):
        parts += [far.astype("<u4").tobytes(), new["x"][far].astype("<u2").tobytes(),
                  new["y"][far].astype("<u2").tobytes()]
    for cells in (gone, came):
        parts.append(np.stack([cells >> 16, cells & 0xFFFF], axis=1).astype("<u2").tobytes())
    out = b"".join(parts)
    return out if len(out) < len(frame) else None


class FrameReader:
    """What a page does with the binary messages it is sent (the player's ``parseFrame``, in
    Python for tests and benches): each whole or delta frame to the whole frame's fields."""

    def __init__(self) -> None:
        self.last: dict[str, Any] | None = None

    def read(self, msg: bytes) -> dict[str, Any]:
        if msg[:4] == KEY:
            self.last = whole_fields(msg)
            return self.last
        if msg[:4] != DELTA or self.last is None:
            raise ValueError("a delta frame with no whole frame before it" if msg[:4] == DELTA else "not a frame")
        tick, base, n, rings, gone, came, jumped, pjumped = struct.unpack_from("<IIIIIIII", msg, 4)
        a = self.last
        if base != a["tick"] or n != len(a["x"]):
            raise ValueError(f"a delta against t{base}, but the last frame read is t{a['tick']}")
        take = _Cursor(msg, 36).take
        def changed(dtype: str) -> np.ndarray:  # a field's changes: its bits, then the changed fish's bytes
            bits = np.unpackbits(take("u1", (n + 7) // 8), count=n, bitorder="little").astype(bool)
            out = np.zeros(n, np.int32 if dtype == "i1" else np.uint8)
            out[bits] = take(dtype, int(bits.sum()))
            return out

        b: dict[str, Any] = {"tick": tick, "x": (a["x"] + changed("i1")).astype("<u2"),
                             "y": (a["y"] + changed("i1")).astype("<u2")}
        for k in ("heading", "energy", "present"):
            b[k] = (a[k] + changed("u1")).astype(np.uint8)
        b["parent"] = None
        if rings:
            p = a["parent"]
            b["parent"] = {"x": (p["x"] + changed("i1")).astype("<u2"), "y": (p["y"] + changed("i1")).astype("<u2"),
                           "present": (p["present"] + changed("u1")).astype(np.uint8)}
        for into, count in ((b, jumped), (b["parent"], pjumped)):  # the fish that went further: where they are
            far = take("<u4", count)
            if count:
                into["x"][far], into["y"][far] = take("<u2", count), take("<u2", count)
        lost = _cells(take("<u2", 2 * gone).reshape(-1, 2))
        kept = a["food"][~np.isin(_cells(a["food"]), lost)]
        b["food"] = np.concatenate([kept, take("<u2", 2 * came).reshape(-1, 2)])
        self.last = b
        return b


class Host:
    """The tank a server shows: a live session stepping on its own thread, or a recording."""

    def __init__(self, session: Any, live: bool, speed: float, log: Any = None):
        self.session, self.live = session, live
        self.recording_session: Any = None  # while a fork of a served recording runs: the recording's
        self.fork_label = ""
        self.steering = threading.Lock()  # one fork or back at a time, whichever page asks
        self._recording_metrics: dict[str, list[Any]] | None = None
        self.lock = threading.RLock()
        self.speed = float(speed)  # ticks a second (live)
        self.paused = False
        self.frames: OrderedDict[int, bytes] = OrderedDict()
        self.decisions: dict[int, list[tuple[int, str, str, str]]] = {}
        self.viewers: set[Viewer] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.ticks_done = 0
        self._newest = b""  # the live tank's newest frame, and whether the server's loop is to offer it
        self._push_due = False
        self._samples: deque[str] = deque()  # the HUD's samples the live tank made since the loop last ran
        self.log = log or (lambda line: print(f"mirofish serve: {line}", file=sys.stderr, flush=True))
        w = session.world
        self.top = int(w.top_energy)
        self.first = session.tick
        self.metrics: dict[str, list[Any]] = {"tick": []}  # the HUD's series (a recording's samples; live: pushed)
        if not live:
            self.first, self.last = session.recording.first_tick, session.recording.last_tick
            self._load_decisions()
            from ..session.html_export import recorded_metrics

            self.metrics = recorded_metrics(session.recording, self.first, self.last)
        self._store(session.tick, encode_frame(session.tick, session.view(), self.top))

    # ---- what a viewer is told once
    def hello(self) -> dict[str, Any]:
        w, cfg = self.session.world, self.session.cfg
        from ..session.html_export import metric_formats, metric_labels
        from ..snapshot import take_terrain

        return {"op": "hello", "live": self.live, "n": int(w.school.n), "width": cfg.world.width,
                "height": cfg.world.height, "terrain": take_terrain(w),
                "groups": [{"name": g.name, "colour": g.colour, "hunts": bool(g.hunts), "mark": g.mark}
                           for g in cfg.fish.groups],
                "group_of": cfg.fish.group_of() if cfg.fish.groups else [],
                "radius": cfg.perception.radius, "sight": cfg.view_radii() or [], "grid": cfg.world.grid,
                "traits": w.school.traits.astype(int).ravel().tolist(), "first": self.first, "last": self.now(),
                "tick_seconds": cfg.world.tick_seconds, "speed": self.speed, "paused": self.paused,
                "metrics": self.metrics, "formats": metric_formats(), "labels": metric_labels(),
                "fork": self.fork_label or None,
                "can_fork": not self.live or self.recording_session is not None}

    def now(self) -> int:
        return int(self.session.tick) if self.live else int(self.last)

    # ---- frames
    def _store(self, tick: int, frame: bytes) -> None:
        self.frames[tick] = frame
        self.frames.move_to_end(tick)
        while len(self.frames) > KEEP:
            self.frames.popitem(last=False)

    def frame(self, tick: int) -> bytes | None:
        """The frame of ``tick``: kept (live), or replayed to (a recording)."""
        with self.lock:
            if tick in self.frames:
                self.frames.move_to_end(tick)
                return self.frames[tick]
            if self.live or not self.first <= tick <= self.last:
                return None
            s = self.session
            if tick == s.tick + 1:
                s.step()
            else:
                s.seek(tick)
            if s.tick != tick:
                return None
            frame = encode_frame(tick, s.view(), self.top)
            self._store(tick, frame)
            return frame

    def _load_decisions(self) -> None:
        from ..session.html_export import recorded_decisions  # (what an exported page holds)

        for t, f, plan, thought, tier, _ in recorded_decisions(self.session.recording, self.first, self.last):
            self.decisions.setdefault(f, []).append((t, plan, thought, tier))

    def _note(self, frame: Any) -> None:
        """A live frame's applied decisions, kept per fish (what the follow panel shows)."""
        from ..brains.base import TIERS

        for batch in frame.applied:
            if batch.provisional or batch.goals is None:
                continue
            thoughts = batch.thoughts or [""] * len(batch.fish)
            words = self.session.plans.describe  # the tank's own plan table (its run's registry)
            for k, f in enumerate(batch.fish.tolist()):
                plan = words(int(batch.goals[k]), int(batch.params[k]), int(batch.horizons[k]))
                tier = TIERS[int(batch.tier[k])] if int(batch.tier[k]) < len(TIERS) else "?"
                mine = self.decisions.setdefault(f, [])
                mine.append((frame.tick, plan, str(thoughts[k] or ""), tier))
                if len(mine) > 200:
                    del mine[:100]

    # ---- the live tank's thread
    def run(self) -> None:
        next_at = time.perf_counter()
        while not self.stop.is_set():
            if self.paused:
                time.sleep(0.02)
                next_at = time.perf_counter()
                continue
            sample = None
            with self.lock:
                got = self.session.step()
                tick = self.session.tick
                frame = self._encode()
                self._store(tick, frame)
                if got is not None:
                    self._note(got)
                if tick % 10 == 0:  # the HUD: the metrics now, every 10 ticks
                    sample = self._sample(tick)
            self.ticks_done += 1
            if self.loop is not None:
                self._newest = frame  # the viewers are offered the newest frame (and the samples since)
                if sample is not None:  # when the server's loop next runs: one wake-up of it however many
                    self._samples.append(json.dumps(sample))  # ticks meanwhile
                if not self._push_due:
                    self._push_due = True
                    self.loop.call_soon_threadsafe(self._push)
            next_at += 1.0 / max(0.1, self.speed)
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            else:
                next_at = time.perf_counter()  # behind: no burst to catch up

    def _encode(self) -> bytes:
        s = self.session
        parent = s.parent.view() if self.recording_session is not None and s.parent.tick == s.tick else None
        return encode_frame(s.tick, s.view(), self.top, parent)

    def _sample(self, tick: int) -> dict[str, Any]:
        from ..session.html_export import METRIC_KEYS

        now = self.session.metrics_summary()
        values = {k: round(float(now[k]["current"]), 4) for k in METRIC_KEYS
                  if isinstance(now.get(k), dict) and "current" in now[k]}
        values["mean_energy"] = round(self.session.world.mean_energy(), 2)
        self.metrics["tick"].append(tick)
        for k, v in values.items():
            self.metrics.setdefault(k, [None] * (len(self.metrics["tick"]) - 1)).append(v)
        if len(self.metrics["tick"]) > KEEP // 10:
            for series in self.metrics.values():
                del series[:1]
        return {"op": "metrics", "tick": tick, "values": values}

    def _push_text(self, text: str) -> None:
        for v in list(self.viewers):
            v.texts.append(text)
            del v.texts[:-20]  # a viewer that reads none keeps only the newest
            v.ready.set()

    def _push(self) -> None:
        self._push_due = False
        while self._samples:  # (a deque: the tank's thread appends while this one takes, neither loses one)
            self._push_text(self._samples.popleft())
        frame = self._newest
        for v in list(self.viewers):
            if v.following_live:
                v.offer(frame)

    # ---- a followed fish
    def fish(self, fish: int, tick: int) -> dict[str, Any]:
        s = self.session
        if not _whole(fish) or not _whole(tick) or not 0 <= fish < s.world.school.n:
            return {"op": "fish", "fish": fish, "error": "no such fish"}
        mine = self.decisions.get(fish, [])
        at = [d for d in mine if d[0] <= tick]
        out: dict[str, Any] = {"op": "fish", "fish": fish, "tick": tick}
        if at:
            t, plan, thought, tier = at[-1]
            out.update(plan=plan, decided=t, thought=thought, tier=tier,
                       before=[[d[0], d[1], d[2]] for d in at[-6:-1]][::-1])
        with self.lock:
            if not self.live and self.first <= tick <= self.last and s.tick != tick:
                s.seek(tick)
            if s.tick == tick and not s.world.school.absent[fish]:
                school = s.world.school
                p = s.world.perceive(fish)
                out["memories"] = list(p.memories[-6:])
                out["persona"] = school.persona[fish]
                end, trigger = int(school.plan_end[fish]), int(school.plan_trigger[fish])
                out["ends"] = end if end != NO_END else None  # the standing plan's horizon
                out["asking_again"] = TRIGGER_NAMES[trigger].replace("_", " ") if trigger >= 0 else None
                drift = s.drift(fish)  # how much its newest summary still sounds like its persona
                out["drift"] = [round(drift[0], 3), drift[1]] if drift is not None else None
        return out

    # ---- a fork of a served recording: the branch runs live, the recording's fish as rings
    def fork(self, msg: dict[str, Any]) -> dict[str, Any]:
        from ..session.replay import fork_plan, fork_recording

        fish, tick, plan = msg.get("fish"), msg.get("tick"), msg.get("plan")
        if self.live and self.recording_session is None:
            return {"op": "refused", "why": "fork: a live tank is forked in the window (serve forks a recording)"}
        if not (_whole(fish) and _whole(tick) and isinstance(plan, str) and 0 < len(plan) <= 80):
            return {"op": "refused", "why": "fork: needs a fish, a tick and a plan such as 'explore east 30'"}
        left = self.recording_session is not None
        if left:  # a fork of the fork's recording: what would refuse it, refused first — the fork running goes on
            try:
                fork_plan(self.recording_session.recording, tick, fish, plan)
            except (ValueError, OverflowError, RecordingError) as exc:
                return {"op": "refused", "why": f"fork: {str(exc)[:200]}"}
            self._leave()
        with self.lock:
            recording = self.session
            try:
                branch = fork_recording(recording.recording, tick, fish, plan)
            except (ValueError, OverflowError, RecordingError) as exc:  # (after leaving: the pages are told)
                return {"op": "refused", "why": f"fork: {str(exc)[:200]}", "left": left}
            self.recording_session = recording
            self._recording_metrics, self.metrics = self.metrics, {"tick": []}  # the branch's own HUD
            self.session, self.live = branch, True
            self.fork_label = f"fish {fish} at t{tick}: {branch.label}"
            self.frames.clear()
            self.decisions = {f: [d for d in ds if d[0] < tick] for f, ds in self.decisions.items()}
            self.first = tick
            self._store(branch.tick, self._encode())
            self.paused = False
        self._start_thread()
        return {"op": "forked", "fork": self.fork_label, "tick": tick}

    def back(self) -> dict[str, Any]:
        """From a fork back to the recording it forked."""
        if self.recording_session is None:
            return {"op": "refused", "why": "back: no fork to leave"}
        self._leave()
        return {"op": "back"}

    def _leave(self) -> None:
        """Stop the fork's thread and show the recording again (under ``steering``)."""
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=10)
        with self.lock:
            self.session.close()
            self.session, self.recording_session, self.live = self.recording_session, None, False
            self.metrics = self._recording_metrics or {"tick": []}
            self._recording_metrics = None
            self.fork_label = ""
            self.frames.clear()
            self.decisions = {}
            self.first, self.last = self.session.recording.first_tick, self.session.recording.last_tick
            self._load_decisions()

    def _start_thread(self) -> None:
        if self.thread is not None and self.thread.is_alive():
            return
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="mirofish-tank", daemon=True)
        self.thread.start()

    # ---- steering
    def steer(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg["op"]
        if op in ("fork", "back"):
            with self.steering:  # two pages' fork and back never interleave
                return self.fork(msg) if op == "fork" else self.back()
        if not self.live:
            return {"op": "refused", "why": "a recording is not steered (its page plays it at its own speed)"}
        if op == "pause":
            self.paused = True
        elif op == "resume":
            self.paused = False
        elif op == "speed":
            value = msg.get("value")
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.1 <= float(value) <= 1000:
                return {"op": "refused", "why": "speed: ticks a second, 0.1 to 1000"}
            self.speed = float(value)
        return {"op": "steered", "paused": self.paused, "speed": self.speed}


class Viewer:
    """One connected page: the newest frame waiting for it (at most one), and what it follows."""

    def __init__(self, ws: Any, may_steer: bool):
        self.ws, self.may_steer = ws, may_steer
        self.following_live = True
        self.pending: bytes | None = None
        self.texts: list[str] = []  # metric samples waiting for it (bounded by Host._push_text)
        self.hello: str | None = None  # the tank it shows now, after a fork or a return: sent first, never dropped
        self.ready = asyncio.Event()
        self.sent = 0
        self.dropped = 0
        self.base: bytes | None = None  # the whole frame the page holds last (what a delta is against)
        self.since_key = 0

    def tell(self, hello: dict[str, Any], first: bytes | None, live: bool) -> None:
        """The page shows another tank now (a fork, a return): it is told so before anything of
        that tank, however slow it reads — the newest hello wins, the samples queued (the old
        tank's) are dropped, and its next frame is whole."""
        self.following_live = live
        self.hello, self.texts = json.dumps(hello), []
        self.pending, self.base = None, None
        if first is not None:
            self.offer(first)
        self.ready.set()

    def offer(self, frame: bytes) -> None:
        if self.pending is not None:
            self.dropped += 1  # the viewer is behind: the newer frame replaces the one it did not take
        self.pending = frame
        self.ready.set()

    async def pump(self) -> None:
        while True:
            await self.ready.wait()
            self.ready.clear()
            hello, texts, self.hello, self.texts = self.hello, self.texts, None, []
            if hello is not None:
                await self.ws.send_text(hello)
            for text in texts:
                await self.ws.send_text(text)
            frame, self.pending = self.pending, None
            if frame is not None:
                out = (delta_frame(self.base, frame) if self.base is not None and self.since_key < KEY_EVERY - 1
                       else None)
                self.since_key = self.since_key + 1 if out is not None else 0
                self.base = frame  # (before the send: a hello meanwhile resets it to whole)
                await self.ws.send_bytes(out or frame)
                self.sent += 1
                await asyncio.sleep(1.0 / FPS_CAP)  # frames meanwhile: only the newest is sent next


def _message(host: Host, raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """A viewer's message as a JSON object with a known op, or None (dropped, one log line)."""
    text = raw.get("text")
    data = text.encode() if text is not None else (raw.get("bytes") or b"")
    if len(data) > MAX_MESSAGE:
        host.log(f"dropped a message of {len(data)} bytes (at most {MAX_MESSAGE})")
        return None
    try:
        msg = json.loads(data)
        if not isinstance(msg, dict) or msg.get("op") not in (*STEER_OPS, *VIEW_OPS):
            raise ValueError(f"unknown op {str(msg.get('op') if isinstance(msg, dict) else msg)[:40]!r}")
    except (ValueError, RecursionError) as exc:
        host.log(f"dropped a malformed message ({type(exc).__name__}: {str(exc)[:80]})")
        return None
    return msg


async def _steer(host: Host, viewer: Viewer, msg: dict[str, Any]) -> None:
    """A state-changing message: refused without the right to steer; after a fork or a return,
    every page is told the tank it now shows, by its own sender (one that reads nothing holds up
    no other), and its next frame is whole."""
    if not viewer.may_steer:
        await viewer.ws.send_text(json.dumps({"op": "refused", "why": "watching only: this page has no token "
                                                                      "(serve printed it)"}))
        return
    answer = await asyncio.to_thread(host.steer, msg)
    left = answer.pop("left", False)  # (a fork refused after the one running was left: the recording shows again)
    await viewer.ws.send_text(json.dumps(answer))
    if answer["op"] not in ("forked", "back") and not left:
        return
    hello = host.hello()
    first = host.frame(host.now()) if not host.live else host.frames.get(host.session.tick)
    for v in list(host.viewers):
        v.tell({**hello, "may_steer": v.may_steer}, first, host.live)


async def _view(host: Host, viewer: Viewer, msg: dict[str, Any]) -> None:
    """What a page asks to see: the live tank, a whole frame (it lost track), a tick, a fish."""
    op = msg["op"]
    if op == "live":
        viewer.following_live = True
    elif op == "key":
        base, viewer.base = viewer.base, None
        if base is not None and viewer.pending is None:
            viewer.offer(base)
    elif op == "seek":
        t = msg.get("tick")
        if not _whole(t):
            host.log("dropped a seek without a whole-number tick")
            return
        viewer.following_live = host.live and t >= host.now()
        frame = await asyncio.to_thread(host.frame, t)
        if frame is not None:
            viewer.offer(frame)
    elif op == "fish":
        f, t = msg.get("fish"), msg.get("tick")
        if _whole(f) and _whole(t):
            await viewer.ws.send_text(json.dumps(await asyncio.to_thread(host.fish, f, t)))


def app(host: Host, token: str | None) -> Any:
    """The Starlette application: the page at ``/``, the tank at ``/ws``."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    page = PLAYER.read_text(encoding="utf-8").replace("MIROFISH_DATA", "")

    async def index(request: Any) -> HTMLResponse:
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def ws_endpoint(ws: WebSocket) -> None:
        given = ws.query_params.get("token", "")
        may_steer = token is None or (bool(given) and hmac.compare_digest(given.encode(), token.encode()))
        await ws.accept()
        viewer = Viewer(ws, may_steer)
        host.viewers.add(viewer)
        pump = asyncio.create_task(viewer.pump())
        try:
            await ws.send_text(json.dumps({**host.hello(), "may_steer": may_steer}))
            first = host.frame(host.now()) if not host.live else host.frames.get(host.session.tick)
            if first is not None:
                viewer.offer(first)
            while True:
                raw = await ws.receive()
                if raw.get("type") == "websocket.disconnect":
                    break
                msg = _message(host, raw)
                if msg is None:
                    continue
                if msg["op"] in STEER_OPS:
                    await _steer(host, viewer, msg)
                else:
                    await _view(host, viewer, msg)
        except WebSocketDisconnect:
            pass
        finally:
            host.viewers.discard(viewer)
            pump.cancel()

    return Starlette(routes=[Route("/", index), WebSocketRoute("/ws", ws_endpoint)])


def serve(host: Host, bind: str, port: int, token: str | None, ready: Any = None) -> None:
    """Run the server until interrupted (``ready``: called with the bound port once listening)."""
    import uvicorn

    # (uvicorn closes a connection past ws_max_size; ours are dropped, logged, at MAX_MESSAGE)
    config = uvicorn.Config(app(host, token), host=bind, port=port, log_level="warning", ws_max_size=1 << 20,
                            lifespan="off")
    server = uvicorn.Server(config)

    async def main() -> None:
        host.loop = asyncio.get_running_loop()
        if host.live:
            host._start_thread()
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if ready is not None and server.started:
            sock = server.servers[0].sockets[0]
            ready(sock.getsockname()[1])
        await task

    try:
        asyncio.run(main())
    finally:
        host.stop.set()
        if host.thread is not None:
            host.thread.join(timeout=5)
        if host.recording_session is not None:
            host.recording_session.close()


def make_token(bind: str) -> str | None:
    """The steering token: none on a loopback address; else ``MIROFISH_WEB_TOKEN`` or a new one."""
    import os

    if is_loopback(bind):
        return None
    return os.environ.get("MIROFISH_WEB_TOKEN") or secrets.token_urlsafe(18)
