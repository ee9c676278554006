"""ISO 4217 currency codes and their minor-unit exponents.

Money is kept exact as integer minor units of each row's currency, so every amount needs the
exponent of its currency: JPY has none, KWD and BHD have three, most have two.
"""

from __future__ import annotations

_ZERO_DECIMAL = frozenset(
    "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split()
)
_THREE_DECIMAL = frozenset("BHD IQD JOD KWD LYD OMR TND".split())
_FOUR_DECIMAL = frozenset("CLF UYW".split())
_TWO_DECIMAL = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP
    BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP
    GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK
    LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK
    NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP
    STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER
    ZAR ZMW ZWG""".split()
)

CURRENCY_EXPONENTS: dict[str, int] = {
    **{code: 2 for code in _TWO_DECIMAL},
    **{code: 0 for code in _ZERO_DECIMAL},
    **{code: 3 for code in _THREE_DECIMAL},
    **{code: 4 for code in _FOUR_DECIMAL},
}

CURRENCY_SYMBOLS = "$€£¥₹₩₽₺₪₫₦₱฿₴₲₡₵₭₮₸"

SYMBOL_CODES: dict[str, str] = {
    "€": "EUR", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY", "₪": "ILS", "₫": "VND",
    "₦": "NGN", "฿": "THB", "₴": "UAH", "₲": "PYG", "₵": "GHS", "₭": "LAK", "₮": "MNT",
    "₸": "KZT",
}  # fmt: skip
"""The symbols that stand for one currency only (`$`, `£`, `¥`, `₱` and `₡` stand for several):
an amount written with one of them names its currency."""


def is_currency_code(value: str) -> bool:
    """Whether `value` (any case, surrounding spaces allowed) is an active ISO 4217 code."""
    return value.strip().upper() in CURRENCY_EXPONENTS
