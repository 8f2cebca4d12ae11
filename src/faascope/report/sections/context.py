"""`Ctx`: what every section builder receives: the selected data, its scenarios, and the
presentation choices made once for the whole report (confidence level, log or linear axes)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from faascope.analysis.dataset import Dataset
from faascope.report.figures import auto_log
from faascope.report.scenarios import Scenario


@dataclass
class Ctx:
    data: Dataset
    scenarios: list[Scenario]
    alpha: float = 0.05
    log_x: bool | None = None          # None: decide per scenario from the data
    extra: dict = field(default_factory=dict)

    @property
    def response(self) -> str:
        return self.data.response

    @property
    def unit(self) -> str:
        """The response's unit, from the measures table (faascope.store.measures): s, ms, B,
        B/s, 1/s, MB or "" (a count)."""
        return self.data.measure.unit

    @property
    def measure(self):
        return self.data.measure

    def axis(self, what: str | None = None) -> str:
        base = what or self.response
        return f"{base} ({self.unit})" if self.unit else base

    @property
    def conf(self) -> str:
        return f"{100 * (1 - self.alpha):g}%"

    def log_for(self, sc: Scenario) -> tuple[bool, str]:
        """Whether the response axes of scenario `sc` are logarithmic, and the phrase that says why."""
        if self.log_x is not None:
            return self.log_x, ("log scale (--log-x)" if self.log_x else "linear scale (--linear-x)")
        y = np.concatenate([c.y for c in sc.cells]) if sc.cells else np.array([])
        if auto_log(y):
            return True, "log scale, chosen because the values span more than 50× (the interactive report can switch)"
        return False, "linear scale"
