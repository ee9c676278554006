"""The currency tables: ISO 4217's codes, their exponents from Babel where CLDR agrees with
ISO 4217, and nothing of Babel's data read at import."""

from __future__ import annotations

import subprocess
import sys

from babel.numbers import get_currency_precision, list_currencies

from agent.data.currency import CURRENCY_EXPONENTS, ISO_4217_CODES, is_currency_code

# ISO 4217's minor units (the engine's answers before Babel supplied them): every other active
# code has two.
ZERO = set("BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split())
THREE = set("BHD IQD JOD KWD LYD OMR TND".split())
FOUR = {"CLF", "UYW"}


def test_the_exponents_are_iso_4217s() -> None:
    by_exponent: dict[int, set[str]] = {}
    for code, exponent in CURRENCY_EXPONENTS.items():
        by_exponent.setdefault(exponent, set()).add(code)
    assert by_exponent[0] == ZERO
    assert by_exponent[3] == THREE
    assert by_exponent[4] == FOUR
    assert by_exponent[2] == ISO_4217_CODES - ZERO - THREE - FOUR
    assert set(by_exponent) == {0, 2, 3, 4}
    assert set(CURRENCY_EXPONENTS) == ISO_4217_CODES
    assert len(CURRENCY_EXPONENTS) == len(ISO_4217_CODES) == 166


def test_babel_knows_every_code_and_differs_only_where_iso_is_kept() -> None:
    assert list_currencies() >= ISO_4217_CODES
    differ = {c for c in ISO_4217_CODES if get_currency_precision(c) != CURRENCY_EXPONENTS[c]}
    assert differ == set("AFN ALL COP HUF IDR IRR IQD KPW LAK LBP MGA MMK SOS SYP YER".split())


def test_a_currency_code_is_an_active_iso_4217_one() -> None:
    assert is_currency_code(" usd ")
    assert is_currency_code("XCG")
    assert "EUR" in CURRENCY_EXPONENTS
    assert CURRENCY_EXPONENTS.get("DEM") is None
    for withdrawn_or_not_money in ("DEM", "HRK", "XAU", "XXX", "US", ""):
        assert not is_currency_code(withdrawn_or_not_money)


def test_importing_the_engine_and_the_bot_reads_none_of_babels_data() -> None:
    code = (
        "import bot.composition, agent.data.pipeline, agent.data.reconcile, agent.data.profile\n"
        "import babel.core\n"
        "assert babel.core._global_data is None, 'Babel data read at import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
