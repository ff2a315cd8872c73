#!/usr/bin/env python3
"""CLI cases for hostile surroundings: where the CLI writes (-o naming a
device, a FIFO or a symbolic link; a full disk), what it opens (a FIFO where a
trace, a module or a warm record is expected), and text from a trace that
carries terminal controls, newlines and invalid UTF-8.

Every command runs under a time limit, so that one that would block on a FIFO
fails instead of hanging the suite. See clitest.py for how cases are run.
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading

import clitest
from clitest import case, expect, Failure, Skip, run_spec, process, call, jit_load, sass_load, \
    launch, end, q, KERNEL, KERNEL2

LIMIT_S = 20


class Env(clitest.Env):
    def run(self, *args, env=None, stdout=None):
        e = dict(os.environ)
        e.pop("NO_COLOR", None)
        if env:
            e.update(env)
        argv = [self.cli] + [str(a) for a in args]
        try:
            if stdout is not None:
                r = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, env=e,
                                   timeout=LIMIT_S)
                return r.returncode, "", r.stderr.decode(errors="replace")
            r = subprocess.run(argv, capture_output=True, env=e, timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            raise Failure(f"jitstall {' '.join(map(str, args))}: still running after "
                          f"{LIMIT_S} s (blocked)")
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


# ---- where the CLI writes ----

# Each command that writes a file, as (argv before the trace, the option's value
# is put in place of OUT).
WRITERS = (
    ("export", "--format", "chrome", "-o", "OUT"),
    ("export", "--format", "prometheus", "-o", "OUT"),
    ("export", "--format", "otlp", "-o", "OUT"),
    ("baseline", "-o", "OUT"),
    ("check", "--max-jit-ms", "1", "--junit", "OUT"),
)


def writer_args(w, out, trace):
    return [out if a == "OUT" else a for a in w] + [trace]


def char_device(env, name, major, minor, fallback):
    """A character device this test may write to. As root, a node made in the
    test's own directory (so that a regression replaces that node, not the
    system's); otherwise the system's, which an unprivileged run cannot
    replace anyway."""
    if os.geteuid() == 0:
        p = env.path(name)
        try:
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
            return p
        except OSError:
            pass
    if os.path.exists(fallback) and stat.S_ISCHR(os.stat(fallback).st_mode):
        return fallback
    raise Skip(f"no character device {fallback} to write to")


@case
def test_out_char_device_written_through(env):
    # -o naming /dev/null: written through, still a character device after.
    t = env.trace("a", run_spec())
    dev = char_device(env, "null", 1, 3, "/dev/null")
    for w in WRITERS:
        rc, out, err = env.run(*writer_args(w, dev, t))
        expect(rc in (0, 1), f"{' '.join(w)} -> {dev}: exit {rc}: {err}")
        st = os.lstat(dev)
        expect(stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and
               os.minor(st.st_rdev) == 3, f"{' '.join(w)}: {dev} is no longer /dev/null's node")
        expect(not [f for f in os.listdir(os.path.dirname(dev)) if ".tmp." in f]
               if dev.startswith(env.tmp) else True, "a temporary file was left behind")


@case
def test_out_full_device_fails(env):
    # -o naming /dev/full: the write fails (exit 2, the reason said), and the
    # device stays a device, not a regular file holding the output.
    t = env.trace("a", run_spec())
    dev = char_device(env, "full", 1, 7, "/dev/full")
    for w in WRITERS:
        rc, out, err = env.run(*writer_args(w, dev, t))
        # A check that failed keeps its exit 1 over the JUnit file's error
        # (jitstall-check(1)); every other writer exits 2.
        want = 1 if w[0] == "check" else 2
        expect(rc == want, f"{' '.join(w)} -> {dev}: exit {rc}, expected {want}: {err}")
        expect("no space left on device" in err.lower(), f"{' '.join(w)}: the reason: {err}")
        expect(stat.S_ISCHR(os.lstat(dev).st_mode), f"{' '.join(w)}: {dev} was replaced")


@case
def test_out_fifo_written_through(env):
    # -o naming a FIFO: the output goes into the FIFO, which stays one.
    t = env.trace("a", run_spec())
    fifo = env.path("pipe")
    os.mkfifo(fifo)
    for w in WRITERS:
        got = []

        def reader():
            with open(fifo, "rb") as f:
                got.append(f.read())

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        rc, out, err = env.run(*writer_args(w, fifo, t))
        th.join(LIMIT_S)
        expect(rc in (0, 1), f"{' '.join(w)} -> FIFO: exit {rc}: {err}")
        expect(got and len(got[0]) > 50, f"{' '.join(w)}: nothing came through the FIFO")
        expect(stat.S_ISFIFO(os.lstat(fifo).st_mode), f"{' '.join(w)}: the FIFO was replaced")


@case
def test_out_symlink_refused(env):
    # -o naming a symbolic link: exit 2, neither the link nor its target touched.
    t = env.trace("a", run_spec())
    target = env.path("target.txt")
    link = env.path("link")
    for w in WRITERS:
        with open(target, "w") as f:
            f.write("keep me\n")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
        rc, out, err = env.run(*writer_args(w, link, t))
        expect(rc == 2, f"{' '.join(w)} -> symlink: exit {rc}, expected 2: {err}")
        expect("symbolic link" in err, f"{' '.join(w)}: the reason: {err}")
        expect(open(target).read() == "keep me\n", f"{' '.join(w)}: the link's target changed")
        expect(os.path.islink(link), f"{' '.join(w)}: the link was replaced")
    # A dangling link too: the file it names is not created.
    os.unlink(target)
    rc, out, err = env.run("baseline", "-o", link, t)
    expect(rc == 2 and not os.path.exists(target), f"dangling link: exit {rc}: {err}")


@case
def test_out_dev_stdout(env):
    # -o /dev/stdout goes to the command's own standard output, a regular
    # file included, which is appended to (not replaced, not truncated).
    t = env.trace("a", run_spec())
    outp = env.path("stdout.txt")
    with open(outp, "wb") as f:
        f.write(b"before\n")
    with open(outp, "ab") as f:
        rc, _, err = env.run("baseline", "-o", "/dev/stdout", t, stdout=f)
    expect(rc == 0, f"baseline -o /dev/stdout: exit {rc}: {err}")
    data = open(outp, "rb").read()
    expect(data.startswith(b"before\n{") and b'"jitstall-baseline"' in data,
           f"baseline -o /dev/stdout: {data[:80]!r}")
    expect(not os.path.islink(outp) and stat.S_ISREG(os.lstat(outp).st_mode), "still a file")


@case
def test_stdout_full_disk_every_command(env):
    # Standard output on a full disk: every command says so and exits 2 (check
    # used to exit 0 with its output lost).
    t = env.trace("a", run_spec())
    dev = char_device(env, "full", 1, 7, "/dev/full")
    for args in (["check", "--max-jit-ms", "1e9", t], ["check", "--max-jit-ms", "1", t],
                 ["report", t], ["report", "--json", t], ["report", "--markdown", t],
                 ["export", t], ["baseline", t], ["dump", t], ["diff", t, t],
                 # the help and version texts too (they used to exit 0)
                 ["--help"], ["help"], ["help", "check"], ["report", "--help"], ["--version"]):
        with open(dev, "wb") as f:
            rc, _, err = env.run(*args, stdout=f)
        expect(rc == 2, f"jitstall {' '.join(args)} > /dev/full: exit {rc}, expected 2: "
               f"{err}")
        expect("cannot write" in err, f"{args[0]}: no reason given: {err}")


# ---- what the CLI opens ----

@case
def test_fifo_trace_in_directory_skipped(env):
    # A FIFO named x.jst in a traces directory: skipped with a word, never
    # opened for a blocking read.
    env.trace("a", run_spec(), subdir="traces")
    os.mkfifo(env.path("traces/x.jst"))
    d = env.path("traces")
    # The report of the readable traces is written; the exit status says that
    # an input could not be read, as for any unreadable input.
    rc, out, err = env.run("report", d)
    expect(rc == 2 and "prog" in out, f"report: exit {rc}: {err}")
    expect("not a regular file" in out + err, f"report: the FIFO is not named: {out}{err}")
    rc, out, err = env.run("check", "--max-jit-ms", "1e9", d)
    expect(rc == 2 and "x.jst" in err and "not a regular file" in err, f"check: {rc} {err}")
    for args in (["baseline", d], ["export", d], ["diff", d, d]):
        rc, out, err = env.run(*args)
        expect(rc in (0, 2), f"{args[0]}: exit {rc}")
    # Named on the command line, too.
    rc, out, err = env.run("report", env.path("traces/x.jst"))
    expect(rc == 2 and "not a regular file" in err, f"report FIFO: exit {rc}: {err}")
    rc, out, err = env.run("dump", env.path("traces/x.jst"))
    expect(rc == 2 and "not a regular file" in err, f"dump FIFO: exit {rc}: {err}")


def stack_spec(mod):
    s = run_spec(with_end=False)
    s += (f"modmap mod_event=initial mod_path={q(mod)} bias=0x400000 "
          "mod_start=0x400000 mod_end=0x800000\n")
    s += "stack stack_id=1 ips=0x401000,0x402000\n"
    s += jit_load(20000, 500, h="0x77", source="/opt/app/lib/libz.so", stack_id=1,
                  kernel="_Z1zv")
    return s + end()


@case
def test_fifo_module_path_not_opened(env):
    # A module path from the trace that is a FIFO on this machine: the stack
    # is not symbolized from it, and nothing blocks.
    fifo = env.path("libfifo.so")
    os.mkfifo(fifo)
    t = env.trace("a", stack_spec(fifo))
    for args in (["report", t], ["report", "--json", t], ["check", "--max-jit-ms", "1", t]):
        rc, out, err = env.run(*args)
        expect(rc in (0, 1), f"{args[0]}: exit {rc}: {err}")
    expect(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO is still there")


@case
def test_fifo_warm_record_not_opened(env):
    # <cache path from the trace>/jitstall-warm.json a FIFO: not read.
    cache = env.path("cache")
    os.makedirs(cache)
    os.mkfifo(os.path.join(cache, "jitstall-warm.json"))
    spec = run_spec(with_end=False).replace(
        "device device=0 cc_major=9 cc_minor=0 dev_name=\"NVIDIA H200\"\n",
        "device device=0 cc_major=9 cc_minor=0 dev_name=\"NVIDIA H200\" driver_version=13000\n"
        f"cache phase=0 cache_path={q(cache)} exists=1 writable=1 entries=1 "
        "size_bytes=16384 max_bytes=1073741824\n", 1)
    expect("cache phase=0" in spec, "spec")
    t = env.trace("a", spec + end())
    for args in (["report", t], ["report", "--json", t], ["report", "--markdown", t],
                 ["check", "--max-jit-ms", "1", t]):
        rc, out, err = env.run(*args)
        expect(rc in (0, 1), f"{args[0]}: exit {rc}: {err}")


# ---- text from a trace ----

# Every kind of hostile byte: ESC (an OSC title sequence ended by BEL), a
# newline followed by a workflow command, DEL, a C1 control as UTF-8 (U+009B)
# and raw (0x9B), and bytes that are not UTF-8.
EVIL = r"\x1b]0;T\x07\n::error::pwned\x7f\xc2\x9b31m\x9b\xff\xfe"


def evil(s):
    return s + EVIL


def hostile_spec(cache_dir="/tmp/cache"):
    exe = "/opt/app/bin/pr" + EVIL
    s = (f'process pid=100 ppid=1 exe="{exe}" arg="{evil("prog")}" arg="{evil("--q")}" '
         f'env="CUDA_CACHE_PATH={cache_dir}{EVIL}" '
         f"host=ci realtime=1700000000s mono=1000ms proc_start=1000ms version=0.1.0\n"
         'device device=0 cc_major=9 cc_minor=0 dev_name="NVIDIA H200"\n'
         f'cache phase=0 cache_path="{cache_dir}{EVIL}" exists=1 writable=1 entries=1 '
         "size_bytes=16384 max_bytes=1073741824\n")
    s += call("cuInit", 1010, 150)
    s += (f'modmap mod_event=initial mod_path="/opt/app/lib/libm{EVIL}.so" bias=0x400000 '
          "mod_start=0x400000 mod_end=0x800000\n")
    s += "stack stack_id=1 ips=0x401000,0x402000\n"
    s += f'range range_op=push tid=1 start=1250ms name="{evil("query")}" depth=1\n'
    src = f'"/opt/app/lib/libk{EVIL}.so"'
    s += call("cuLibraryLoadData", 1300, 11000, image_kind="fatbin_wrapper", image_hash="0xabc",
              source=src, verdict="ptx_jit", jit_from="compute_75", target_cc=90,
              kernel=f'"_Z3add{EVIL}v"', reason='"PTX only"', cache="miss_stored",
              cache_reason="none", ptx_size=5000000, stack_id=1, tid=1)
    s += call("cuModuleLoadData", 12400, 2, image_kind="fatbin", image_hash="0xdef",
              source=f'"/opt/app/lib/libok{EVIL}.so"', verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel=f'"_Z3mul{EVIL}v"')
    s += "range range_op=pop tid=1 start=12450ms depth=1\n"
    s += call("cuLaunchKernel", 12500, 0.01, name=f'"_Z3add{EVIL}v"', func="0x30")
    return s + end()


def clean_text(name, data, github=False):
    """The rule every text output keeps: valid UTF-8, no C0 control but the
    newline, no DEL, no C1 control, and no line starting with '::' that the
    CLI did not mean (only --github's own ::error / ::warning lines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failure(f"{name}: not UTF-8 ({e}): {data[max(0, e.start - 40):e.end + 40]!r}")
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch != "\n") or o == 0x7F or 0x80 <= o <= 0x9F:
            i = text.index(ch)
            raise Failure(f"{name}: control U+{o:04X} passed through: {text[max(0, i - 60):i + 20]!r}")
    for line in text.splitlines():
        if line.startswith("::"):
            ok = github and re.match(r"::(error|warning) [^\n]*::", line) and "pwned" not in \
                line.split("::")[1]
            expect(ok, f"{name}: a line that GitHub Actions runs: {line!r}")
    return text


