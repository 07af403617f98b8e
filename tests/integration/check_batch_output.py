#!/usr/bin/env python3
"""Checks an OpenAI Batch output file against its input file.

Usage: check_batch_output.py INPUT OUTPUT. Every input line's custom_id appears once, in input
order; a line answered has response.status_code 200 and a body with choices (n of them) and
usage; a line refused has response null and an error; completion tokens stay within the line's
own max_tokens. Prints a JSON summary; exits 1 with the problems otherwise.
"""
import json
import sys


def main():
    inputs = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
    outputs = [json.loads(line) for line in open(sys.argv[2], encoding="utf-8") if line.strip()]
    problems = []
    if [o.get("custom_id") for o in outputs] != [i["custom_id"] for i in inputs]:
        problems.append("custom_ids differ from the input's, in order: %r" %
                        [o.get("custom_id") for o in outputs])
    ids = [o.get("id") for o in outputs]
    if len(set(ids)) != len(ids) or not all(str(i).startswith("batch_req_") for i in ids):
        problems.append("ids are not distinct batch_req_ ids: %r" % ids)
    summary = {"answered": 0, "errors": {}}
    for line, out in zip(inputs, outputs):
        cid = line["custom_id"]
        if line["url"] not in ("/v1/chat/completions", "/v1/completions"):
            error = out.get("error") or {}
            if out.get("response") is not None or line["url"] not in error.get("message", ""):
                problems.append("%s: expected an error naming %s, got %r" % (cid, line["url"], out))
            summary["errors"][cid] = error.get("message", "")
            continue
        response = out.get("response") or {}
        body = response.get("body") or {}
        if out.get("error") is not None or response.get("status_code") != 200:
            problems.append("%s: not answered: %r" % (cid, out))
            continue
        summary["answered"] += 1
        want_object = "chat.completion" if line["url"] == "/v1/chat/completions" else "text_completion"
        if body.get("object") != want_object or body.get("model") != line["body"]["model"]:
            problems.append("%s: body object/model wrong: %r" % (cid, body))
        choices = body.get("choices") or []
        n = line["body"].get("n", 1)
        if len(choices) != n or [c.get("index") for c in choices] != list(range(n)):
            problems.append("%s: expected %d choices, got %r" % (cid, n, choices))
        for c in choices:
            text = c["message"]["content"] if want_object == "chat.completion" else c.get("text")
            if not isinstance(text, str) or c.get("finish_reason") not in ("stop", "length"):
                problems.append("%s: bad choice %r" % (cid, c))
        usage = body.get("usage") or {}
        if not (usage.get("prompt_tokens", 0) > 0 and usage.get("completion_tokens", 0) > 0 and
                usage.get("total_tokens") == usage["prompt_tokens"] + usage["completion_tokens"]):
            problems.append("%s: bad usage %r" % (cid, usage))
        limit = line["body"].get("max_tokens") or line["body"].get("max_completion_tokens")
        if limit is not None and usage.get("completion_tokens", 0) > limit * n:
            problems.append("%s: %d completion tokens past max_tokens %d" %
                            (cid, usage["completion_tokens"], limit))
        summary.setdefault("completion_tokens", {})[cid] = usage.get("completion_tokens")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
