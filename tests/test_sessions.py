"""The session layer: live, replay and fork sessions answer one protocol the same way, and the
window reaches the tank only through it."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from mirofish.config import load_config
from mirofish.fish.plans import describe
from mirofish.observe.recording import Recorder
from mirofish.session import LiveSession, ReplaySession, fork_recording

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "mirofish"
CFG = dict(seed=6, **{"fish.count": 24})


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("sessions") / "run.db"
    live = LiveSession(load_config(**CFG), mode="lockstep")
    rec = Recorder(path, live.cfg).attach(live)
    live.run(300)
    rec.close()
    live.close()
    return path


def make(kind: str, recording):
    """A session of ``kind`` at tick 100 of the same tank."""
    if kind == "live":
        s = LiveSession(load_config(**CFG), mode="lockstep")
        s.run(100)
        return s
    if kind == "replay":
        s = ReplaySession(recording)
        s.seek(100)
        return s
    return fork_recording(recording, 100, 3, "explore north 30")


def decision_at(session, fish_tick_source) -> tuple[int, str]:
    """(fish, plan text) of a decision the tank makes at its current tick (from a twin)."""
    frame = fish_tick_source.step()
    b = next(b for b in frame.applied if len(b))
    return int(b.fish[0]), describe(int(b.goals[0]), int(b.params[0]), int(b.horizons[0]))


@pytest.mark.parametrize("kind", ["live", "replay", "fork"])
def test_reset_twice_gives_equal_snapshots(kind, recording):
    s = make(kind, recording)
    s.run(20)
    s.reset()
    first = s.snapshot().model_dump()
    s.run(15)
    s.reset()
    assert s.snapshot().model_dump() == first
    s.close()


@pytest.mark.parametrize("kind", ["live", "replay", "fork"])
def test_stepping_is_deterministic_tick_by_tick(kind, recording):
    a, b = make(kind, recording), make(kind, recording)
    for _ in range(40):
        a.step()
        b.step()
        assert a.state_hash() == b.state_hash() and a.tick == b.tick
    assert a.view().tick == b.view().tick and np.array_equal(a.view().x, b.view().x)
    a.close()
    b.close()


@pytest.mark.parametrize("kind", ["live", "replay"])
def test_a_fork_with_the_decision_the_tank_makes_reproduces_it(kind, recording):
    subject, twin = make(kind, recording), make(kind, recording)
    fish, plan = decision_at(subject, twin)  # what the tank decides for `fish` at this tick
    fork = subject.fork(fish, plan, replan=True)  # re-planning on triggers as the tank does: the same tank
    for _ in range(60):
        fork.step()
        assert fork.state_hash() == fork.parent.state_hash()
    assert fork.summary()["divergence"]["cells_differ_max"] == 0
    fork.close()
    subject.close()
    twin.close()


@pytest.mark.parametrize("kind", ["live", "replay"])
def test_a_swapped_decision_diverges(kind, recording):
    subject, twin = make(kind, recording), make(kind, recording)
    fish, plan = decision_at(subject, twin)
    other = "rest 100 40" if not plan.startswith("rest") else "explore east 40"
    fork = subject.fork(fish, other)
    fork.run(60)
    assert fork.summary()["divergence"]["cells_differ_max"] > 0
    assert fork.ghost_view() is not None and fork.ghost_view().tick == fork.tick
    fork.close()
    subject.close()
    twin.close()


def _imports(path: Path, typing: bool = False) -> set[str]:
    """Modules ``path`` imports (absolute names), outside ``if TYPE_CHECKING:`` blocks (inside
    them too with ``typing``)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    if path.name == "__init__.py":
        module = package = module.rsplit(".", 1)[0] if module.endswith("__init__") else module
    tree = ast.parse(path.read_text())
    skip = set() if typing else {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                                 and getattr(node.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("mirofish"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.startswith("mirofish"):
                out.add(name)
                out.update(f"{name}.{a.name}" for a in node.names)  # `from pkg import module`
    return out


def _modules() -> dict[str, Path]:
    return {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
            for path in PKG.rglob("*.py")}


_REF = re.compile(r"^(mirofish(?:\.\w+)+):[A-Za-z_][\w.]*$")  # a registry's "module:attribute" string


def _references(path: Path) -> set[str]:
    """The modules ``path`` names in ``"mirofish.module:attribute"`` strings (a registry's lazy
    imports: a scene's parts, the built-in scenes, a window): imports as much as any."""
    return {m.group(1) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (m := _REF.match(node.value))}


def _graph(typing: bool = False, strings: bool = True) -> dict[str, set[str]]:
    mods = _modules()
    return {m: {i for i in _imports(p, typing) | (_references(p) if strings else set()) if i in mods and i != m}
            for m, p in mods.items()}


def _uses_pygame(source: str) -> bool:
    """Whether ``source`` imports pygame anywhere (at the top or inside a function)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pygame" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "pygame":
            return True
    return False


CONFIG_NAMES = {"cfg", "config", "base_cfg", "settings"}  # ``cfg.world`` and ``cfg.engine`` are config sections


def _world_reads(source: str) -> list[str]:
    """Every ``.world`` or ``.engine`` read in ``source`` off something other than a config
    (``shown.world.places`` is one; ``self.cfg.world.tick_seconds`` is the config's section)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("world", "engine"):
            base = node.value
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
            if name not in CONFIG_NAMES:
                out.append(f"line {node.lineno}: {ast.unparse(node)}")
    return out


def _views() -> dict[str, Path]:
    """The window's modules: everything under mirofish.ui and every module that imports pygame."""
    return {m: p for m, p in _modules().items()
            if m == "mirofish.ui" or m.startswith("mirofish.ui.") or _uses_pygame(p.read_text())}


def test_the_structure_checks_find_what_they_forbid():
    """The checks below on sources that break them (so that they can fail)."""
    assert _uses_pygame("def f():\n    import pygame\n") and _uses_pygame("from pygame.locals import K_a\n")
    spec = ROOT / "mirofish" / "scenes" / "aquarium.py"
    assert "mirofish.scenes.aquarium" in _references(spec)  # its own export, named by string
    assert not {m for m in _references(spec) if m.startswith(("mirofish.cli", "mirofish.ui"))}
    assert "mirofish.cli.aquarium" in _references(ROOT / "mirofish" / "cli" / "fronts.py")
    assert not _uses_pygame("import pygments\nfrom .pygame_like import x\n")
    reads = _world_reads("a = shown.world.places\nb = self.cfg.world.tick_seconds\nc = s.cfg.engine.speed\n"
                         "d = self.session.engine.source\ne = world.cfg\n")
    assert reads == ["line 1: shown.world", "line 4: self.session.engine"], reads


def test_only_the_window_imports_pygame():
    """``ui`` is the only package (besides ``cli``) that imports pygame: not the core, session,
    scenes, reef, observe, brains or sweep."""
    using = sorted(m for m, p in _modules().items() if _uses_pygame(p.read_text()))
    assert "mirofish.ui.scenes.aquarium" in using and "mirofish.ui.figures" in using, using
    outside = [m for m in using if not (m == "mirofish.cli" or m.startswith("mirofish.ui."))]
    assert not outside, outside


def test_the_views_import_no_world_or_engine_and_read_none():
    """Every view (each module that imports pygame, and all of ui/) reads the tank through
    sessions, snapshots and TankView: it imports neither the World nor the Engine and reads no
    ``.world`` or ``.engine`` (``Session.world`` is for sessions and their tests)."""
    graph, views = _graph(), _views()
    assert {"mirofish.ui.scenes.aquarium", "mirofish.ui.scenes.reef", "mirofish.ui.clip", "mirofish.ui.figures",
            "mirofish.ui.shown", "mirofish.ui.panels"} <= set(views), sorted(views)
    for module, path in views.items():
        assert not graph[module] & {"mirofish.world", "mirofish.engine", "mirofish.kernel"}, (module, graph[module])
        assert not _world_reads(path.read_text()), (module, _world_reads(path.read_text()))


def test_the_scenes_import_nothing_of_the_window():
    """scenes/ (the scenes' models) imports no ui module, not even for types, and no pygame."""
    graph = _graph(typing=True)
    scenes = {m: deps for m, deps in graph.items() if m.startswith("mirofish.scenes")}
    assert "mirofish.scenes.base" in scenes and "mirofish.scenes.negotiation.dialogue" in scenes
    for module, deps in scenes.items():
        assert not {d for d in deps if d == "mirofish.ui" or d.startswith("mirofish.ui.")}, (module, deps)


def _packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the package's sub-packages (mirofish.session, mirofish.ui …)."""
    def pkg(m: str) -> str:
        return ".".join(m.split(".")[:2])
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(pkg(m), set()).update(pkg(d) for d in deps if pkg(d) != pkg(m))
    return out


@pytest.mark.parametrize("level", ["modules", "packages"])
def test_there_is_no_import_cycle_in_the_package(level):
    graph = _graph() if level == "modules" else _packages(_graph())
    state: dict[str, int] = {}

    def visit(m, path):
        state[m] = 1
        for d in graph[m]:
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " → ".join(path[path.index(d):] + [d]))
            if d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [m])
