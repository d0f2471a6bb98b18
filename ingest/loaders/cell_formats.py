"""A workbook cell's value as the spreadsheet shows it, from its number format.

An .xlsx file keeps a cell's value (0.139) and its number format ("0.0%") apart; Excel shows
"13.9%", and that is what a person reads, quotes and asks about. openpyxl reads both but
formats nothing, and no well-kept library renders Excel's format codes, so this renders the
parts that carry meaning: digits and decimals, thousands separators, percent, thousands
scaling, literal text (currency signs, units), sections for negative numbers and zero, and
dates and times. Colours, padding (`_x`) and fill (`*x`) change how a cell looks, not what
it says, and are left out. A format this does not understand (conditions, fractions,
scientific notation, elapsed time) gives the stored value.
"""

from __future__ import annotations

import datetime
import re

# Excel's built-in format 14 is the reader's own short date (05/08/2019 or 08/05/2019 or
# 2019-08-05): the file does not say which, so it is shown as ISO, which nobody misreads.
LOCALE_SHORT_DATE = "mm-dd-yy"

# Quoted text, an escaped character, a bracketed colour or locale, padding, fill, or one
# character.
_TOKEN = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.|.', re.DOTALL)
_DIGITS = set("0#?")
_DATE_PART = re.compile(
    r"yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|am/pm|a/p|\.0+", re.IGNORECASE
)
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class Unshown(Exception):
    """A format code this module does not render: the caller shows the stored value."""


def shown(value: object, code: str) -> str | None:
    """A number, date or time cell's text as its format `code` shows it; None for any other
    value, the General format, or a format not rendered here (the stored value is shown)."""
    if isinstance(value, bool) or not code or code in ("General", "@"):
        return None
    try:
        if isinstance(value, int | float):
            return number_shown(value, code)
        if isinstance(value, datetime.date | datetime.time):
            return date_shown(value, code)
    except Unshown:
        return None
    return None


def _sections(code: str) -> list[list[str]]:
    sections: list[list[str]] = [[]]
    for token in _TOKEN.findall(code):
        if token == ";":
            sections.append([])
        else:
            sections[-1].append(token)
    return sections


def _literal(token: str) -> str | None:
    """The text a token shows as it is, "" for one that shows nothing, None for a
    placeholder."""
    if token.startswith('"'):
        return token[1:-1]
    if token.startswith("\\"):
        return token[1:]
    if token.startswith(("_", "*")):
        return ""
    if token.startswith("["):
        # [$€-407]: a currency sign and a locale; [Red]: a colour; anything else ([>100],
        # [h]) decides what is shown in a way not rendered here.
        if token.startswith("[$"):
            return token[2:-1].split("-", 1)[0]
        inner = token[1:-1]
        if inner.isalpha() and inner.lower().strip("hms"):
            return ""
        raise Unshown(token)
    if token in _DIGITS or token in ".,%":
        return None
    if token.isalpha() or token in "/@":
        # Scientific notation (E+), a date part of a number, a fraction, a text section.
        raise Unshown(token)
    return token


def number_shown(value: float, code: str) -> str:
    """`value` formatted by the Excel number format `code` ("General" excluded)."""
    sections = _sections(code)
    tokens = sections[0]
    sign = "-" if value < 0 else ""
    if value < 0 and len(sections) > 1 and sections[1]:
        # The negative section carries its own sign: (1,000) or -1,000.
        tokens, sign, value = sections[1], "", -value
    elif value == 0 and len(sections) > 2 and sections[2]:
        tokens = sections[2]
    before, pattern, after = "", "", ""
    for token in tokens:
        text = _literal(token)
        if text is None:
            if after.strip():
                raise Unshown(code)  # text between digits (000-0000): not a plain number
            pattern += token
            after = ""  # a space between the digits and their % is not kept
        elif pattern:
            after += text
        else:
            before += text
    if not pattern.strip(".,%"):
        return (before + after).strip()  # a section of text alone ("-" for zero)
    number = abs(value) * 100 ** pattern.count("%")
    digits = pattern.replace("%", "")
    while digits.endswith(","):  # a trailing comma shows thousands
        digits, number = digits[:-1], number / 1000
    whole, _, fraction = digits.partition(".")
    places = sum(1 for c in fraction if c in _DIGITS)
    text = f"{number:,.{places}f}" if "," in whole else f"{number:.{places}f}"
    # A # or ? after the point is a digit shown only when it is not a trailing zero.
    optional = places - fraction.count("0")
    while optional > 0 and text.endswith("0"):
        text, optional = text[:-1], optional - 1
    text = text.rstrip(".") if places and not fraction.count("0") else text
    if "0" not in whole and text.startswith("0"):
        text = text[1:]  # "#.##" shows .5, not 0.5
    return (before + sign + text + "%" * pattern.count("%") + after).strip()


