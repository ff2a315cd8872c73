"""Assertions over a trace, for the end-to-end tests.

Usage: tracecheck.py DUMP_JSON [NAME=VALUE...] < checks.py

DUMP_JSON is the output of `jitstall dump --json`. The Python code read from
stdin runs with these names defined:
  recs              every record, in order (dicts)
  calls(name=None)  call records, optionally only those whose call_id is name
  one(name)         the only call record with that call_id
  loads()           call records that carry a verdict
  of_type(t)        records of one type ("process", "cache_state", ...)
  expect(cond, msg) fails the test with msg when cond is false
  arg               the NAME=VALUE arguments, as a dict of strings
On the first failed expect it prints the message and the records, and exits 1.
"""
import json
import sys


def main():
    path = sys.argv[1]
    arg = dict(a.split("=", 1) for a in sys.argv[2:])
    recs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                recs.append(json.loads(line))
            except ValueError as e:
                print(f"FAIL: {path}:{n}: not JSON: {e}", file=sys.stderr)
                sys.exit(1)

    def of_type(t):
        return [r for r in recs if r.get("type") == t]

    def calls(name=None):
        return [r for r in of_type("call") if name is None or r.get("call_id") == name]

    def one(name):
        c = calls(name)
        expect(len(c) == 1, f"expected one {name} call, found {len(c)}")
        return c[0]

    def loads():
        return [r for r in calls() if "verdict" in r]

    def expect(cond, msg):
        if not cond:
            print(f"FAIL: {msg}", file=sys.stderr)
            for r in recs:
                if r.get("type") in ("call", "cache_state", "note", "cupti_jit", "end"):
                    print("  " + json.dumps(r, sort_keys=True), file=sys.stderr)
            sys.exit(1)

    code = sys.stdin.read()
    env = dict(recs=recs, calls=calls, one=one, loads=loads, of_type=of_type,
               expect=expect, arg=arg)
    exec(compile(code, "<checks>", "exec"), env)


if __name__ == "__main__":
    main()
