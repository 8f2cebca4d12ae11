"""What this host's CPUs did while something ran: the share of their time the hypervisor took
(``steal`` in /proc/stat, proc(5)).

On a virtual machine, steal is time a CPU had work to run while the hypervisor ran another
guest: every timing taken then is stretched, by an amount no setting of the local platform moves
and no probe taken before or after sees. The VMs faascope is developed and tested on showed it
(44 % of CPU time in one `top` sample during a fidelity battery, 2026-11-28, while the lambda
profile's warm noops took 1-33 ms to run against 0.7-1.6 ms on a quiet machine), so what a
battery measured is read beside what the hypervisor took meanwhile.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional, TypeVar

T = TypeVar("T")

PROC_STAT = Path("/proc/stat")

#: the aggregate "cpu" line's columns up to steal (proc(5)); guest and guest_nice are already
#: counted in user and nice, so they are left out of the total
COLUMNS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU time of all CPUs since boot, in clock ticks."""
    total: int
    steal: int


def read_cpu_times(text: Optional[str] = None) -> Optional[CpuTimes]:
    """The aggregate line of /proc/stat (or of ``text``); None where there is none (not Linux,
    or a kernel without the steal column)."""
    if text is None:
        try:
            text = PROC_STAT.read_text()
        except OSError:
            return None
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            if len(parts) < 1 + len(COLUMNS):
                return None
            v = dict(zip(COLUMNS, (int(x) for x in parts[1:1 + len(COLUMNS)])))
            return CpuTimes(total=sum(v.values()), steal=v["steal"])
    return None


def steal_fraction(before: Optional[CpuTimes], after: Optional[CpuTimes]) -> Optional[float]:
    """The share of the CPUs' time between two readings that the hypervisor took."""
    if before is None or after is None or after.total <= before.total:
        return None
    return (after.steal - before.steal) / (after.total - before.total)


@dataclass
class StealLog:
    """The steal fraction of each named stretch of work (``measure``), in the order run, and of
    the runs set aside because the hypervisor took too much of it (``run``)."""
    fractions: dict[str, Optional[float]] = field(default_factory=dict)
    repeated: dict[str, list[float]] = field(default_factory=dict)
    #: other readings of the machine per run of a stretch, where its caller takes them (the
    #: fidelity battery's disk probe around a disk-bound campaign: battery.run_kept)
    disk: dict[str, list[dict]] = field(default_factory=dict)

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        before = read_cpu_times()
        try:
            yield
        finally:
            f = steal_fraction(before, read_cpu_times())
            self.fractions[name] = None if f is None else round(f, 4)

    def run(self, name: str, attempt: Callable[[int], T], limit: float, repeats: int,
            calm: Optional[Callable[[int], bool]] = None,
            before_repeat: Optional[Callable[[int], None]] = None) -> T:
        """Run ``attempt(k)`` (k = 1, 2, ...) as the stretch ``name`` until the hypervisor took
        less than ``limit`` of the CPU time during it and ``calm(k)`` (whatever else the stretch
        rests on, read after attempt k: the battery's disk probe) holds, ``1 + repeats`` times
        at most; return the last attempt's value. ``before_repeat(k)`` runs before attempt k > 1,
        outside the measured stretch (a wait there would dilute the share). ``fractions[name]``
        is the last attempt's share; ``repeated[name]`` the shares of the attempts set aside for
        the hypervisor, in order (an attempt set aside by ``calm`` alone is its caller's to
        record).

        Whether to run again is decided by what the machine did, never by what the attempt
        measured, so a repeat cannot steer a result towards any answer: it only keeps a run the
        machine did not disturb, as a person repeating a disturbed measurement would."""
        k = 1
        while True:
            with self.measure(name):
                value = attempt(k)
            f = self.fractions[name]
            stretched = f is not None and f >= limit
            settled = calm is None or calm(k)    # read after every attempt, the kept one too
            if (not stretched and settled) or k > repeats:
                return value
            if stretched:
                self.repeated.setdefault(name, []).append(f)
            k += 1
            if before_repeat is not None:
                before_repeat(k)
