"""The code's structure, measured: the figures docs/tests.md quotes.

    python bench/structure.py            # radon (complexity, maintainability) and mypy --strict
    python bench/structure.py --no-mypy  # radon only (a second; mypy --strict takes a minute)

Prints, as JSON: the functions at each cyclomatic-complexity grade (radon cc; E and F listed by
name), the functions at D or worse in ``mirofish/cli`` (named), the modules whose
maintainability index is 0 (radon mi) and the five lowest, and ``mypy --strict mirofish``'s
error count by package. radon is in the ``dev`` extra; tests/test_structure.py checks the
complexity figures against the code and docs/tests.md against this output."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "mirofish"


def complexity(root: Path = PKG) -> dict[str, object]:
    from radon.complexity import cc_rank, cc_visit

    grades: Counter[str] = Counter()
    worst, cli_d = [], []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        blocks = cc_visit(path.read_text())
        for block in [*blocks, *(m for b in blocks for m in getattr(b, "methods", []))]:  # as `radon cc` lists
            for b in [block, *getattr(block, "closures", [])]:
                g = cc_rank(b.complexity)
                grades[g] += 1
                name = f"{rel} {getattr(b, 'classname', None) + '.' if getattr(b, 'classname', None) else ''}{b.name}"
                if g in "EF":
                    worst.append(f"{name} ({g} {b.complexity})")
                if rel.startswith("cli/") and g in "DEF":
                    cli_d.append(f"{name} ({g} {b.complexity})")
    return {"grades": dict(sorted(grades.items())), "e_or_f": worst, "cli_d_or_worse": cli_d}


def maintainability() -> dict[str, object]:
    from radon.metrics import mi_visit

    scores = {p.relative_to(PKG).as_posix(): round(mi_visit(p.read_text(), multi=True), 2)
              for p in sorted(PKG.rglob("*.py"))}
    low = sorted(scores.items(), key=lambda kv: kv[1])
    return {"zero": [m for m, s in low if s == 0.0], "lowest": dict(low[:5])}


def strict_errors() -> dict[str, int]:
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "mirofish"], cwd=ROOT, capture_output=True,
                          text=True)
    by: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        m = re.match(r"mirofish/([a-z_]+)(/|\.py)", line)
        if m and ": error:" in line:
            by[m.group(1)] += 1
    return {"total": sum(by.values()), **dict(by.most_common())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-mypy", action="store_true", help="leave out mypy --strict (the slow part)")
    a = ap.parse_args()
    out: dict[str, object] = {"complexity": complexity(), "maintainability": maintainability()}
    if not a.no_mypy:
        out["mypy_strict_errors"] = strict_errors()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
