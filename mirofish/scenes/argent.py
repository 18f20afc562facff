"""Argent signals shared by the scenes that carry them (the report chain, the negotiation).

Layer 1 anchors a message to its task: the task id, a hash of the goal the sender works to,
and the sender's checklist of constraints. The hash is robust to case, whitespace and
punctuation, so the same goal reworded by formatting hashes the same (the source's first
failure story: two agents looping on "goal mismatch" over a comma).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..brains.prompt import estimate_tokens


def goal_hash(text: str) -> str:
    """A goal's hash, robust to case, whitespace and punctuation (Argent layer 1)."""
    norm = " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
    return hashlib.blake2b(norm.encode(), digest_size=6).hexdigest()


def signal_tokens(signals: dict[str, Any]) -> int:
    """The (estimated) tokens a message's signals add, as they go on the wire (compact JSON)."""
    return estimate_tokens(json.dumps(signals, separators=(",", ":"))) if signals else 0


def wire(signals: dict[str, Any]) -> str:
    """Signals as the text block a message carries (the source's "structured label on the
    envelope"): one short line per layer, values only — ``L1 T01-0003 #c4a0129f | quarter_growth
    competitor`` — which is what the token share counts."""
    lines = []
    for name, body in sorted(signals.items()):
        parts = []
        for value in body.values():
            if isinstance(value, dict):
                parts.append(" ".join(f"{k}={' '.join(map(str, v)) if isinstance(v, list) else v}"
                                      for k, v in value.items()))
            elif isinstance(value, list):
                parts.append(" ".join(map(str, value)))
            else:
                parts.append(str(value))
        lines.append(f"{name.replace('layer', 'L')} " + " | ".join(parts))
    return "\n".join(lines)
