"""Price tables: versioned JSON files in ``faascope/cost/tables`` (``<table>@<version>.json``), each
with the date its prices are from, the source URL and notes; overridable per spec.

A spec overrides prices in ``provider.settings.pricing``::

    pricing:
      versions: {aws_lambda: "2024-11-01"}     # pin a table version (default: the newest)
      aws_lambda: {gb_second_x86_64: 0.0000162} # override single prices (same keys as the table)
      gcp_functions: {vcpu_second: 0.0000180}

Every override is recorded next to the estimate, so a number is never separated from what it
assumed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from faascope.calibration.versioned import VersionedTables
from faascope.errors import BadInput

TABLES_PACKAGE = "faascope.cost"
TABLES_DIR = "tables"


@dataclass
class PriceTable:
    name: str
    version: str
    date: str
    source: str
    currency: str
    prices: dict[str, float]
    title: str = ""
    region: str = ""
    checked: str = ""
    notes: list[str] = field(default_factory=list)
    overrides: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, key: str) -> float:
        return self.prices[key]

    def provenance(self) -> dict[str, Any]:
        d = {"table": self.name, "version": self.version, "date": self.date, "source": self.source,
             "region": self.region, "currency": self.currency}
        if self.overrides:
            d["overridden"] = dict(self.overrides)
        return d


#: the packaged price tables, read by the loader the calibration tables share
TABLES = VersionedTables(TABLES_PACKAGE, TABLES_DIR)


def available() -> dict[str, list[str]]:
    """Every table and its versions, oldest first."""
    return TABLES.available()


def load_table(name: str, version: Optional[str] = None) -> PriceTable:
    version, raw = TABLES.load_raw(
        name, version,
        no_table=lambda: BadInput(f"no price table {name!r}; tables: {', '.join(available())}",
                                  field="pricing"),
        no_version=lambda v, versions: BadInput(f"table {name!r} has no version {v!r}; versions: "
                                                f"{', '.join(versions)}", field=f"pricing.versions.{name}"))
    return PriceTable(name=raw["table"], version=raw["version"], date=raw["date"],
                      source=raw["source"], currency=raw["currency"],
                      prices={k: float(v) for k, v in raw["prices"].items()},
                      title=raw.get("title", ""), region=raw.get("region", ""),
                      checked=raw.get("checked", ""), notes=list(raw.get("notes", [])))


class Pricing:
    """The tables an estimate uses: the newest of each unless pinned, with the spec's overrides."""

    def __init__(self, override: Optional[dict] = None, field_prefix: str = "provider.settings.pricing"):
        override = dict(override or {})
        self.field_prefix = field_prefix
        versions = override.pop("versions", None) or {}
        if not isinstance(versions, dict):
            raise BadInput("must be a mapping of table name to version", field=f"{field_prefix}.versions")
        known = available()
        for name in list(versions) + list(override):
            if name not in known:
                where = f"{field_prefix}.versions.{name}" if name in versions else f"{field_prefix}.{name}"
                raise BadInput(f"unknown price table; tables: {', '.join(known)}", field=where)
        self.tables: dict[str, PriceTable] = {}
        for name in known:
            v = versions.get(name)
            try:
                self.tables[name] = load_table(name, str(v) if v is not None else None)
            except BadInput as exc:
                raise BadInput(str(exc.message).split(": ", 1)[-1],
                               field=f"{field_prefix}.versions.{name}") from None
        for name, values in override.items():
            if not isinstance(values, dict):
                raise BadInput("must be a mapping of price names to numbers",
                               field=f"{field_prefix}.{name}")
            t = self.tables[name]
            for key, value in values.items():
                if key not in t.prices:
                    raise BadInput(f"unknown price; {name} has: {', '.join(t.prices)}",
                                   field=f"{field_prefix}.{name}.{key}")
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                    raise BadInput(f"must be a number >= 0 (got {value!r})",
                                   field=f"{field_prefix}.{name}.{key}")
                t.prices[key] = float(value)
                t.overrides[key] = float(value)

    def __getitem__(self, name: str) -> PriceTable:
        return self.tables[name]

    def provenance(self, names: Optional[list[str]] = None) -> list[dict]:
        return [self.tables[n].provenance() for n in (names or list(self.tables))]


def pricing_for(settings: Any) -> Pricing:
    """The :class:`Pricing` of a provider's settings (a pydantic model or a dict)."""
    override = settings.get("pricing") if isinstance(settings, dict) else getattr(settings, "pricing", None)
    return Pricing(override)
