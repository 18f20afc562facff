"""A reef: several tanks joined by corridors, fish migrating between them (``run.py reef``).

:mod:`.spec` reads a reef file; :mod:`.tank` steps a share of the tanks and finds the fish
that leave (:class:`~.tank.TankHost`); :mod:`.run` joins the hosts — in this process, in local
processes or as actors on a Dask cluster — and exchanges the migrants every interval.
"""
