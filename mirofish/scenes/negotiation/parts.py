"""The negotiation's model as its session takes it (:class:`mirofish.session.negotiation.NegotiationParts`):
the scene's package hands its own parts to the session, which sits below the scenes and imports none."""

from __future__ import annotations

from ...session.negotiation import NegotiationParts
from .dialogue import Bandit, Negotiation
from .recording import NegotiationReplay, session_seed, turn_record
from .world import Session

PARTS = NegotiationParts(negotiation=Negotiation, bandit=Bandit, deal=Session.draw, session_seed=session_seed,
                         replay=NegotiationReplay, turn_record=turn_record)
