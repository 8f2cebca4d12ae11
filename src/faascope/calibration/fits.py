"""The lambda profile's /tmp figures fitted to the 2024 thesis's cells, derived in one place
from the published-anchors table (the medians live there and nowhere else).

``platform-lambda``'s ``tmp_read_iops``, ``tmp_read_bps`` and ``tmp_limits_memory_exponent`` are
the values :func:`lambda_tmp_fits` returns; tests/calibration/test_platform_calibration.py fails
when the table, or a note quoting the medians, drifts from the anchors, and the Go platform's
TestPackagedCalibrationTables reads the anchors too (agent/platform/calibration_test.go).

The model (docs/platform.md, "Calibrated profiles"): a direct read waits for both blk-throttle
limits, so the 512 B cell (2,000,000 reads) sets the IOPS limit and the 128 KiB cell the
bandwidth; below 2048 MB the limits shrink as a power of memory whose exponent takes the 2048 MB
IOPS limit to the 128 MB cell's reads per second.
"""
from __future__ import annotations

import math
import re
from typing import Optional

from faascope.calibration import CalibrationTable, load_table

ANCHORS_TABLE = "published-anchors"
#: the cell each fitted entry comes from (its ``<cell>_median`` and ``<cell>_ops`` anchors)
FIT_CELLS = {
    "tmp_read_iops": "thesis_lambda_direct_read_m2048_f1024000000_io512",
    "tmp_read_bps": "thesis_lambda_direct_read_m2048_f1024000000_io131072",
    "tmp_limits_memory_exponent": "thesis_lambda_direct_read_m128_f10000_io512",
}
#: the exponent's precision in the table (4 decimals: 0.7343)
EXPONENT_DIGITS = 4
_CELL = re.compile(r"_m(?P<memory>\d+)_f(?P<file>\d+)_io(?P<io>\d+)$")


def cell_shape(cell: str) -> tuple[int, int, int]:
    """(memory MB, file bytes, I/O bytes) as the cell's key names them."""
    m = _CELL.search(cell)
    if m is None:
        raise ValueError(f"{cell!r} names no memory, file and I/O size")
    return int(m["memory"]), int(m["file"]), int(m["io"])


def reads_per_s(anchors: CalibrationTable, cell: str) -> float:
    """The cell's reads per second: its I/O calls over its median time."""
    return anchors.value(f"{cell}_ops") / anchors.value(f"{cell}_median")


def lambda_tmp_fits(anchors: Optional[CalibrationTable] = None) -> dict[str, float]:
    """The fitted entries of ``platform-lambda``, from the anchors' medians: IOPS rounded to a
    whole operation, bandwidth to a whole byte per second below (bytes are integers; the table
    keeps the floor), the exponent to :data:`EXPONENT_DIGITS` decimals."""
    anchors = anchors or load_table(ANCHORS_TABLE)
    iops_cell, bps_cell, small_cell = (FIT_CELLS[k] for k in
                                       ("tmp_read_iops", "tmp_read_bps", "tmp_limits_memory_exponent"))
    iops = reads_per_s(anchors, iops_cell)
    _, file_bytes, _ = cell_shape(bps_cell)
    bps = file_bytes / anchors.value(f"{bps_cell}_median")
    top_mb, small_mb = cell_shape(iops_cell)[0], cell_shape(small_cell)[0]
    exponent = math.log(iops / reads_per_s(anchors, small_cell)) / math.log(top_mb / small_mb)
    return {"tmp_read_iops": round(iops), "tmp_read_bps": int(bps),
            "tmp_limits_memory_exponent": round(exponent, EXPONENT_DIGITS)}
