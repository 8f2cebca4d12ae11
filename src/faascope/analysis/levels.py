"""How a factor's levels are shown: exact byte sizes in one unit family (10 KB, 128 KiB), memory
in Lambda's MB, other levels as written. What analyze's tables, the report and compare print,
so a level reads the same everywhere."""
from __future__ import annotations

from dataclasses import dataclass, field

_DEC = (("TB", 1000**4), ("GB", 1000**3), ("MB", 1000**2), ("KB", 1000))
_BIN = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


def _size_in(n: int, family) -> tuple[str, bool]:
    for unit, f in family:
        if n and n % f == 0:
            return f"{n // f} {unit}", True
    return f"{n} B", False


def size_labels(values: list[int]) -> dict[int, str]:
    """Exact labels for byte counts, all in one unit family (decimal KB/MB/GB or binary
    KiB/MiB/GiB, never both on one axis): the family that names more values with a unit larger
    than a byte wins, decimal on a tie. 128,000 -> "128 KB", 131,072 -> "128 KiB", 512 -> "512 B"."""
    dec = {v: _size_in(v, _DEC) for v in values}
    binary = {v: _size_in(v, _BIN) for v in values}
    use = dec if sum(u for _, u in dec.values()) >= sum(u for _, u in binary.values()) else binary
    return {v: use[v][0] for v in values}


@dataclass
class FactorInfo:
    name: str
    kind: str = "plain"          # "size" (bytes), "memory" (Lambda MB = MiB) or "plain"
    levels: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    def label(self, level: str) -> str:
        return self.labels.get(level, level)

    @property
    def title(self) -> str:
        return {"size": f"{self.name} (bytes)", "memory": f"{self.name} (Lambda MB = MiB)"}.get(self.kind, self.name)

    def describe_levels(self) -> str:
        """"10000 = 10 KB, 1024000000 = 1024 MB" for sizes; the levels otherwise."""
        if self.kind == "size":
            return ", ".join(self.label(lv) if self.label(lv) == f"{lv} B" else f"{self.label(lv)} ({int(lv):,} B)"
                             for lv in self.levels)
        return ", ".join(self.label(lv) for lv in self.levels)


def spec_level(v) -> str:
    """A spec level as the flat view spells it (booleans true/false, whole floats as integers)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _is_int_text(v: str) -> bool:
    return v.isdigit() and len(v) < 19


# "size" in these names counts invocations, not bytes (the load section of a spec).
_COUNT_NAMES = ("burst_size", "batch_size", "pool_size")


def _is_count(low: str) -> bool:
    return low.startswith("load.") or low.endswith(_COUNT_NAMES)


def factor_info(name: str, levels: list[str], hint: str | None = None) -> FactorInfo:
    """Decide how a factor's levels are shown. `hint` is the spec field for a results store
    (``workload.io_size``, ``function.memory_mb``); foreign columns are recognised by name
    (``*_bytes``, ``*size*``) when every level is a whole number."""
    info = FactorInfo(name, levels=list(levels))
    ints = levels and all(_is_int_text(v) for v in levels)
    low = (hint or name).lower()
    if ints and ("memory_mb" in low or low.endswith("ephemeral_mb")):
        info.kind = "memory"
        info.labels = {v: f"{int(v)} MB" for v in levels}
    elif ints and ("bytes" in low or "size" in low) and "memory" not in low and not _is_count(low):
        info.kind = "size"
        lab = size_labels([int(v) for v in levels])
        info.labels = {v: lab[int(v)] for v in levels}
    return info