@case
def test_hostile_text_escaped_everywhere(env):
    # Control characters, C1 controls and invalid UTF-8 from a trace's exe,
    # argv, module paths, kernel and NVTX names and cache path: every text
    # output (stdout and stderr) shows them escaped, the same way.
    t = env.trace("evil", hostile_spec())
    t2 = env.trace("evil2", hostile_spec().replace("pid=100", "pid=101"), truncate=True)
    base = env.path("base.json")
    env.run("baseline", "-o", base, env.trace("good", run_spec()))
    runs = (["report", t], ["report", "--markdown", t], ["report", t2],
            ["report", "--markdown", t2], ["check", "--max-jit-ms", "1", t],
            ["check", "--max-jit-ms", "1", t2], ["check", "--baseline", base, t, t2],
            ["check", "--forbid-verdict", "ptx_jit", "--max-ttfk-ms", "1", t2],
            ["diff", t, t2], ["diff", env.path("good.jst"), t], ["dump", t], ["dump", t2])
    # Nine runs of the hostile program: the report's fleet view (grouped runs)
    # shows the same strings, in text and Markdown.
    for i in range(9):
        env.trace(f"evil{i}", hostile_spec().replace("pid=100", f"pid={200 + i}"), subdir="fleet")
    runs += (["report", env.path("fleet")], ["report", "--markdown", env.path("fleet")])
    for args in runs:
        argv = [a for a in args]
        e = dict(os.environ)
        e["NO_COLOR"] = "1"
        r = subprocess.run([env.cli] + argv, capture_output=True, timeout=LIMIT_S, env=e)
        name = "jitstall " + " ".join(os.path.basename(a) for a in args)
        expect(r.returncode in (0, 1, 2), f"{name}: exit {r.returncode}")
        out = clean_text(name + " (stdout)", r.stdout)
        clean_text(name + " (stderr)", r.stderr)
        # Escaped, not dropped: the reader sees what was there.
        if args[0] in ("report", "dump"):
            expect("\\x1b]0;T\\x07\\n::error::pwned" in out, f"{name}: not shown escaped: {out}")
        expect("\\x9b" in out + r.stderr.decode() or args[0] == "check",
               f"{name}: a raw 0x9B byte is not shown as \\x9b")
    r = subprocess.run([env.cli, "check", "--github", "--max-jit-ms", "1", t, t2],
                       capture_output=True, timeout=LIMIT_S)
    clean_text("check --github (stdout)", r.stdout, github=True)
    clean_text("check --github (stderr)", r.stderr)


