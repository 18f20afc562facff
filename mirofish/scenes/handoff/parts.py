"""The report chain's model as its session takes it (:class:`mirofish.session.handoff.HandoffParts`):
the scene's package hands its own parts to the session, which sits below the scenes and imports none."""

from __future__ import annotations

from ...session.handoff import HandoffParts
from .brief import READING_CODES, draw_brief
from .chain import ARMS, FLOW, Chain

PARTS = HandoffParts(chain=Chain, brief=draw_brief, arms=ARMS, flow=FLOW, reading_codes=READING_CODES)
