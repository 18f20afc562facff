"""The reef's own part of its recording, written as it runs (mirofish/reef/record.py reads it).

Kept apart from the reef's runner so that the runner can write it at every exchange without an
import cycle; it needs only what a :class:`~mirofish.reef.run.Reef` holds (spec, tick, log,
figures, reef hash).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..config import redact_data


def _replace(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a kill during the write leaves the one before)."""
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def save(folder: Path, reef: Any, summary: dict[str, Any] | None = None) -> None:
    """The reef's part of its recording as of now: ``migrations.jsonl``, then ``reef.json`` (the
    commit point). Written at the start (tick 0, no exchange yet), at every exchange — after
    every tank's recording committed through it — and with the run's ``summary`` at the end
    (``complete``), so a reef killed on the way replays to its last exchange."""
    _replace(folder / "migrations.jsonl", "".join(json.dumps(e, sort_keys=True) + "\n" for e in reef.log))
    if summary is None:
        exchanged = bool(reef.figures)
        summary = {"tick": reef.tick, "complete": False,
                   "tanks": [{"name": t.name, "hash": reef.figures[i]["hash"]} for i, t in enumerate(reef.spec.tanks)]
                   if exchanged else [],
                   "reef_hash": reef.reef_hash() if exchanged else None}
    else:
        summary = {**summary, "complete": True}
    _replace(folder / "reef.json", json.dumps(redact_data({"spec": reef.spec.model_dump(), **summary}), indent=1))