# Characters that reorder or hide text, and bytes that are not UTF-8: an
# 8-bit CSI (U+009B), the bidirectional override, isolate and marks (U+202E,
# U+2067, U+200F, U+061C), a raw 0xFF and an encoded surrogate (ED A0 80),
# with ESC and DEL.
BIDI = r"<\x1b[31m\x7f\xc2\x9b31m\xe2\x80\xae\xe2\x81\xa7\xe2\x80\x8f\xd8\x9c\xff\xed\xa0\x80>"
BIDI_RAW = (b"\x1b", b"\x7f", b"\xc2\x9b", b"\xe2\x80\xae", b"\xe2\x81\xa7", b"\xe2\x80\x8f",
            b"\xd8\x9c", b"\xff", b"\xed\xa0\x80")
# As the text rule shows it (docs/jitstall.1.md, TEXT FROM A TRACE).
BIDI_TEXT = r"<\x1b[31m\x7f\u009b31m\u202e\u2067\u200f\u061c\xff\xed\xa0\x80>"
# As JSON holds it: the controls kept (escaped), invalid bytes as U+FFFD.
BIDI_JSON = "<\x1b[31m\x7f\x9b31m\u202e\u2067\u200f\u061c\ufffd\ufffd\ufffd\ufffd>"


def bidi_spec():
    """A cache directory, a framework cache directory, a compiler's path,
    arguments and output, a Python function name in a stack and in the
    sampler's records, each carrying BIDI. The first kernel is launched
    before the compile, so that the second one's first call is shown."""
    s = process(exe="/opt/app/bin/prog")
    s += (f'cache phase=0 cache_path="/tmp/cache{BIDI}" exists=1 writable=1 entries=1 '
          "size_bytes=16384 max_bytes=1073741824\n")
    s += (f'fw_cache phase=0 start=1005ms framework=triton env_name=TRITON_CACHE_DIR '
          f'cache_path_env=1 cache_path="/tmp/tri{BIDI}" exists=1 writable=1 entries=3\n')
    s += call("cuInit", 1010, 150)
    s += launch(1170, kernel=KERNEL, seq=5)
    s += (f'stack stack_id=1 ips=0x401000 py_frame="make_cubin{BIDI}\\x09'
          '/site/triton/backends/nvidia/compiler.py\\x09300"\n')
    s += (f'compile tid=100 start=1200ms dur=90ms compiler=ptxas '
          f'program="/usr/local/cuda/bin/ptxas{BIDI}" arg="ptxas{BIDI}" arg="-arch=sm_90" '
          f'arg="/tmp/in{BIDI}.ptx" input="/tmp/in{BIDI}.ptx" output="/tmp/out{BIDI}.cubin" '
          "target=sm_90 child_pid=5 wait_status=0 stack_id=1\n")
    s += (f'sample tid=100 start=1210ms dur=50ms py_frame="fn{BIDI}\\x09/app/m{BIDI}.py\\x0933" '
          "samples=5 sample_ns=50ms before_seq=7 period_ns=10ms window_ns=60ms\n")
    s += launch(1300, kernel=KERNEL2, seq=7)
    return s + end()


