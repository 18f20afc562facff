"""The one small protocol every scene follows (STYLE: pygame_gui's handle_event/update/draw).

View side: ``handle_event(event)``, ``update(dt)`` (dt in seconds of wall time), ``draw(surface)``.
Model side: ``reset(seed)``, ``step()`` (one tick), ``snapshot()`` (a JSON-ready state).
The window's scene switcher (key S) cycles through :data:`SCENES`; the alternate scenes
(referential game, negotiation) register themselves here when they exist.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable


@runtime_checkable
class Scene(Protocol):
    title: str

    def handle_event(self, event: Any) -> None: ...

    def update(self, dt: float) -> None: ...

    def draw(self, surface: Any) -> None: ...

    def reset(self, seed: int) -> None: ...

    def step(self) -> None: ...

    def snapshot(self) -> Any: ...

    def close(self) -> None: ...


# name → factory(config) building a scene; filled by the scene modules.
SCENES: dict[str, Callable[..., Scene]] = {}


def register(name: str, factory: Callable[..., Scene]) -> None:
    SCENES[name] = factory
