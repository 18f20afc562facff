"""A recorded reef: a folder with each tank's recording, the migration log and the summary.

``<name>.db`` per tank (a normal recording: ``run.py replay DIR/<name>.db`` replays that tank
alone, its migrants' arrivals and departures included, as the interventions they were),
``migrations.jsonl`` (one crossing per line: leave and arrival ticks, from, to, the fish's id
in the tank it left, the corridor) and ``reef.json`` (the reef file, the tick reached, every
tank's state hash and the reef hash; ``complete`` false while the reef runs). Both are
rewritten at every exchange, after the tanks' recordings committed through it, so a reef
killed on the way leaves a folder that replays to its last exchange. :func:`replay_reef`
replays every tank to that tick and checks the reef hash.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..observe.paths import kept_read_only, read_only
from .progress import save
from .run import Reef, ReefError
from .spec import ReefSpec


def prepare(folder: str | Path, overwrite: bool) -> Path:
    """The folder a reef records into: new or empty, or (``overwrite``) one a reef recorded before."""
    out = Path(folder)
    if out.exists():
        if not out.is_dir():
            raise ReefError(f"--record {out}: exists and is not a folder")
        known = {p.name for p in out.iterdir()}
        ours = (out / "reef.json").exists() or not known
        if known and not overwrite:
            raise ReefError(f"--record {out}: not empty; add --overwrite to replace a recorded reef there")
        if known and not ours:
            raise ReefError(f"--record {out}: holds something else than a recorded reef; choose another folder")
        replaced = [p for p in out.iterdir()
                    if p.suffix in (".db", ".jsonl", ".json") or p.name.endswith((".db-wal", ".db-shm"))]
        kept = [p for p in replaced if p.is_file() and read_only(p)]
        if kept:
            raise ReefError(f"--record {out}: {kept_read_only(str(kept[0]), 'folder')}")
        for p in replaced:
            p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    return out


def write(folder: Path, reef: Reef, summary: dict[str, Any]) -> None:
    """The finished reef's summary (see :func:`mirofish.reef.progress.save`)."""
    save(folder, reef, summary)


def replay_reef(folder: str | Path) -> dict[str, Any]:
    """Replay every tank of a recorded reef to the tick it reached; the reef hash again."""
    from ..observe.recording import RecordingError
    from ..session import ReplaySession

    src = Path(folder)
    try:
        saved = json.loads((src / "reef.json").read_text(encoding="utf-8"))
        spec = ReefSpec.model_validate(saved["spec"])
        log = [json.loads(line) for line in (src / "migrations.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    except FileNotFoundError as exc:
        raise ReefError(f"{src}: not a recorded reef ({Path(exc.filename).name} missing)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ReefError(f"{src}: a damaged reef.json or migrations.jsonl ({type(exc).__name__})") from None
    tick = int(saved["tick"])
    if saved.get("reef_hash") is None:
        raise ReefError(f"{src}: the reef stopped before its first exchange (tick {spec.interval}): nothing to replay")
    recorded = {t.get("name"): t.get("hash") for t in saved.get("tanks", []) if isinstance(t, dict)}
    h = hashlib.blake2b(digest_size=16)
    tanks = []
    for t in spec.tanks:
        try:
            r = ReplaySession(src / f"{t.name}.db")
        except RecordingError as exc:
            raise ReefError(f"tank {t.name}: {exc}") from None
        try:
            r.seek(tick)
            digest = r.state_hash()
        finally:
            r.close()
        h.update(digest.encode())
        tanks.append({"name": t.name, "hash": digest})
    for entry in log:
        h.update(json.dumps(entry, sort_keys=True).encode())
    again = h.hexdigest()
    differ = [t["name"] for t in tanks if recorded.get(t["name"]) not in (None, t["hash"])]
    return {"tick": tick, "complete": bool(saved.get("complete", True)), "tanks": tanks, "reef_hash": again,
            "recorded_reef_hash": saved["reef_hash"], "same": again == saved["reef_hash"], "differ": differ}