def json_strings(o):
    """Every string of a JSON document, keys included."""
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from json_strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from json_strings(v)


def no_raw(name, data):
    for b in BIDI_RAW:
        i = data.find(b)
        expect(i < 0, f"{name}: raw {b!r} in the output: {data[max(0, i - 80):i + 20]!r}")


@case
def test_bidi_and_invalid_text_escaped_everywhere(env):
    # U+009B, bidirectional controls, a raw 0xFF and an encoded surrogate in
    # a cache directory, a compiler's path and arguments and a Python function
    # name: report's "Compiles" and "sampled Python" lines printed them raw
    # (only C0 and DEL were replaced), JSON kept C1 and bidi characters raw,
    # and no output escaped U+200F or U+061C. One rule for every output:
    # text and Markdown show them escaped, JSON as \uXXXX and U+FFFD.
    t = env.trace("bidi", bidi_spec())
    t2 = env.trace("bidi2", bidi_spec().replace("pid=100", "pid=101"))
    texts = (["report", t], ["report", "--markdown", t], ["dump", t], ["diff", t, t2],
             ["check", "--max-jit-ms", "1", t])
    for args in texts:
        r = subprocess.run([env.cli] + args, capture_output=True, timeout=LIMIT_S)
        name = "jitstall " + " ".join(os.path.basename(a) for a in args)
        expect(r.returncode in (0, 1), f"{name}: exit {r.returncode}: {r.stderr[:300]!r}")
        no_raw(name + " (stdout)", r.stdout)
        no_raw(name + " (stderr)", r.stderr)
        out = clean_text(name, r.stdout)
        if args[0] in ("report", "dump"):
            # Markdown text escapes its specials too (inline code does not).
            md = "".join("\\" + c if c in "|\\`*_[]<>#" else c for c in BIDI_TEXT)
            expect(BIDI_TEXT in out or ("--markdown" in args and md in out),
                   f"{name}: not shown escaped by the rule: {out[:3000]}")
            if "--markdown" in args:
                expect(f"top sampled: fn{md}" in out, f"{name}: sampled function: {out[:3000]}")
    r = subprocess.run([env.cli, "report", t], capture_output=True, timeout=LIMIT_S)
    out = r.stdout.decode()
    comp = next((l for l in out.splitlines() if "ptxas " in l and "-> " in l), "")
    expect(f"/tmp/out{BIDI_TEXT}.cubin" in comp, f"Compiles line: {comp!r}")
    samp = next((l for l in out.splitlines() if "sampled Python (top)" in l), "")
    expect(f"fn{BIDI_TEXT} (m{BIDI_TEXT}.py:33)" in samp, f"sampled Python line: {samp!r}")
    # JSON: valid, every string as it was (invalid bytes as U+FFFD), nothing raw.
    chrome, junit = env.path("chrome.json"), env.path("junit.xml")
    jsons = (["report", "--json", t], ["dump", "--json", t],
             ["export", "--format", "chrome", "-o", chrome, t],
             ["export", "--format", "otlp", "-o", env.path("otlp.json"), t],
             ["diff", "--json", t, t2], ["baseline", "-o", env.path("base.json"), t])
    for args in jsons:
        r = subprocess.run([env.cli] + args, capture_output=True, timeout=LIMIT_S)
        name = "jitstall " + " ".join(os.path.basename(a) for a in args)
        expect(r.returncode in (0, 1), f"{name}: exit {r.returncode}: {r.stderr[:300]!r}")
        data = open(args[args.index("-o") + 1], "rb").read() if "-o" in args else r.stdout
        no_raw(name, data)
        no_raw(name + " (stderr)", r.stderr)
        text = data.decode("utf-8")
        # dump --json is one object a line
        doc = [json.loads(l) for l in text.splitlines()] if args[0] == "dump" else json.loads(text)
        if args[0] in ("report", "dump") or "chrome" in args:
            expect(any(BIDI_JSON in v for v in json_strings(doc)),
                   f"{name}: the string is not kept: {data[:2000]!r}")
    r = subprocess.run([env.cli, "check", "--max-jit-ms", "1", "--junit", junit, t],
                       capture_output=True, timeout=LIMIT_S)
    no_raw("check --junit", open(junit, "rb").read())


