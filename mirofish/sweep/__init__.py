"""Parameter sweeps: many seeded headless runs over a grid (or a sample) of settings.

``spec`` reads a sweep file and expands it into runs; ``runs`` executes one run (in whatever
process a backend puts it) and returns its row; ``backends`` runs them in local processes or
on a Dask cluster; ``results`` keeps the rows (SQLite, resumable) and writes the tables and
plots. ``python run.py sweep SPEC.toml`` ties them together (``mirofish.cli``).
"""

from .spec import RunTask, SpecError, SweepSpec, load_spec

__all__ = ["RunTask", "SpecError", "SweepSpec", "load_spec"]
