"""Analysing a run with DuckDB: a recording's tables answer the questions people ask of a run.

    python docs/analyse_recording.py [--ticks 6000] [--seed 1] [--out docs/analysis-energy.png]

Records a 60-fish tank (or reuses ``--recording PATH``), forks it three times at tick 3000
with different swapped decisions, exports every recording's tables
(``run.py export REC --tables DIR``), and asks DuckDB:

1. every decision fish 12 made between t2000 and t4000, with its thought;
2. how often hungry fish (energy under 50 when they decided) chose school over forage;
3. the energy of every fish every 10 ticks — plotted to a PNG;
4. which fork diverged most from the recording.

Needs the ``tables`` and ``plots`` extras (pip install -e '.[tables,plots]').
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> dict:
    done = subprocess.run([sys.executable, "run.py", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr.strip())
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--recording", help="analyse this recording instead of making one")
    ap.add_argument("--out", default=str(ROOT / "docs" / "analysis-energy.png"), help="the plot")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        rec = Path(args.recording) if args.recording else d / "run.mfrec"
        if not args.recording:
            run("live", "--headless", "--ticks", str(args.ticks), "--seed", str(args.seed), "--record", str(rec))
        run("export", str(rec), "--tables", str(d / "run"))
        swaps = {"rest": ["--plan", "rest until 95 energy"], "explore": ["--plan", "explore west"],
                 "eat": ["--action", "eat"]}
        for name, swap in swaps.items():
            run("fork", str(rec), "--at", "3000", "--fish", "12", *swap, "--ticks", "600",
                "--record", str(d / f"fork-{name}.mfrec"))
            run("export", str(d / f"fork-{name}.mfrec"), "--tables", str(d / f"fork-{name}"))
        db = duckdb.connect()
        t = f"{d}/run"

        print("1. Fish 12's decisions between t2000 and t4000 (first 8 of them):")
        rows = db.sql(f"""SELECT tick, tier, plan, coalesce(thought, '') AS thought
                          FROM '{t}/decisions.parquet' WHERE fish = 12 AND tick BETWEEN 2000 AND 4000
                          ORDER BY tick""").fetchall()
        for r in rows[:8]:
            print(f"   t{r[0]:<5} [{r[1]}] {r[2]}" + (f" - \u201c{r[3]}\u201d" if r[3] else ""))
        print(f"   ... {len(rows)} decisions in all")

        print("2. Hungry fish (energy < 50 at their last sampled state): school or forage?")
        rows = db.sql(f"""
            WITH d AS (SELECT tick, fish, goal FROM '{t}/decisions.parquet'),
                 f AS (SELECT tick, fish, energy FROM '{t}/fish.parquet')
            SELECT d.goal, count(*) AS n
            FROM d ASOF JOIN f ON d.fish = f.fish AND d.tick >= f.tick
            WHERE f.energy < 50 AND d.goal IN ('school', 'forage')
            GROUP BY d.goal ORDER BY n DESC""").fetchall()
        total = sum(n for _, n in rows) or 1
        for goal, n in rows:
            print(f"   {goal:<7} {n:>5}  ({n / total:.0%})")

        print("3. Energy of every fish every 10 ticks:")
        rows = db.sql(f"""SELECT tick, avg(energy), min(energy), max(energy) FROM '{t}/fish.parquet'
                          GROUP BY tick ORDER BY tick""").fetchall()
        for r in rows[:: max(1, len(rows) // 6)]:
            print(f"   t{r[0]:<5} mean {r[1]:5.1f}  min {r[2]:5.1f}  max {r[3]:5.1f}")
        per_fish = db.sql(f"SELECT fish, list(energy ORDER BY tick) FROM '{t}/fish.parquet' GROUP BY fish "
                          "ORDER BY fish").fetchall()
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=110)
        ticks = [r[0] for r in rows]
        for _, energies in per_fish:
            ax.plot(ticks, energies, color="#7fa7d8", alpha=0.25, linewidth=0.7)
        ax.plot(ticks, [r[1] for r in rows], color="#d1495b", linewidth=2, label="mean")
        ax.plot(ticks, [r[2] for r in rows], color="#edae49", linewidth=1.2, label="lowest fish")
        ax.set_xlabel("tick")
        ax.set_ylabel("energy")
        ax.set_title(f"Energy of all {len(per_fish)} fish every 10 ticks (seed {args.seed}, from fish.parquet)",
                     fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.out)
        shown = Path(args.out).resolve()
        print(f"   plot: {shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown}")

        print("4. Which fork diverged most (fish 12's decision swapped at t3000, 600 ticks on):")
        union = " UNION ALL ".join(f"SELECT '{n}' AS fork, * FROM '{d}/fork-{n}/divergence.parquet'" for n in swaps)
        for fork, mean_cells, half_at, school, energy in db.sql(f"""
                SELECT fork, avg(cells_differ), min(tick) FILTER (WHERE cells_differ >= 30) - 3000,
                       max(abs(schooling_diff)), max(abs(energy_diff))
                FROM ({union}) GROUP BY fork ORDER BY 2 DESC""").fetchall():
            half = f"half the fish elsewhere after {half_at} ticks" if half_at is not None else "never half"
            print(f"   {fork:<8} {mean_cells:4.1f} fish in other cells on average, {half}; "
                  f"schooling differs by up to {school:.3f}, mean energy by up to {energy:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
