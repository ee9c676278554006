"""ISO 4217 currency codes and their minor-unit exponents.

Money is kept exact as integer minor units of each row's currency, so every amount needs the
exponent of its currency: JPY has none, KWD and BHD have three, most have two. The exponents
are Babel's (CLDR's `get_currency_precision`), read on first use, never at import; where CLDR
shows a currency with fewer digits than ISO 4217 gives it, ISO's stand (`_ISO_MINOR_UNITS`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping

from babel.numbers import get_currency_precision

ISO_4217_CODES = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD
    BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP
    ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK
    JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK
    MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
    PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS
    TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG
    XOF XPF YER ZAR ZMW ZWG""".split()
)
"""The active ISO 4217 codes. Kept by hand: Babel has no such list (`list_currencies` is
CLDR's 300-odd, withdrawn ones such as DEM and HRK and metals such as XAU among them)."""

_ISO_MINOR_UNITS = {
    "AFN": 2, "ALL": 2, "COP": 2, "HUF": 2, "IDR": 2, "IRR": 2, "KPW": 2, "LAK": 2, "LBP": 2,
    "MGA": 2, "MMK": 2, "SOS": 2, "SYP": 2, "YER": 2, "IQD": 3,
}  # fmt: skip
"""ISO 4217's exponent where CLDR's differs (CLDR: 0, the digits it shows): exports write
amounts in ISO's minor units, and an amount's digits are checked against them."""


@functools.cache
def _exponents() -> dict[str, int]:
    """Every code's exponent (Babel's data is read here, on the first call)."""
    return {
        code: _ISO_MINOR_UNITS.get(code, get_currency_precision(code))
        for code in sorted(ISO_4217_CODES)
    }


class _Exponents(Mapping[str, int]):
    """The minor-unit exponent of each active ISO 4217 code. Asking whether a code is one
    (`in`, iterating) reads only `ISO_4217_CODES`; an exponent reads Babel's data once."""

    def __getitem__(self, code: str) -> int:
        return _exponents()[code]

    def __contains__(self, code: object) -> bool:
        return code in ISO_4217_CODES

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(ISO_4217_CODES))

    def __len__(self) -> int:
        return len(ISO_4217_CODES)


CURRENCY_EXPONENTS: Mapping[str, int] = _Exponents()

CURRENCY_SYMBOLS = "$€£¥₹₩₽₺₪₫₦₱฿₴₲₡₵₭₮₸"
"""The symbols an amount may be written with. Kept by hand: Babel keeps symbols per locale and
no narrow ones (RUB is `RUB` in `en`, GHS is `GH₵`), and the regexes built of these are built
at import, where Babel's data is not read."""

SYMBOL_CODES: dict[str, str] = {
    "€": "EUR", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY", "₪": "ILS", "₫": "VND",
    "₦": "NGN", "฿": "THB", "₴": "UAH", "₲": "PYG", "₵": "GHS", "₭": "LAK", "₮": "MNT",
    "₸": "KZT",
}  # fmt: skip
"""The symbols that stand for one currency only (`$`, `£`, `¥`, `₱` and `₡` stand for several):
an amount written with one of them names its currency. Kept by hand: which symbol names one
currency is the project's reading, not in Babel's data (its locales write `₡` for CRC alone)."""


def is_currency_code(value: str) -> bool:
    """Whether `value` (any case, surrounding spaces allowed) is an active ISO 4217 code."""
    return value.strip().upper() in ISO_4217_CODES
