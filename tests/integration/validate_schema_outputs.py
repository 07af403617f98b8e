#!/usr/bin/python3
"""Independent check of `sluice generate --json-schema` outputs: Python's jsonschema package
(Draft 2020-12, with format checking), not Sluice's grammar code.

Arguments: pairs of SCHEMA.json OUTPUT.jsonl. Prints one JSON summary line:
{"rows": N, "finished": F, "failures": [...]} and exits 1 when any failure was found.
A row that finished with "stop" must have valid: true, parse as JSON and validate against its
schema; a row cut off with "length" must have valid: false.
"""
import datetime
import json
import re
import sys

import jsonschema

# Debian 12's jsonschema (4.10) checks date, email and uuid but not RFC 3339 times without an
# extra package Debian does not have: the two checks are written out here from RFC 3339.
TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$")


def is_time(text):
    m = TIME.match(text) if isinstance(text, str) else None
    if not m:
        return not isinstance(text, str)
    hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m.group(6) is not None and (int(m.group(6)) > 23 or int(m.group(7)) > 59):
        return False
    return hour <= 23 and minute <= 59 and second <= 60


def is_date_time(text):
    if not isinstance(text, str):
        return True
    parts = re.split("[Tt]", text, maxsplit=1)
    if len(parts) != 2 or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", parts[0]):
        return False
    try:
        datetime.date.fromisoformat(parts[0])
    except ValueError:
        return False
    return is_time(parts[1])


def format_checker():
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checks("time")(is_time)
    checker.checks("date-time")(is_date_time)
    return checker


def check(schema_path, output_path, summary):
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema, format_checker=format_checker())
    with open(output_path, encoding="utf-8") as f:
        for line_number, line in enumerate(f, 1):
            row = json.loads(line)
            where = f"{output_path}:{line_number} ({schema_path})"
            summary["rows"] += 1
            reason = row.get("finish_reason")
            if reason == "length":
                if row.get("valid") is not False:
                    summary["failures"].append(f"{where}: cut off but valid is {row.get('valid')}")
                continue
            if reason != "stop":
                summary["failures"].append(f"{where}: finish_reason {reason}: {row.get('error')}")
                continue
            summary["finished"] += 1
            if row.get("valid") is not True:
                summary["failures"].append(f"{where}: finished but valid is {row.get('valid')}")
            try:
                value = json.loads(row["output"])
            except json.JSONDecodeError as e:
                summary["failures"].append(f"{where}: not JSON ({e}): {row['output']!r}")
                continue
            errors = [e.message for e in validator.iter_errors(value)]
            if errors:
                summary["failures"].append(f"{where}: {errors[0]}: {row['output']!r}")


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit("usage: validate_schema_outputs.py SCHEMA OUTPUT [SCHEMA OUTPUT ...]")
    summary = {"rows": 0, "finished": 0, "failures": []}
    for i in range(0, len(args), 2):
        check(args[i], args[i + 1], summary)
    print(json.dumps(summary))
    sys.exit(1 if summary["failures"] else 0)


if __name__ == "__main__":
    main()
