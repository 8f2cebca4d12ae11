"""faascope's own Python source files, for the tests that read the source with ``ast`` or regular
expressions: src/faascope/**/*.py without src/faascope/_runtimes, which holds the local platform's
managed runtimes (AWS's runtime interface clients, and the exact interpreters' standard libraries
that scripts/interpreters.sh installs: third-party code that runs inside sandboxes, never imported,
and may be written for a newer Python than the one running the tests)."""
from __future__ import annotations

from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "faascope"
#: folders of src/faascope that are not faascope's Python
NOT_FAASCOPE = {"_runtimes"}


def python_sources() -> list[Path]:
    """Every .py file of faascope itself, sorted."""
    return sorted(p for p in PKG.rglob("*.py") if p.relative_to(PKG).parts[0] not in NOT_FAASCOPE)
