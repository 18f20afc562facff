"""The code's structure as docs/tests.md states it, checked against the code (bench/structure.py
measures it with radon): no function at complexity grade E or F, none at D or worse in cli/."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # (radon, which the bench uses, is in the dev extra)


def _bench():
    spec = importlib.util.spec_from_file_location("structure", ROOT / "bench" / "structure.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_function_is_at_e_or_f_and_none_in_cli_at_d():
    found = _bench().complexity()
    assert found["e_or_f"] == [], found["e_or_f"]
    assert found["cli_d_or_worse"] == [], found["cli_d_or_worse"]
    page = (ROOT / "docs" / "tests.md").read_text()
    assert "no function at E or F" in page and "none at D or worse in `cli/`" in page


def test_the_measure_finds_what_it_forbids(tmp_path):
    """A function of 45 branches is graded F, and one in cli/ of 25 is named as D."""
    branches = "\n".join(f"    if x == {k}:\n        return {k}" for k in range(44))
    (tmp_path / "cli").mkdir()
    (tmp_path / "big.py").write_text(f"def big(x):\n{branches}\n    return -1\n")
    (tmp_path / "cli" / "cmd.py").write_text("def cmd(x):\n" + "\n".join(branches.split("\n")[:48]) + "\n")
    found = _bench().complexity(tmp_path)
    assert [f.split(" (")[0] for f in found["e_or_f"]] == ["big.py big"]
    assert [f.split(" (")[0] for f in found["cli_d_or_worse"]] == ["cli/cmd.py cmd"]
