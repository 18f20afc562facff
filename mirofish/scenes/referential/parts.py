"""The referential game's model as its session takes it (:class:`mirofish.session.referential.ReferentialParts`):
the scene's package hands its own parts to the session, which sits below the scenes and imports none."""

from __future__ import annotations

from ...session.referential import ReferentialParts
from .experiment import Experiment
from .game import GameConfig

PARTS = ReferentialParts(experiment=Experiment, config=GameConfig)
