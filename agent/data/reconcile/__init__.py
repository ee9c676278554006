"""The reconciliation engine: orders against captured payments, in DuckDB, with evidence.

Each unit (an order, or a payment) gets at most one category, the first that applies in
`policy.CATEGORY_ORDER`; legitimate cases (captures that add up, differences within tolerance,
failed attempts, normal refunds, voided orders without payment) are not findings. Every finding
carries its evidence: the file, the 1-based data rows and the ids, expected against actual.
Findings stay in DuckDB (table `findings`) so that a million-row run costs no Python objects;
`findings()` and `evidence()` turn the few that a person looks at into values.

The package: `values` (findings, evidence, the summary), `runner` (the connection and the
`sql/*.sql` files run with bound parameters), `engine` (the engine's parameters and the
mapping's readings), `summary`, `findings` and `exceptions_csv` (what a finished
reconciliation gives back), `reconciliation` (the `Reconciliation` object) and `run`
(`load_and_validate`, `validate_once`, `reconcile`).
"""

from agent.data.reconcile.engine import run_engine
from agent.data.reconcile.reconciliation import Reconciliation
from agent.data.reconcile.run import load_and_validate, reconcile, validate_once
from agent.data.reconcile.runner import MEMORY_LIMIT, connect
from agent.data.reconcile.values import (
    FINDING_CATEGORIES,
    CategoryTotal,
    CurrencyTotals,
    Evidence,
    Finding,
    Summary,
)

__all__ = [
    "FINDING_CATEGORIES",
    "MEMORY_LIMIT",
    "CategoryTotal",
    "CurrencyTotals",
    "Evidence",
    "Finding",
    "Reconciliation",
    "Summary",
    "connect",
    "load_and_validate",
    "reconcile",
    "run_engine",
    "validate_once",
]
