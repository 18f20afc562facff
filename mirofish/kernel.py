"""Which tick runs: the compiled one (``mirofish/_tick.c``) or the numpy reference.

``pip install -e .`` builds ``mirofish._tick`` with the machine's C compiler (``setup.py``;
the build is optional, so an install without a compiler still works). When the module is
there, :class:`~mirofish.world.World` steers, arbitrates and does the after-tick bookkeeping
in it: the whole loop (planner and metrics included) runs about 3–4 times faster at 60 fish,
where the numpy tick is bound by the fixed cost of a few hundred small array operations
(``bench/tick_kernels.py``). When it is not, or when the environment variable
``MIROFISH_TICK=numpy`` is set, the numpy code in ``world.py``, ``arbiter.py`` and
``fish/steering.py`` runs; it is the reference the compiled tick is tested against, tick by
tick (``tests/test_kernel.py``). Tanks of 4,096 fish and more split the compiled steering
and after-tick loops over the machine's cores when the extension was built with OpenMP
(``setup.py``; ``_tick.THREADS``); the world is the same with any number of threads.

Both give the same world on the same seed: everything but steering's utilities is integer
arithmetic, and the utilities follow the numpy code operation by operation (see the C
file's header for the one-ulp caveat). ``live --headless`` reports which tick ran
(``"tick_kernel"``).
"""

from __future__ import annotations

import os
from types import ModuleType

try:
    from . import _tick as _compiled  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # not built (no compiler at install time): the numpy tick runs
    _compiled = None
if _compiled is not None and not hasattr(_compiled, "school"):  # built from an older _tick.c (without its
    _compiled = None  # newest function): stale, so the numpy tick runs until pip install -e . rebuilds it
_compiled_module: ModuleType | None = _compiled

ENV = "MIROFISH_TICK"


def compiled_tick() -> ModuleType | None:
    """The compiled tick module, or None when it is absent or ``MIROFISH_TICK=numpy``."""
    choice = os.environ.get(ENV, "").strip().lower()
    if choice not in ("", "compiled", "numpy"):
        raise ValueError(f"{ENV}={choice!r}: use 'compiled' or 'numpy'")
    if choice == "numpy":
        return None
    if choice == "compiled" and _compiled is None:
        raise ValueError(f"{ENV}=compiled, but mirofish._tick was not built (reinstall with a C compiler: "
                         "pip install -e .)")
    return _compiled_module


def name() -> str:
    """``"compiled"`` or ``"numpy"``: the tick a world built now would run."""
    return "numpy" if compiled_tick() is None else "compiled"


def built() -> ModuleType | None:
    """The compiled module if it was built, whatever ``MIROFISH_TICK`` says (for objects that
    decided with :func:`compiled_tick` when made and keep only that choice, so that they stay
    copyable and picklable)."""
    return _compiled_module
