"""The sequential executor: a campaign's planned runs one at a time, in the planned order.

Per run: wait for its time block's start, give the function the cell's configuration, force a
cold start where planned, invoke, and record the result (its own fsynced transaction) before
the next run starts.
"""
from __future__ import annotations

import time

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                           TimeElapsedColumn)
from rich.text import Text

from faascope.driver.campaign import Campaign
from faascope.driver.one_run import measure_one_run
from faascope.driver.progress import ETAColumn, WeightedETA, short_cell


class _RateColumn(ProgressColumn):
    def render(self, task):
        s = task.speed
        return Text(f"{s:.2f} inv/s" if s else "– inv/s")


class SequentialExecutor:
    def run(self, campaign: Campaign) -> None:
        pending = campaign.pending()
        names = campaign.deploy_pending(pending)
        campaign.set_running()
        self._loop(campaign, pending, names)

    @staticmethod
    def _loop(campaign: Campaign, pending: list[dict], names: dict[str, str]) -> None:
        store, cid, provider = campaign.store, campaign.id, campaign.open_provider()
        cells = campaign.plan.cells_by_key
        total = campaign.summary.planned
        errors = sum(v for k, v in store.status_counts(cid).items() if k != "ok")
        cols = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                _RateColumn(), TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn(),
                ETAColumn()]
        eta = WeightedETA(campaign.plan, pending)
        interval = campaign.plan.block_interval_s or 0.0
        with Progress(*cols, console=campaign.console, disable=not campaign.progress,
                      transient=False) as bar:
            task = bar.add_task(campaign.name, total=total, completed=total - len(pending),
                                errors=errors, eta=eta)
            for run in pending:
                if campaign.stop.stop:
                    return
                # time blocking: block b starts no earlier than start + b * interval
                if run["block"] > 0 and interval > 0:
                    start_at = campaign.started_at_unix + run["block"] * interval
                    while time.time() < start_at:
                        if campaign.stop.stop:
                            return
                        bar.update(task, description=f"{campaign.name} (waiting for block "
                                                      f"{run['block']})")
                        time.sleep(min(1.0, max(0.0, start_at - time.time())))
                cell = cells[run["cell_key"]]
                bar.update(task, description=f"{campaign.name} · {short_cell(run['cell_key'])}")
                result = measure_one_run(campaign, provider, run, cell, names[run["cell_key"]])
                if result.status != "ok":
                    errors += 1
                eta.advance(run)
                bar.update(task, advance=1, errors=errors)