def date_shown(value: datetime.date | datetime.time, code: str) -> str:
    """`value` (a date, time or both) formatted by the Excel date format `code`."""
    if code.lower() == LOCALE_SHORT_DATE:
        raise Unshown(code)
    items: list[tuple[str, str]] = []  # ("part", "yyyy") or ("text", "-")
    run = ""
    for token in _sections(code)[0] + [""]:
        if len(token) == 1:
            run += token
            continue
        at = 0
        for match in _DATE_PART.finditer(run):
            items += [("text", run[at : match.start()]), ("part", match.group().lower())]
            at = match.end()
        items.append(("text", run[at:]))
        run = ""
        if token:
            if token.startswith("[") and token[1:-1].lower().strip("hms") == "":
                raise Unshown(token)  # elapsed time, [h]:mm
            items.append(("text", _literal(token) or ""))
    parts = [part for kind, part in items if kind == "part"]
    twelve_hour = any(part in ("am/pm", "a/p") for part in parts)
    shown = []
    at = 0
    for kind, part in items:
        if kind == "text":
            shown.append(part)
            continue
        shown.append(_date_part(part, value, twelve_hour, _minutes(parts, at)))
        at += 1
    return "".join(shown).strip()


def _minutes(parts: list[str], at: int) -> bool:
    """m or mm right after an hour or right before seconds is minutes (Excel's rule)."""
    if parts[at] not in ("m", "mm"):
        return False
    before = parts[at - 1] if at > 0 else ""
    after = parts[at + 1] if at + 1 < len(parts) else ""
    return before.startswith("h") or after.startswith("s")


def _get(value: datetime.date | datetime.time, name: str) -> int:
    return int(getattr(value, name, 0))


def _date_part(
    part: str, value: datetime.date | datetime.time, twelve_hour: bool, minutes: bool
) -> str:
    if minutes:
        return f"{_get(value, 'minute'):0{len(part)}d}"
    if part in ("am/pm", "a/p"):
        morning = _get(value, "hour") < 12
        return ("AM" if morning else "PM") if part == "am/pm" else ("A" if morning else "P")
    if part.startswith("."):
        return f"{_get(value, 'microsecond') / 1e6:.{len(part) - 1}f}"[1:]
    if part.startswith("h"):
        hour = _get(value, "hour")
        if twelve_hour:
            hour = hour % 12 or 12
        return f"{hour:0{len(part)}d}"
    if part.startswith("s"):
        return f"{_get(value, 'second'):0{len(part)}d}"
    if not isinstance(value, datetime.date):
        raise Unshown(part)  # a date part of a time alone
    if part.startswith("y"):
        return str(value.year) if part == "yyyy" else f"{value.year % 100:02d}"
    if part.startswith("m"):
        month = _MONTHS[value.month - 1]
        names = {"m": str(value.month), "mm": f"{value.month:02d}", "mmm": month[:3]}
        return names.get(part, month[0] if part == "mmmmm" else month)
    day = _DAYS[value.weekday()]
    return {"d": str(value.day), "dd": f"{value.day:02d}", "ddd": day[:3]}.get(part, day)
