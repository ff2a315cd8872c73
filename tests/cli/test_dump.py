#!/usr/bin/env python3
"""CLI tests of `jitstall dump`: every record and field as written, as text or
JSON lines, unknown keys kept, and partial traces said in one line.

Harness: clitest.py. `python3 test_dump.py --list` names the cases; ctest runs
each as cli.<case>.
"""
import struct
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)

DUMP_SPEC = (
    'process pid=4242 arg=prog arg="a\\"b\\\\c\\n\\x01\\xff\\xc3\\xa9" env=CUDA_CACHE_PATH=/c\n'
    "call call_id=cuLibraryLoadData call=cuLibraryLoadData tid=7 start=100 dur=11800000000 "
    "result=0 route=procaddr image_kind=fatbin_wrapper handle=0xabc0 verdict=ptx_jit "
    'cache=miss_not_stored cache_reason=too_small kernel=_Z1kv entry="ptx compute_75 zstd" '
    "key_999=5 key_999=6\n"
    "stack stack_id=1 ips=0x401000,0x7fff00001234\n"
    "modmap mod_event=dlopen build_id=01,ab\n"
    "cache phase=1\n"
    "end exit_status=0 end_reason=exit\n")

DUMP_JSON = (
    '{"type":"process","pid":4242,"argv":["prog","a\\"b\\\\c\\n\\u0001\\ufffd\u00e9"],'
    '"env":["CUDA_CACHE_PATH=/c"]}\n'
    '{"type":"call","call_id":"cuLibraryLoadData","call":"cuLibraryLoadData","tid":7,'
    '"start_ns":100,"dur_ns":11800000000,"result":0,"route":"procaddr",'
    '"image_kind":"fatbin_wrapper","handle":"0xabc0","verdict":"ptx_jit",'
    '"cache":"miss_not_stored","cache_reason":"too_small","kernels":["_Z1kv"],'
    '"entries":["ptx compute_75 zstd"],"key_999":[5,6],"seq":1}\n'
    '{"type":"stack","stack_id":1,"ips":["0x401000","0x7fff00001234"]}\n'
    '{"type":"modmap","mod_event":"dlopen","build_id":"01ab"}\n'
    '{"type":"cache_state","phase":"exit"}\n'
    '{"type":"end","exit_status":0,"end_reason":"exit"}\n')


@case
def test_dump_text_and_json(env):
    path = env.trace("dump", DUMP_SPEC)
    out, err = env.expect_rc(0, "dump", "--json", path)
    expect(out == DUMP_JSON, out)
    expect(err == "", err)
    out, _ = env.expect_rc(0, "dump", path)
    expect("call call_id=cuLibraryLoadData call=\"cuLibraryLoadData\" tid=7 start_ns=100 "
           "dur_ns=11800000000 result=0 route=procaddr" in out, out)
    expect("\nstack stack_id=1 ips=[0x401000,0x7fff00001234]\n" in out, out)
    expect("\nend exit_status=0 end_reason=\"exit\"\n" in out, out)
    expect(" key_999=5 key_999=6 " in out, out)
    # Cut before the end: everything flushed is printed, exit 0, one line.
    data = open(path, "rb").read()
    cut = env.path("dump-cut.jst")
    open(cut, "wb").write(data[:-30])
    _, err = env.expect_rc(0, "dump", "--json", cut)
    expect(re.fullmatch(r"jitstall dump: " + re.escape(cut) + r": truncated after \d+ records\n",
                        err), err)
    # Garbage: a partial trace like any other: one line, exit 0, and the next
    # file is still dumped.
    junk = env.path("dump-junk.jst")
    # A version 1 header (one zstd stream), then noise.
    header = data[:8] + struct.pack("<HHIIIQ", 1, 1, 0x0A0B0C0D, 32, 1, 0)
    open(junk, "wb").write(header + b"\x5a" * 64)
    out, err = env.expect_rc(0, "dump", "--json", junk, path)
    expect("partial trace: damaged compressed data" in err and err.count("\n") == 1, err)
    expect('{"type":"end"' in out, out)
    out, _ = env.expect_rc(0, "dump", "--help")
    expect("usage: jitstall dump [--json] TRACE|DIR..." in out, out)
    env.expect_rc(2, "dump")
    env.expect_rc(2, "dump", "--nope", path)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
