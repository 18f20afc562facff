"""A kit for plug-in authors: does my brain, scene, metric or plan type keep MiroFish's contract?

As PettingZoo ships ``parallel_api_test`` for an environment, MiroFish ships one check per kind
of plug-in (docs/extending.md, "Check your plug-in"):

* :func:`check_brain` — your own brain (``FILE.py:NAME``, ``MODULE:NAME``, an entry point name,
  or the class, object or function itself);
* :func:`check_scene` — a scene of the registry (its name, ``"module:SPEC"``, or the
  :class:`~mirofish.scenes.registry.SceneSpec` itself);
* :func:`check_metric` — a metric (its key, ``"module:ATTR"``, or the
  :class:`~mirofish.observe.metrics.Metric` itself);
* :func:`check_plan_type` — a plan type of the running table (its name).

Each runs the plug-in through the paths a user takes — the command line (in this process,
:func:`mirofish.cli.main` with its arguments) and the session API: a short recorded run, its
replay compared by state hash, a second run of the same seed, a fork, an export of its tables,
and bad input that must come back as one line and exit code 2, never a traceback. Nothing of
MiroFish is stubbed (a metric or scene not installed is added to its table for the check's
duration, as its entry point would add it): a check that passes means a user's run, replay,
fork and export work.

When something is missing or broken the check raises :class:`CheckFailed` (an
``AssertionError``, so a bare ``pytest`` test reports it) whose message is one line naming the
check, the plug-in and what is wrong::

    check_brain: tests/clock_brain.py:ClockBrain: a second run of seed 3 differs from the first
    at tick 1 (state hash 5f90… vs 7df2…): its decisions depend on more than the ask and the seed
    (the clock, an unseeded random, state kept between runs?)

and otherwise returns a :class:`Checked` listing what it ran. Each check takes a few seconds
(a 60-tick tank of 12 fish); the files it writes go to a temporary folder (``workdir`` keeps
them). In a test::

    from mirofish.testing import check_brain

    def test_my_brain_keeps_the_contract():
        check_brain("mybrains/cautious.py:Cautious")

Importing this module is cheap: it loads the rest of MiroFish only when a check runs.
"""

from __future__ import annotations

from .brain import check_brain
from .common import Checked, CheckFailed
from .metric import check_metric
from .plantype import check_plan_type
from .scene import check_scene

__all__ = ["CheckFailed", "Checked", "check_brain", "check_metric", "check_plan_type", "check_scene"]
