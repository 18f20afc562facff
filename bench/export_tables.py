"""Recordings as tables: export time and size for a long recording.

    python bench/export_tables.py [--ticks 43200] [--every 10] [--keep DIR]

Records a 60-fish tank for ``--ticks`` ticks (default six simulated hours), then times
``run.py export REC --tables OUT`` as Parquet and as CSV, end to end, and prints the rows per
table, the seconds and the output size against the recording's. Targets: under 10 s and
within 5x the recording's size for Parquet with K = 10.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=43_200)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--keep", help="keep the recording and tables in this folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(args.keep or tmp)
        d.mkdir(parents=True, exist_ok=True)
        rec = d / "long.mfrec"
        t = time.perf_counter()
        subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", str(args.ticks), "--seed", "1",
                        "--record", str(rec), "--overwrite"], cwd=ROOT, check=True, capture_output=True)
        record_s = time.perf_counter() - t
        out = {"ticks": args.ticks, "every": args.every, "recording_mb": round(rec.stat().st_size / 1e6, 2),
               "record_s": round(record_s, 1)}
        for fmt in ("parquet", "csv"):
            t = time.perf_counter()
            done = subprocess.run([sys.executable, "run.py", "export", str(rec), "--tables", str(d / fmt),
                                   "--format", fmt, "--every", str(args.every), "--overwrite"], cwd=ROOT,
                                  check=True, capture_output=True, text=True)
            wall = time.perf_counter() - t
            report = json.loads(done.stdout)
            out[fmt] = {"wall_s": round(wall, 2), "mb": round(report["bytes"] / 1e6, 2),
                        "x_recording": round(report["bytes"] / rec.stat().st_size, 2),
                        "rows": {k: v["rows"] for k, v in report["tables"].items()}}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
