"""`chart`: are the figures read off a chart the expected ones?

Four kinds of figure are found in both texts:
- currency: a symbol ($ EUR-sign GBP-sign YEN-sign) or a currency word (dollars, USD, euros,
  EUR, pounds, GBP, yen, JPY) with an amount, thousands separators and K/M/B or thousand/
  million/billion scales ("$2,400,000" equals "$2.4M"); matched within a relative tolerance
  (option `tolerance`, default 0.15); a plain "5 bottles" is not currency;
- percentages, with sign, matched exactly ("58%" equals "58.0 %", not "-58%");
- dates, compared as dates at the precision the expected text gives: ISO days and months
  ("2024-03-15", "2024/03", "2024-03"), month names with a year ("March 2024", "Mar. 2024",
  "March 15, 2024", "15 March 2024"), quarters ("Q1", "Q1 2024", "first quarter of 2024",
  "2024 Q1") and years (1900-2099). Every component the expected date gives (year,
  quarter, month, day) must be stated and agree: "2024-03-16" does not match "2024-03-15",
  nor "April 2024" "March 2024"; a month gives its quarter ("March 2024" matches "Q1 2024"),
  a quarter does not give a month. Month names count only next to a year (so "may" and
  "march" as words are not dates); numeric day/month orders other than year first are
  ambiguous and not read.
Each expected figure needs a figure of the same kind in the answer; the score is the share
found. An expected amount of zero matches only an answer of zero (no division by zero).
Default pass threshold 0.7 (as AgentV's `chart_validator.py` uses).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from visioneval.validators.result import EvalResult

THRESHOLD = 0.7
TOLERANCE = 0.15
SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
         "billion": 1e9, "t": 1e12, "trillion": 1e12}
SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
WORDS = {"dollar": "USD", "dollars": "USD", "usd": "USD", "euro": "EUR", "euros": "EUR",
         "eur": "EUR", "pound": "GBP", "pounds": "GBP", "gbp": "GBP", "yen": "JPY",
         "jpy": "JPY"}
NUMBER = r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
SCALE_RE = r"(?:\s*(?P<scale>thousand|million|billion|trillion|bn|mn|[kmbt])\b)?"
SYMBOL_FIRST = re.compile(r"(?P<sign>-)?\s*(?P<sym>[$€£¥])\s*(?P<sign2>-)?\s*" + NUMBER
                          + SCALE_RE, re.IGNORECASE)
WORD_AFTER = re.compile(r"(?P<sign>-)?" + NUMBER + SCALE_RE
                        + r"\s*(?P<word>dollars?|usd|euros?|eur|pounds?|gbp|yen|jpy)\b",
                        re.IGNORECASE)
WORD_FIRST = re.compile(r"\b(?P<word>usd|eur|gbp|jpy)\s*(?P<sign>-)?" + NUMBER + SCALE_RE,
                        re.IGNORECASE)
PERCENT = re.compile(r"(?P<sign>[-+−])?\s*(?P<num>\d+(?:\.\d+)?)\s*(?:%|percent\b)",
                     re.IGNORECASE)
MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
          "sep": 9, "oct": 10, "nov": 11, "dec": 12}
MONTH = (r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
         r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
YEAR4 = r"(?P<year>(?:19|20)\d{2})"
DAY = r"(?P<day>0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
DATES = [re.compile(p, re.IGNORECASE) for p in (
    YEAR4 + r"[-/](?P<month>0?[1-9]|1[0-2])(?:[-/](?P<day>0?[1-9]|[12]\d|3[01]))?(?![\d/-])",
    r"\b" + MONTH + r"\s+" + DAY + r",?\s+" + YEAR4 + r"\b",
    r"\b" + DAY + r"\s+(?:of\s+)?" + MONTH + r",?\s+" + YEAR4 + r"\b",
    r"\b" + MONTH + r",?\s+(?:of\s+)?" + YEAR4 + r"\b",
)]
QUARTER = re.compile(r"\b(?:Q(?P<q>[1-4])|(?P<ord>first|second|third|fourth)\s+quarter)"
                     r"(?:\s*(?:of\s*)?'?(?P<year>(?:19|20)\d{2}))?\b", re.IGNORECASE)
YEAR_QUARTER = re.compile(r"\b(?P<year>(?:19|20)\d{2})[\s-]?Q(?P<q>[1-4])\b", re.IGNORECASE)
YEAR = re.compile(r"(?<![\d$€£¥.,])\b(?P<year>(?:19|20)\d{2})\b(?![.,]\d|\s*%)")
ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}


def _amount(match: re.Match) -> float:
    value = float(match.group("num").replace(",", ""))
    scale = (match.group("scale") or "").lower()
    value *= SCALE.get(scale, 1.0)
    negative = match.group("sign") or (match.groupdict().get("sign2"))
    return -value if negative else value


def currencies(text: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    taken: list[tuple[int, int]] = []
    for pattern in (SYMBOL_FIRST, WORD_AFTER, WORD_FIRST):
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue
            code = SYMBOLS.get(match.groupdict().get("sym") or "") or \
                WORDS[(match.groupdict().get("word") or "").lower()]
            found.append({"kind": "currency", "currency": code, "value": _amount(match),
                          "text": match.group(0).strip()})
            taken.append(match.span())
    return found


def percentages(text: str) -> list[dict[str, Any]]:
    out = []
    for match in PERCENT.finditer(text):
        value = float(match.group("num"))
        if match.group("sign") in ("-", "−"):
            value = -value
        out.append({"kind": "percent", "value": value, "text": match.group(0).strip()})
    return out


def _date(text: str, year: str | None = None, quarter: int | None = None,
          month: int | None = None, day: int | None = None) -> dict[str, Any]:
    parts = {"year": int(year) if year else None, "quarter": quarter, "month": month,
             "day": day}
    if month is not None:
        parts["quarter"] = (month - 1) // 3 + 1
    value = f"{year}-{month:02d}" if year and month else f"Q{quarter}" if quarter else year
    if day is not None:
        value = f"{value}-{day:02d}"
    elif quarter and year and not month:
        value = f"Q{quarter} {year}"
    return {"kind": "date", "value": value, "parts": parts, "given": sorted(
        k for k in ("year", "quarter", "month", "day")
        if parts[k] is not None and not (k == "quarter" and month is not None)),
            "text": text.strip()}


def periods(text: str) -> list[dict[str, Any]]:
    """Dates of every precision, most precise forms first; a span is read once."""
    out: list[tuple[int, dict[str, Any]]] = []
    spans: list[tuple[int, int]] = []

    def free(match: re.Match) -> bool:
        return not any(s < match.end() and match.start() < e for s, e in spans)

    for pattern in DATES:
        for match in pattern.finditer(text):
            if not free(match):
                continue
            groups = match.groupdict()
            month = int(groups["month"]) if groups.get("month") else \
                MONTHS[groups["mon"].lower()[:3]]
            day = int(groups["day"]) if groups.get("day") else None
            out.append((match.start(), _date(match.group(0), groups["year"], month=month,
                                             day=day)))
            spans.append(match.span())
    for pattern in (YEAR_QUARTER, QUARTER):
        for match in pattern.finditer(text):
            if not free(match):
                continue
            groups = match.groupdict()
            quarter = int(groups["q"] or ORDINAL[groups["ord"].lower()])
            out.append((match.start(), _date(match.group(0), groups["year"], quarter)))
            spans.append(match.span())
    for match in YEAR.finditer(text):
        if free(match):
            out.append((match.start(), _date(match.group(0), match.group("year"))))
    return [figure for _, figure in sorted(out, key=lambda item: item[0])]


def figures(text: str) -> list[dict[str, Any]]:
    return currencies(text) + percentages(text) + periods(text)


def _matches(want: dict[str, Any], got: dict[str, Any], tolerance: float) -> bool:
    if want["kind"] != got["kind"]:
        return False
    if want["kind"] == "currency":
        if want["currency"] != got["currency"]:
            return False
        if want["value"] == 0:
            return got["value"] == 0
        return abs(got["value"] - want["value"]) <= tolerance * abs(want["value"])
    if want["kind"] == "date":  # every component the expected date gives must agree
        return all(got["parts"][k] == want["parts"][k] for k in want["given"])
    return got["value"] == want["value"]


def validate(output: str, expected_output: str, input_text: str = "",
             threshold: float = THRESHOLD, tolerance: float = TOLERANCE,
             **_: Any) -> dict[str, Any]:
    expected = figures(expected_output)
    if not expected:
        return EvalResult.error("expected_output holds no currency amount, percentage or "
                                "date").model_dump()
    answer = figures(output)
    unused = list(answer)
    matched, missing = [], []
    for want in expected:
        hit = next((got for got in unused if _matches(want, got, tolerance)), None)
        if hit is None:
            missing.append(want)
        else:
            unused.remove(hit)
            matched.append({"expected": want["text"], "found": hit["text"]})
    return EvalResult.processed(len(matched) / len(expected), threshold, tolerance=tolerance,
                                matched=matched, missing=[m["text"] for m in missing],
                                expected=expected, found=answer).model_dump()


if __name__ == "__main__":
    from visioneval.validators.protocol import main

    sys.exit(main(validate))
