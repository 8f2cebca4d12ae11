"""Cost: versioned price tables (``tables/<name>@<version>.json``, each with its date and source),
the per-invocation cost model, and cost-vs-latency helpers for reports (a plan's cost estimate is
:mod:`faascope.designs.cost`).

    from faascope.cost import cost_table, pareto_front, invocation_cost, Pricing
"""
from faascope.cost.model import (InvocationCost, dynamodb_units, gcf_cost, invocation_cost,
                                 lambda_cost, lambda_gb, storage_cost)
from faascope.cost.pricing import Pricing, PriceTable, available, load_table
from faascope.cost.report import cost_table, invocation_costs, pareto_front

__all__ = ["InvocationCost", "Pricing", "PriceTable", "available", "cost_table", "dynamodb_units",
           "gcf_cost",
           "invocation_cost", "invocation_costs", "lambda_cost", "lambda_gb", "load_table",
           "pareto_front", "storage_cost"]
