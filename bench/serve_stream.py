"""How fast does ``serve`` stream, and what do viewers cost the tank? (docs/web.md)

    python bench/serve_stream.py [--fish 1000] [--seconds 10] [--viewers 3] [--rounds 3]

Runs a live tank of ``--fish`` fish behind ``serve``'s server in this process (on 127.0.0.1, a
free port) at full speed (``--speed 1000`` ticks a second: as fast as it steps), then:

1. with no viewer, and 2. with ``--viewers`` WebSocket viewers connected (each reading every
   frame it is sent as the page does: whole frames and deltas against the last), in turn,
   ``--rounds`` times so that the machine's drift falls on both alike: the tank's ticks a
   second (medians), the ratio (the median of the rounds'), each viewer's frames a second, and
   the bytes a frame against a whole frame's;
3. a viewer of a tank paced at 30 ticks a second: its frames a second (the goal: ≥ 30) and bytes
   a frame (the size on the wire is smaller still where the socket's per-message deflate is on).

The viewers run in a separate process (so their decoding does not share this process's
interpreter lock with the tank), as a browser would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirofish.config import load_config
from mirofish.session import LiveSession
from mirofish.web.server import FrameReader, Host, serve


def start(fish: int, speed: float) -> tuple[Host, int]:
    host = Host(LiveSession(load_config(seed=3, **{"fish.count": fish})), True, speed, log=lambda line: None)
    got: list[int] = []
    threading.Thread(target=serve, args=(host, "127.0.0.1", 0, None, got.append), daemon=True).start()
    while not got:
        time.sleep(0.02)
    return host, got[0]


def viewers(port: int, count: int, seconds: float, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    import websockets

    async def one() -> tuple[int, int, int, int]:
        frames = sent = whole = deltas = 0
        reader = FrameReader()
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=1 << 24) as ws:
            json.loads(await ws.recv())
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                try:
                    msg = await asyncio.wait_for(ws.recv(), max(0.01, end - time.monotonic()))
                except TimeoutError:
                    break
                if isinstance(msg, bytes):
                    got = reader.read(msg)
                    frames, sent = frames + 1, sent + len(msg)
                    whole += 16 + 7 * len(got["x"]) + 4 * len(got["food"]) + 1  # as a whole frame
                    deltas += msg[:4] == b"MFD1"
        return frames, sent, whole, deltas

    async def all_of() -> list[tuple[int, int, int, int]]:
        return list(await asyncio.gather(*(one() for _ in range(count))))

    out.put(asyncio.run(all_of()))


def tank_rate(host: Host, seconds: float) -> float:
    a, t = host.ticks_done, time.perf_counter()
    time.sleep(seconds)
    return (host.ticks_done - a) / (time.perf_counter() - t)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fish", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--viewers", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3, help="alone and watched in turn, this many times")
    args = p.parse_args()
    host, port = start(args.fish, 1000.0)
    time.sleep(1.0)  # warm
    alone_runs, watched_runs, frames = [], [], []
    for _ in range(args.rounds):  # alone, then watched, in turn: the machine's drift hits both alike
        alone_runs.append(tank_rate(host, args.seconds))
        q: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
        proc = multiprocessing.Process(target=viewers, args=(port, args.viewers, args.seconds + 1, q))
        proc.start()
        time.sleep(1.0)
        watched_runs.append(tank_rate(host, args.seconds - 0.5))
        frames = q.get(timeout=120)
        proc.join()
    alone, watched = statistics.median(alone_runs), statistics.median(watched_runs)
    ratios = [round(w / a, 3) for a, w in zip(alone_runs, watched_runs)]
    host.stop.set()
    paced, port2 = start(args.fish, 30.0)
    q2: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    proc2 = multiprocessing.Process(target=viewers, args=(port2, 1, args.seconds, q2))
    proc2.start()
    one = q2.get(timeout=120)
    proc2.join()
    paced.stop.set()
    print(json.dumps({
        "fish": args.fish, "seconds": args.seconds,
        "tank_ticks_per_s_no_viewer": round(alone, 1),
        f"tank_ticks_per_s_{args.viewers}_viewers": round(watched, 1),
        "ratio": round(statistics.median(ratios), 3), "ratio_each_round": ratios,
        "frames_per_s_each_viewer_full_speed": [round(f[0] / (args.seconds + 1), 1) for f in frames],
        "bytes_per_frame_full_speed": [round(f[1] / max(1, f[0])) for f in frames],
        "whole_bytes_per_frame_full_speed": [round(f[2] / max(1, f[0])) for f in frames],
        "share_sent_as_deltas_full_speed": [round(f[3] / max(1, f[0]), 3) for f in frames],
        "frames_per_s_viewer_at_30_ticks_per_s": round(one[0][0] / args.seconds, 1),
        "bytes_per_frame_at_30_ticks_per_s": round(one[0][1] / max(1, one[0][0])),
        "whole_bytes_per_frame_at_30_ticks_per_s": round(one[0][2] / max(1, one[0][0])),
    }))


if __name__ == "__main__":
    main()
