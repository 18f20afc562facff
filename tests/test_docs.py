"""The documentation: a README read in minutes that starts with the two commands CI runs, a site
that builds with ``mkdocs build --strict`` (a broken link fails it), and reference pages generated
from the code, so every setting, flag and metric is on them."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from mirofish.config import Config
from mirofish.observe.metrics import METRICS
from mirofish.reference import PAGES, _sections, github_slug, page

ROOT = Path(__file__).resolve().parent.parent


def _build(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=root, capture_output=True, text=True, timeout=300)


def test_readme_is_short_and_starts_with_the_commands_ci_runs():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README has {len(lines)} lines"
    fence = lines.index("```bash")
    commands = lines[fence + 1:fence + 3]
    assert lines[fence + 3] == "```"
    assert "run.py" in commands[0] and "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci.splitlines(), ".ci/run must run the README's test command verbatim"
    for target in re.findall(r"\]\((docs/[^)#]+)", "\n".join(lines)):  # every page it points to is there
        assert (ROOT / target).exists(), target


def test_the_site_builds_strict_with_the_readme_home_and_generated_reference(tmp_path):
    result = _build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-2000:]
    site = tmp_path / "site"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Quick start" in home and 'href="window/"' in home  # the README, its links turned into the site's
    config = (site / "reference" / "config" / "index.html").read_text(encoding="utf-8")
    assert "world.cell_px" in config and "brain.small.endpoints[].base_url" in config
    for name in ("window", "schools", "model-brain", "reference/cli", "reference/metrics", "design"):
        assert (site / name / "index.html").exists(), name


def test_a_broken_link_fails_the_build(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", root / "docs")
    for f in ("mkdocs.yml", "README.md"):
        shutil.copy(ROOT / f, root / f)
    window = root / "docs" / "window.md"
    window.write_text(window.read_text(encoding="utf-8") + "\nSee [the fins](fins.md).\n", encoding="utf-8")
    result = _build(root, tmp_path / "site")
    assert result.returncode != 0
    assert "window.md" in result.stderr and "fins.md" in result.stderr


@pytest.mark.parametrize("name", PAGES)
def test_committed_reference_pages_are_what_the_code_generates(name):
    kept = (ROOT / "docs" / "reference" / f"{name}.md").read_text(encoding="utf-8")
    assert kept == page(name) + "\n", (f"docs/reference/{name}.md is out of date: "
                                       "python -m mirofish.reference docs/reference")


def test_the_reference_lists_every_setting_flag_and_metric():
    from mirofish.cli import build_parser

    config = page("config")
    for prefix, model in _sections(Config, ""):
        for field in model.model_fields:
            key = f"{prefix}.{field}" if prefix else field
            sub = model.model_fields[field].annotation
            if not (isinstance(sub, type) and issubclass(sub, BaseModel)):
                assert f"`{key}`" in config, key
    cli = page("cli")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for command in ("live", "replay", "fork", "reef", "sweep", "referential", "negotiation", "handoff"):
        assert f"## {command}" in cli
        section = cli.split(f"## {command}\n", 1)[1].split("\n## ", 1)[0]
        for action in sub.choices[command]._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}`" in section, f"{command} {flag}"
    metrics = page("metrics")
    for m in METRICS:
        if not m.plugin:
            assert f"`{m.key}`" in metrics


def test_anchors_are_githubs():
    """One link works in the repository and on the site: the site's anchors are GitHub's."""
    assert github_slug("What makes the schools: the brain's choice and the body's tendencies") == \
        "what-makes-the-schools-the-brains-choice-and-the-bodys-tendencies"
    assert github_slug("Model brain (any OpenAI-compatible server)") == "model-brain-any-openai-compatible-server"
