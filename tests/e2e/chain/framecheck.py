"""Assertions over symbolized frames, for the chain end-to-end test.

Usage: framecheck.py FRAMES_TSV [NAME=VALUE...] < checks.py

FRAMES_TSV is the output of chain_symbolize. The checks read from stdin run
with these names defined:
  fr      frames of the call named by call= (default cuModuleLoadData), innermost first,
          dicts with keys seq call frame internal callsite func file line module note
  site    the call-site frame (the first one that is not internal)
  expect(cond, msg)  fails the test with msg when cond is false
  arg     the NAME=VALUE arguments, as a dict of strings
Before the checks run: exactly one call-site frame, and every frame above it internal.
"""
import sys

COLS = ["seq", "call", "frame", "internal", "callsite", "func", "file", "line", "module", "note"]


def main():
    arg = dict(a.split("=", 1) for a in sys.argv[2:])
    with open(sys.argv[1], encoding="utf-8") as f:
        rows = [dict(zip(COLS, l.rstrip("\n").split("\t"))) for l in f if l.strip()]
    call = arg.get("call", "cuModuleLoadData")
    fr = [r for r in rows if r["call"] == call]
    # Only the first call of that name: the frames of one stack.
    if fr:
        fr = [r for r in fr if r["seq"] == fr[0]["seq"]]

    def expect(cond, msg):
        if not cond:
            print("FAIL: " + msg, file=sys.stderr)
            for r in fr:
                print("  " + "\t".join(r.get(c, "") for c in COLS), file=sys.stderr)
            sys.exit(1)

    expect(fr, "no symbolized frames for " + call)
    sites = [r for r in fr if r["callsite"] == "1"]
    expect(len(sites) == 1, "expected one call-site frame")
    site = sites[0]
    for r in fr[: fr.index(site)]:
        expect(r["internal"] == "1", "a frame above the call site is not internal")
    env = dict(fr=fr, site=site, expect=expect, arg=arg)
    exec(compile(sys.stdin.read(), "<checks>", "exec"), env)


if __name__ == "__main__":
    main()
