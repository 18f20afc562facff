"""The model side of the one scene protocol: a scene without its window.

``reset(seed)``, ``step()`` (one tick), ``snapshot()`` (a JSON-ready state), ``close()``.
The window's side — ``handle_event(event)``, ``update(dt)``, ``draw(surface)`` — and the
shared timing and keys of the alternate scenes are :mod:`mirofish.ui.scenes.base`'s, with
each scene's window in :mod:`mirofish.ui.scenes`: this package imports no pygame and nothing
of :mod:`mirofish.ui`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class SceneModel(Protocol):
    title: str

    def reset(self, seed: int) -> None: ...

    def step(self) -> Any: ...

    def snapshot(self) -> Any: ...

    def close(self) -> None: ...