@case
def test_hostile_file_name_scan(env):
    # A file name that carries controls, shown by scan: escaped by the same
    # rule, on one line.
    fix = os.environ.get("JST_FIXTURES")
    if not fix or not os.path.exists(os.path.join(fix, "ptx75.fatbin")):
        raise Skip("tests/fixtures/ptx75.fatbin is not there")
    raw = os.path.join(env.tmp.encode(), b"ev\x1b]0;T\x07\n::error::x\xc2\x9b\x9b\xff.fatbin")
    with open(os.path.join(fix, "ptx75.fatbin"), "rb") as src, open(raw, "wb") as dst:
        dst.write(src.read())
    r = subprocess.run([env.cli.encode(), b"scan", b"--arch", b"sm_90", raw], capture_output=True,
                       timeout=LIMIT_S)
    expect(r.returncode == 0, f"scan: exit {r.returncode}: {r.stderr!r}")
    out = clean_text("scan (stdout)", r.stdout)
    expect("ev\\x1b]0;T\\x07\\n::error::x\\u009b\\x9b\\xff.fatbin" in out, f"scan: {out}")


# ---- a trace the preload stopped writing ----

@case
def test_trace_stop_said(env):
    # A trace cut short by a full disk (the preload's note says so) is not
    # "killed, crashed or still running": every command says why it ends.
    for code, name, words in ((1, "disk_full", "the disk was full"),
                              (2, "file_size_limit", "file-size limit (ulimit -f)")):
        spec = run_spec(with_end=False) + f'note message="trace stopped" key_260={code}\n'
        t = env.trace(f"stop{code}", spec, truncate=True)
        rc, out, err = env.run("report", t)
        expect(rc == 0 and words in out and "the process went on" in out
               and "killed, crashed" not in out, f"report: {out}{err}")
        rc, out, err = env.run("report", "--markdown", t)
        expect(words in out, f"report --markdown: {out}")
        rc, out, err = env.run("report", "--json", t)
        doc = json.loads(out)
        pj = doc["processes"][0]
        expect(pj["truncated"] is True and pj["trace_stop"] == name, f"json: {pj.get('trace_stop')}")
        rc, out, err = env.run("check", "--max-jit-ms", "1e9", t)
        expect(words in err, f"check warning: {err}")
        rc, out, err = env.run("export", "--format", "otlp", t)
        expect(f"trace stopped: {name}" in out, "otlp jitstall.end")
    # Without the note: as before.
    t = env.trace("killed", run_spec(with_end=False), truncate=True)
    rc, out, err = env.run("report", "--json", t)
    pj = json.loads(out)["processes"][0]
    expect(pj["trace_stop"] is None and any("killed, crashed" in m for m in pj["missing"]),
           f"killed: {pj}")


