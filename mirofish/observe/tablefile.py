"""Writing a table (columns of equal length) as Parquet or CSV: the one writer that sweeps'
results and a recording's tables use. No URL's credentials reach a table: every text cell passes
through :func:`~mirofish.config.redact_text`.

Every file is written to a temporary name beside it and renamed into place, so a reader never
sees half a table and an interrupted run leaves the previous file. Types: a column of whole
numbers is int64, with any float float64, of text a string; anything else (lists, dicts) is
JSON text — unless the caller names the column types (``types``: ``{column: "int64" |
"float64" | "string" | "bool"}``, pyarrow aliases), as the recording's tables do. CSV is
written by pyarrow for typed tables when it is installed, else by the csv module.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np


def _plain(values: Iterable[Any]) -> list[Any]:
    """A column as Python values of one kind: numbers stay numbers (float if any is), text stays
    text, anything else becomes JSON text; None stays None."""
    vals = values.tolist() if isinstance(values, np.ndarray) else [v.item() if isinstance(v, np.generic) else v
                                                                    for v in values]
    kinds = {type(v) for v in vals if v is not None}
    if kinds and kinds <= {int, float, bool} and kinds != {bool}:
        return [None if v is None else float(v) if float in kinds else int(v) for v in vals]
    if kinds - {str, bool}:
        return [v if v is None or isinstance(v, str) else json.dumps(v) for v in vals]
    return vals


def _redacted(values: Any) -> Any:
    """A column with every URL's credentials removed from its text (:func:`~mirofish.config.redact_text`):
    no table carries a key, whatever recording or sweep it was made from."""
    from ..config import redact_text

    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "OU":
            return values
        values = values.tolist()
    if isinstance(values, list) and any(isinstance(v, str) and "//" in v for v in values):
        return [redact_text(v) if isinstance(v, str) else v for v in values]
    return values


def write_table(path: str | Path, columns: dict[str, Any], fmt: str = "parquet",
                types: dict[str, str] | None = None) -> int:
    """Write ``columns`` to ``path`` (``fmt``: ``parquet`` — needs pyarrow — or ``csv``);
    returns the number of rows."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    cols: dict[str, Any]
    if types:  # pyarrow converts to the named types (numpy arrays as they are; object arrays as lists)
        cols = {k: v.tolist() if isinstance(v, np.ndarray) and v.dtype == object else v for k, v in columns.items()}
    else:
        cols = {k: _plain(v) for k, v in columns.items()}
    cols = {k: _redacted(v) for k, v in cols.items()}
    rows = len(next(iter(cols.values()), []))
    try:
        if fmt == "parquet" or (types and _has_pyarrow()):  # typed CSV: pyarrow's writer, much faster
            import pyarrow as pa

            schema = pa.schema([(k, pa.type_for_alias(types[k])) for k in cols]) if types else None
            table = pa.table(cols, schema=schema)
            if fmt == "parquet":
                import pyarrow.parquet as pq

                pq.write_table(table, tmp, compression="zstd")
            else:
                import pyarrow.csv as pa_csv

                pa_csv.write_csv(table, tmp)
        else:
            with open(tmp, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(cols)
                w.writerows(zip(*cols.values()))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return rows


def _has_pyarrow() -> bool:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True
