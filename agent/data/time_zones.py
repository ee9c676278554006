"""Time zones: what a zone text names, decided once per distinct text.

A zone column's cells, or the zone written after a timestamp (`timestamp_formats.ZONE_SUFFIX`),
may be an offset (`+02:00`, `UTC-5`), an abbreviation (`CET`, `PDT`), a Windows name
(`W. Europe Standard Time`), a dashboard's (Rails) name (`Pacific Time (US & Canada)`,
`Berlin`) or an IANA name (`Europe/Berlin`). Inference (the proposal's notes) and loading
(`normalize.zones`, in SQL) read every text by `zone_of`, so both say the same of it.
Abbreviations are fixed offsets (a row that says PDT is UTC-07:00); names follow their IANA
zone's rules, so a daylight-saving change inside a file reads right.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# Abbreviations exports write, as fixed offsets in minutes east of UTC: a row that says PDT was
# written in daylight time, whatever its date.
ZONE_ABBREVIATIONS = {
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 60, "BST": 60, "CET": 60, "CEST": 120,
    "MEZ": 60, "MESZ": 120, "EET": 120, "EEST": 180, "MSK": 180, "IST": 330, "SGT": 480,
    "HKT": 480, "AWST": 480, "JST": 540, "KST": 540, "ACST": 570, "ACDT": 630, "AEST": 600,
    "AEDT": 660, "NZST": 720, "NZDT": 780, "HST": -600, "AKST": -540, "AKDT": -480, "PST": -480,
    "PDT": -420, "MST": -420, "MDT": -360, "CST": -360, "CDT": -300, "EST": -300, "EDT": -240,
    "AST": -240, "ADT": -180, "NST": -210, "NDT": -150,
}  # fmt: skip
# The abbreviations above that other places write for another zone: (place, minutes, an IANA
# zone there), the reading above first. A file's own zone says which is meant (`resolve_zone`).
ZONE_PLACES: dict[str, tuple[tuple[str, int, str], ...]] = {
    "CST": (
        ("US Central", -360, "America/Chicago"),
        ("China", 480, "Asia/Shanghai"),
        ("Cuba", -300, "America/Havana"),
    ),
    "IST": (
        ("India", 330, "Asia/Kolkata"),
        ("Ireland", 60, "Europe/Dublin"),
        ("Israel", 120, "Asia/Jerusalem"),
    ),
    "AST": (("Atlantic", -240, "America/Halifax"), ("Arabia", 180, "Asia/Riyadh")),
    "BST": (("British Summer Time", 60, "Europe/London"), ("Bangladesh", 360, "Asia/Dhaka")),
}
# Names that are not IANA names -> the IANA zone whose rules they follow (so a daylight-saving
# change inside a file reads right). Windows names: no maintained library for them is a
# dependency (tzlocal, PyICU), so the common ones of CLDR's windowsZones table are listed. Rails
# names (Square, Shopify): those not a city of their zone (`Berlin` is found as Europe/Berlin).
_NAMES = {
    "Dateline Standard Time": "Etc/GMT+12",
    "Hawaiian Standard Time": "Pacific/Honolulu", "Alaskan Standard Time": "America/Anchorage",
    "Pacific Standard Time (Mexico)": "America/Tijuana",
    "Pacific Standard Time": "America/Los_Angeles", "US Mountain Standard Time": "America/Phoenix",
    "Mountain Standard Time (Mexico)": "America/Mazatlan",
    "Mountain Standard Time": "America/Denver",
    "Central America Standard Time": "America/Guatemala",
    "Central Standard Time": "America/Chicago",
    "Central Standard Time (Mexico)": "America/Mexico_City",
    "Canada Central Standard Time": "America/Regina", "SA Pacific Standard Time": "America/Bogota",
    "Eastern Standard Time": "America/New_York", "Eastern Standard Time (Mexico)": "America/Cancun",
    "US Eastern Standard Time": "America/Indiana/Indianapolis",
    "Venezuela Standard Time": "America/Caracas", "Atlantic Standard Time": "America/Halifax",
    "SA Western Standard Time": "America/La_Paz", "Pacific SA Standard Time": "America/Santiago",
    "Newfoundland Standard Time": "America/St_Johns",
    "E. South America Standard Time": "America/Sao_Paulo",
    "Argentina Standard Time": "America/Argentina/Buenos_Aires",
    "SA Eastern Standard Time": "America/Cayenne", "Greenland Standard Time": "America/Nuuk",
    "Montevideo Standard Time": "America/Montevideo", "Azores Standard Time": "Atlantic/Azores",
    "Cape Verde Standard Time": "Atlantic/Cape_Verde", "Coordinated Universal Time": "UTC",
    "GMT Standard Time": "Europe/London", "Greenwich Standard Time": "Atlantic/Reykjavik",
    "Morocco Standard Time": "Africa/Casablanca", "W. Europe Standard Time": "Europe/Berlin",
    "Central Europe Standard Time": "Europe/Budapest", "Romance Standard Time": "Europe/Paris",
    "Central European Standard Time": "Europe/Warsaw",
    "W. Central Africa Standard Time": "Africa/Lagos", "GTB Standard Time": "Europe/Bucharest",
    "E. Europe Standard Time": "Europe/Chisinau", "FLE Standard Time": "Europe/Kiev",
    "Egypt Standard Time": "Africa/Cairo", "South Africa Standard Time": "Africa/Johannesburg",
    "Israel Standard Time": "Asia/Jerusalem", "Turkey Standard Time": "Europe/Istanbul",
    "Arabic Standard Time": "Asia/Baghdad", "Arab Standard Time": "Asia/Riyadh",
    "Russian Standard Time": "Europe/Moscow", "E. Africa Standard Time": "Africa/Nairobi",
    "Iran Standard Time": "Asia/Tehran", "Arabian Standard Time": "Asia/Dubai",
    "Pakistan Standard Time": "Asia/Karachi", "India Standard Time": "Asia/Kolkata",
    "Nepal Standard Time": "Asia/Kathmandu", "Bangladesh Standard Time": "Asia/Dhaka",
    "SE Asia Standard Time": "Asia/Bangkok", "China Standard Time": "Asia/Shanghai",
    "Singapore Standard Time": "Asia/Singapore", "Taipei Standard Time": "Asia/Taipei",
    "W. Australia Standard Time": "Australia/Perth", "Tokyo Standard Time": "Asia/Tokyo",
    "Korea Standard Time": "Asia/Seoul", "Cen. Australia Standard Time": "Australia/Adelaide",
    "AUS Central Standard Time": "Australia/Darwin",
    "E. Australia Standard Time": "Australia/Brisbane",
    "AUS Eastern Standard Time": "Australia/Sydney", "Tasmania Standard Time": "Australia/Hobart",
    "New Zealand Standard Time": "Pacific/Auckland", "Fiji Standard Time": "Pacific/Fiji",
    "West Pacific Standard Time": "Pacific/Port_Moresby",
    "International Date Line West": "Etc/GMT+12", "American Samoa": "Pacific/Pago_Pago",
    "Midway Island": "Pacific/Midway", "Hawaii": "Pacific/Honolulu", "Alaska": "America/Juneau",
    "Pacific Time (US & Canada)": "America/Los_Angeles", "Arizona": "America/Phoenix",
    "Mountain Time (US & Canada)": "America/Denver", "Central America": "America/Guatemala",
    "Central Time (US & Canada)": "America/Chicago", "Guadalajara": "America/Mexico_City",
    "Saskatchewan": "America/Regina", "Quito": "America/Lima",
    "Eastern Time (US & Canada)": "America/New_York",
    "Indiana (East)": "America/Indiana/Indianapolis", "Atlantic Time (Canada)": "America/Halifax",
    "Georgetown": "America/Guyana", "Newfoundland": "America/St_Johns",
    "Brasilia": "America/Sao_Paulo", "Greenland": "America/Nuuk",
    "Mid-Atlantic": "Atlantic/South_Georgia", "Cape Verde Is.": "Atlantic/Cape_Verde",
    "Edinburgh": "Europe/London", "Bern": "Europe/Zurich", "West Central Africa": "Africa/Algiers",
    "Pretoria": "Africa/Johannesburg", "St. Petersburg": "Europe/Moscow",
    "Abu Dhabi": "Asia/Muscat", "Astana": "Asia/Almaty", "Ekaterinburg": "Asia/Yekaterinburg",
    "Islamabad": "Asia/Karachi", "Chennai": "Asia/Kolkata", "Mumbai": "Asia/Kolkata",
    "New Delhi": "Asia/Kolkata", "Sri Jayawardenepura": "Asia/Colombo", "Hanoi": "Asia/Bangkok",
    "Beijing": "Asia/Shanghai", "Osaka": "Asia/Tokyo", "Sapporo": "Asia/Tokyo",
    "Wellington": "Pacific/Auckland", "New Caledonia": "Pacific/Noumea",
    "Solomon Is.": "Pacific/Guadalcanal", "Marshall Is.": "Pacific/Majuro",
    "Chatham Is.": "Pacific/Chatham", "Nuku'alofa": "Pacific/Tongatapu",
    "Tokelau Is.": "Pacific/Fakaofo", "Samoa": "Pacific/Apia",
    "Pacific Time": "America/Los_Angeles", "Mountain Time": "America/Denver",
    "Central Time": "America/Chicago", "Eastern Time": "America/New_York",
    "PT": "America/Los_Angeles", "MT": "America/Denver", "CT": "America/Chicago",
    "ET": "America/New_York",
}  # fmt: skip
ZONE_NAMES = {name.lower(): zone for name, zone in _NAMES.items()}
"""The names above, by their lower case."""

_OFFSET = re.compile(r"^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
# A Windows display name: `(UTC-08:00) Pacific Time (US & Canada)`, `(UTC+01:00) Amsterdam, …`.
_DISPLAY = re.compile(r"^\((?:UTC|GMT)\s*(?:[+-]\d{1,2}(?::?\d\d)?)?\)\s*(.+)$", re.IGNORECASE)
_IANA = re.compile(r"^[A-Za-z][\w+-]*(?:/[\w+-]+)+$|^[A-Z]{3,4}\d[A-Z]{3,4}$")
_CITY = re.compile(r"^[A-Za-z][A-Za-z' -]*$")
_REGIONS = ("America", "Europe", "Asia", "Africa", "Australia", "Pacific", "Atlantic", "Indian")
_REGIONS_ALSO = ("America/Argentina", "America/Indiana", "America/Kentucky", "Antarctica")


@dataclass(frozen=True)
class Zone:
    """What a zone text names: a fixed offset (`minutes` east of UTC), as an offset or an
    abbreviation says (PDT is UTC-07:00 whatever the date), or an IANA zone (`name`), whose rules
    give each date its offset. `named` is false for a text that is a zone only where a zone is
    expected: a bare offset (`+02:00`) or a city (`London`)."""

    minutes: int | None = None
    name: str | None = None
    named: bool = True

    def __str__(self) -> str:
        return self.name if self.name is not None else utc_offset(self.minutes or 0)


def utc_offset(minutes: int) -> str:
    """`UTC-07:00` for -420."""
    sign = "-" if minutes < 0 else "+"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


@functools.lru_cache(maxsize=4096)
def zone_of(text: str, *, cities: bool = False) -> Zone | None:
    """The zone `text` names, or None: an offset (`+02:00`, `UTC-5`), an abbreviation (`CET`,
    `PDT`; one that names several zones as `ZONE_ABBREVIATIONS` reads it), a Windows or Rails
    name (`W. Europe Standard Time`, `Pacific Time (US & Canada)`), an IANA name
    (`Europe/Berlin`) and, with `cities`, a city that names an IANA zone (`Berlin`)."""
    value = " ".join(text.split())
    if match := _OFFSET.match(value):
        minutes = int(match.group(2)) * 60 + int(match.group(3) or 0)
        sign = -1 if match.group(1) == "-" else 1
        return Zone(minutes=sign * minutes, named=value[0].isalpha()) if minutes <= 840 else None
    if value.upper() in ZONE_ABBREVIATIONS:
        return Zone(minutes=ZONE_ABBREVIATIONS[value.upper()])
    if value.lower() in ZONE_NAMES:
        return Zone(name=ZONE_NAMES[value.lower()])
    if display := _DISPLAY.match(value):
        rest = display.group(1)
        return zone_of(rest, cities=True) or zone_of(rest.split(",")[0], cities=True)
    if _IANA.match(value):
        name = next(filter(_is_zone, (value, value.title())), None)
        return None if name is None else Zone(name=name)
    if cities and _CITY.match(value):
        city = "_".join(word[:1].upper() + word[1:] for word in value.split())
        name = next(filter(_is_zone, (f"{r}/{city}" for r in _REGIONS + _REGIONS_ALSO)), None)
        return None if name is None else Zone(name=name, named=False)
    return None


def _is_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def resolve_zone(text: str, default: str | None) -> Zone | None:
    """`zone_of(text)` as a file whose own zone is `default` means it (cities included): an
    abbreviation that names several zones is the one of them `default` has (CST under
    Asia/Shanghai is UTC+08:00), else the one `ZONE_ABBREVIATIONS` reads."""
    place = zone_place(text, default)
    return Zone(minutes=place[1]) if place is not None else zone_of(text, cities=True)


def zone_place(text: str, default: str | None) -> tuple[str, int, str] | None:
    """For an abbreviation that names several zones, the place (`ZONE_PLACES`) whose offset the
    IANA zone `default` has; None for any other text, or when `default` has none of them."""
    places = ZONE_PLACES.get(text.strip().upper(), ())
    offsets = _offsets(default) if places and default else frozenset()
    return next((place for place in places if place[1] in offsets), None)


@functools.lru_cache(maxsize=256)
def _offsets(name: str) -> frozenset[int]:
    """The offsets (minutes) the IANA zone `name` has this year, winter and summer."""
    if not _is_zone(name):
        return frozenset()
    zone, year = ZoneInfo(name), datetime.now(UTC).year
    found = (zone.utcoffset(datetime(year, month, 15)) for month in (1, 7))
    return frozenset(int(offset.total_seconds()) // 60 for offset in found if offset is not None)
