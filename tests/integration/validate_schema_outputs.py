#!/usr/bin/env python3
"""Independent check of `sluice generate --json-schema` outputs: Python's jsonschema package
(Draft 2020-12, with format checking), not Sluice's grammar code.

Arguments: pairs of SCHEMA.json OUTPUT.jsonl. Prints one JSON summary line:
{"rows": N, "finished": F, "failures": [...]} and exits 1 when any failure was found.
A row that finished with "stop" must have valid: true, parse as JSON and validate against its
schema; a row cut off with "length" must have valid: false.
"""
import json
import sys

import jsonschema


def check(schema_path, output_path, summary):
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
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