@case
def test_trace_stop_in_flight_not_failed(env):
    # A load open when the preload stopped writing (a full disk) went on
    # after: check warns instead of failing it as a stall with no end (it
    # does fail it when the trace does not say why it ends).
    spec = run_spec(with_end=False).split("call call=cuLibraryLoadData")[0]
    spec += ("begin call=cuLibraryLoadData start=1300ms dur=4000ms result=0 "
             "image_kind=fatbin_wrapper image_hash=0xabc verdict=ptx_jit jit_from=compute_75 "
             "target_cc=90 kernel=_Z3addPfS_\n")
    t = env.trace("inflight", spec, truncate=True)
    rc, out, err = env.run("check", "--max-jit-ms", "1e9", t)
    expect(rc == 1 and "in-flight" in out + err or "still compiling" in out,
           f"without the note, the open load fails: exit {rc}: {out}{err}")
    t2 = env.trace("stopped", spec + 'note message="trace stopped" key_260=1\n', truncate=True)
    rc, out, err = env.run("check", "--max-jit-ms", "1e9", t2)
    expect(rc == 0 and "the disk was full" in err and "not judged as in flight" in err,
           f"with the note: exit {rc}: {out}{err}")


# ---- a file that shrinks while it is read ----

def shrink_run(env, name, argv, extra_env=None):
    shim = os.environ.get("JST_SHRINK_PRELOAD")
    fix = os.environ.get("JST_FIXTURES")
    if not shim or not os.path.exists(shim) or not fix:
        raise Skip("the shrink preload or the fixtures are not built")
    big = env.path(name)
    one = open(os.path.join(fix, "ptx75.fatbin"), "rb").read()
    with open(big, "wb") as f:
        f.write(one * 200)  # 120 KB of fatbins: the walk reads far past 4 KiB
    e = dict(os.environ)
    e.update(extra_env or {})
    e["LD_PRELOAD"] = shim
    e["JST_SHRINK_SUFFIX"] = "/" + name  # cut to 4 KiB right after it is mapped
    try:
        r = subprocess.run([env.cli] + argv + [big], capture_output=True, env=e, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        raise Failure(f"jitstall {' '.join(argv)}: still running after {LIMIT_S} s")
    expect(os.path.getsize(big) == 4096, "the shim did not cut the file")
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


@case
def test_scan_file_shrinks_while_read(env):
    # A file cut while scan reads its mapping: exit 2 with the reason, not
    # death by SIGBUS (exit 135).
    for argv in (["scan", "--arch", "sm_90"], ["scan", "--arch", "sm_90", "--json"]):
        rc, out, err = shrink_run(env, "big.fatbin", argv)
        expect(rc == 2 and "file changed while read" in err,
               f"{' '.join(argv)}: exit {rc}: {err}")


@case
def test_warm_file_shrinks_while_read(env):
    # The same for warm, on the simulated driver.
    sim = os.environ.get("JST_SIMDIR")
    if not sim:
        raise Skip("the simulated driver is not built")
    cache = env.path("cache")
    rc, out, err = shrink_run(env, "big2.fatbin", ["warm"],
                              {"LD_LIBRARY_PATH": sim, "CUDA_CACHE_PATH": cache})
    expect(rc == 2 and "file changed while read" in err, f"warm: exit {rc}: {err}")


# ---- Prometheus text from hostile names ----

PROM_LINE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


def strict_prom(data):
    """The exposition format, strictly: UTF-8, every sample line
    name{label="value",...} number, every value's escapes only \\\\ \\" \\n,
    every label whole. Returns the samples' label dicts."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failure(f"not UTF-8: {data[max(0, e.start - 60):e.end + 20]!r}")
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = PROM_LINE.match(line)
        expect(m, f"not a sample line: {line!r}")
        float(m.group(4))
        labels, rest = {}, m.group(3) or ""
        while rest:
            lm = PROM_LABEL.match(rest)
            expect(lm, f"bad label at {rest[:60]!r} in {line!r}")
            expect(lm.group(1) not in labels, f"label twice: {line!r}")
            labels[lm.group(1)] = lm.group(2)
            rest = rest[lm.end():]
        samples.append(labels)
    return samples


@case
def test_prometheus_hostile_names(env):
    # Invalid UTF-8, quotes, backslashes and newlines in the executable name,
    # the host and JITSTALL_LABELS values: every label value is valid UTF-8
    # and escaped, every label whole, and promtool (when installed) agrees.
    bad = r"\xff\xfe\"q\\\n\xc3"
    labels = ",".join(f"l{i}=" + "x" * 200 + bad for i in range(8))
    spec = run_spec(exe="EXE").replace('exe="EXE"', f'exe="/opt/app/bin/pr{bad}{"p" * 300}" '
                                       f'env="JITSTALL_LABELS={labels}"')
    spec = spec.replace("host=ci", f'host="h{bad}"')
    t = env.trace("prom", spec)
    out = env.path("m.prom")
    rc, _, err = env.run("export", "--format", "prometheus", "-o", out, t)
    expect(rc == 0, f"export: exit {rc}: {err}")
    data = open(out, "rb").read()
    samples = strict_prom(data)
    expect(samples and all("program" in s and "host" in s for s in samples),
           f"program and host on every sample: {data[:300]!r}")
    expect("\ufffd" in samples[0]["program"], f"invalid bytes shown as U+FFFD: {samples[0]}")
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "metrics"], input=data, capture_output=True)
        msg = (r.stdout + r.stderr).decode(errors="replace")
        expect(r.returncode == 0, f"promtool check metrics: {msg}")


@case
def test_prometheus_reserved_label_names(env):
    # JITSTALL_LABELS with le (histogram buckets), quantile (summaries) and
    # names jitstall sets itself: promtool refused the whole file ("non-
    # histogram metrics should not have "le" label", "duplicate label names").
    # Those names are dropped; the others stay.
    spec = run_spec(exe="EXE").replace(
        'exe="EXE"', 'exe="/opt/app/bin/prog" '
        'env="JITSTALL_LABELS=le=0.5,quantile=0.9,compiler=x,outcome=y,svc=a"')
    spec = spec.replace("end exit_status",
                        "compile tid=100 start=1400ms dur=5ms compiler=ptxas "
                        "program=/usr/local/cuda/bin/ptxas child_pid=7 wait_status=0\n"
                        "end exit_status")
    t = env.trace("promres", spec)
    out = env.path("r.prom")
    rc, _, err = env.run("export", "--format", "prometheus", "-o", out, t)
    expect(rc == 0, f"export: exit {rc}: {err}")
    data = open(out, "rb").read()
    samples = strict_prom(data)  # also: no label twice
    expect(samples and all(s.get("svc") == "a" for s in samples), f"svc=a kept: {data[:400]!r}")
    for s in samples:
        expect("le" not in s and "quantile" not in s, f"reserved name kept: {s}")
        expect(s.get("compiler", "ptxas") != "x" and s.get("outcome", "hit") != "y",
               f"a user label took jitstall's own name: {s}")
    expect(any(s.get("compiler") == "ptxas" for s in samples), "the compile metric's own label")
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "metrics"], input=data, capture_output=True)
        msg = (r.stdout + r.stderr).decode(errors="replace")
        expect(r.returncode == 0, f"promtool check metrics: {msg}")


@case
def test_prometheus_controls_escaped(env):
    # C0, C1 and bidirectional controls in the program's name and a label
    # value reached the .prom file raw (only invalid bytes were replaced).
    # By the one rule they read as jitstall's report shows them.
    spec = process(exe="EXE").replace(
        'exe="EXE"', f'exe="/opt/app/bin/pr{BIDI}" env="JITSTALL_LABELS=team=t{BIDI}"')
    spec += call("cuInit", 1010, 150) + launch(1300) + end()
    t = env.trace("promctl", spec)
    out = env.path("c.prom")
    rc, _, err = env.run("export", "--format", "prometheus", "-o", out, t)
    expect(rc == 0, f"export: exit {rc}: {err}")
    data = open(out, "rb").read()
    no_raw("export --format prometheus", data)
    samples = strict_prom(data)
    # strict_prom keeps a value's escapes: \\ is one backslash.
    want = "pr" + BIDI_TEXT.replace("\\", "\\\\").replace("\\\\xff\\\\xed\\\\xa0\\\\x80",
                                                        "\ufffd" * 4)
    expect(samples and samples[0]["program"] == want, f"program: {samples[0].get('program')!r}, "
           f"want {want!r}")
    expect(samples[0]["team"] == "t" + want[2:], f"team: {samples[0].get('team')!r}")
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "metrics"], input=data, capture_output=True)
        msg = (r.stdout + r.stderr).decode(errors="replace")
        expect(r.returncode == 0, f"promtool check metrics: {msg}")


if __name__ == "__main__":
    sys.exit(clitest.main(sys.argv, Env))
