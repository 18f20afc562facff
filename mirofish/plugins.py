"""Loading a plug-in's row by itself (entry point groups ``mirofish.plans``, ``mirofish.metrics``).

A plug-in package's ``__init__`` may import anything of MiroFish — its scene, the recordings,
the window. The tables a row joins (the plan types, the metrics) are read while MiroFish's own
modules are still importing, so running that ``__init__`` then would meet half-built modules
(the import trap: "cannot import name ... from partially initialized module"), or let a module
such as the window's HUD read a table before the plug-in's row joined it. :func:`load_entry`
loads the module that holds the row from its file by itself, without its package's
``__init__``; the row module should import only what it needs (e.g. ``mirofish.fish.plantypes``,
``mirofish.observe.metrics``). This module imports nothing of the package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


def load_entry(ep: Any) -> Any:
    """What entry point ``ep`` names, its module loaded from its file by itself (registered
    under its own name, so that its package, imported later, finds it as its submodule), not
    through its package's ``__init__``; a module whose file is not found (an editable or
    zipped install) is loaded the ordinary way."""
    module_name, _, attr = ep.value.partition(":")
    module = sys.modules.get(module_name)
    if module is None:
        module = _load_alone(ep, module_name)
        if module is None:
            return ep.load()
    obj = module
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def _load_alone(ep: Any, module_name: str) -> Any:
    """Module ``module_name`` of ``ep``'s distribution, run from its file (None: no file found)."""
    rel = module_name.replace(".", "/")
    for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
        path = Path(str(ep.dist.locate_file(candidate))) if ep.dist is not None else None
        if path is None or not path.is_file():
            continue
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        return module
    return None
