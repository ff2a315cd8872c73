#!/usr/bin/env python3
"""Golden and end-to-end tests of `jitstall report` and `jitstall run`.

usage: golden.py reports|schema|partial|help|run_e2e

ctest sets JST_CLI (the jitstall binary), JST_GEN (gen_golden), JST_GOLDEN_SRC
(this directory), JST_DOCS and JST_WORK; run_e2e also needs JST_PRELOAD,
JST_SIMDIR, JST_PROG, JST_PROG_FORK and JST_FIXTURES, and is skipped (exit 77)
without them. JST_GOLDEN_UPDATE=1 rewrites the expected reports instead of
comparing (review the diff before committing it).
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
SRC = os.environ.get("JST_GOLDEN_SRC", os.path.dirname(os.path.abspath(__file__)))
EXPECTED = os.path.join(SRC, "expected")

# name -> arguments of `jitstall report`, run in the directory of the traces
CASES = {
    "cold": ["cold.jst"],
    "ranks": ["ranks"],
    "mixed": ["killed.jst", "all_sass.jst"],
    "grouped": ["cold.jst", "killed.jst"],
}
FORMATS = {"txt": [], "json": ["--json"], "md": ["--markdown"]}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def env_or_skip(*names):
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        print("skipped: " + ", ".join(missing) + " not set (run through ctest)", file=sys.stderr)
        sys.exit(SKIP)
    return [os.environ[n] for n in names]


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA_", "JITSTALL_")) and k != "LD_PRELOAD"}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def run(args, cwd=None, env=None, timeout=120):
    p = subprocess.run(args, cwd=cwd, env=env or clean_env(), capture_output=True,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run_tty(args, cwd, env):
    """Runs with standard output on a pseudo-terminal; returns what it wrote."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen(args, cwd=cwd, env=env, stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO once the child closed its side
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=60)
    os.close(master)
    return out.decode("utf-8", "replace")


def traces():
    """Fresh traces from gen_golden in a private directory."""
    cli, gen = env_or_skip("JST_CLI", "JST_GEN")
    work = tempfile.mkdtemp(prefix="jst-golden-")
    rc, out, err = run([gen, work])
    if rc != 0:
        print(f"gen_golden failed ({rc}): {err}", file=sys.stderr)
        sys.exit(1)
    return cli, work


# ---- a minimal JSON Schema validator (the subset report.schema.json uses) ----
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def type_ok(value, t):
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[t])


def validate(value, schema, root, path="$"):
    errors = []
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return validate(value, target, root, path)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_ok(value, t) for t in types):
            return [f"{path}: {value!r} is not of type {types}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if type_ok(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} > {schema['maximum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        errors.append(f"{path}: shorter than {schema['minLength']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing key {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors += validate(value[key], sub, root, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], root, f"{path}[{i}]")
    return errors


def schema_errors(doc):
    with open(os.path.join(SRC, "report.schema.json")) as f:
        schema = json.load(f)
    try:
        import jsonschema  # noqa: F401  (used when present, as a second opinion)
        v = jsonschema.Draft202012Validator(schema)
        extra = [f"jsonschema: {e.message}" for e in v.iter_errors(doc)]
    except ImportError:
        extra = []
    return validate(doc, schema, schema) + extra


def consistency_errors(doc):
    """Relations the numbers must keep, whatever the trace."""
    errors = []
    for p in doc["processes"]:
        pid = p["pid"]
        if p["jit_compile_ns"] + p["jit_cache_load_ns"] != p["jit_ns"]:
            errors.append(f"pid {pid}: compile + cache load != jit")
        jit_mods = sum(m["dur_ns"] for m in p["modules"] if m["jit"])
        if jit_mods != p["jit_ns"]:
            errors.append(f"pid {pid}: JIT modules sum to {jit_mods}, jit_ns is {p['jit_ns']}")
        b = p["ttfk_breakdown"]
        if b["jit_compile_ns"] + b["jit_cache_load_ns"] != b["jit_ns"]:
            errors.append(f"pid {pid}: breakdown compile + cache load != jit")
        if p["ttfk_ns"] is not None:
            parts = b["jit_ns"] + b["init_ns"] + b["ctx_ns"] + b["sass_load_ns"] + b["pre_driver_ns"] + b["other_ns"] + b["rtc_ns"]
            if parts < p["ttfk_ns"]:
                errors.append(f"pid {pid}: breakdown {parts} does not cover ttfk {p['ttfk_ns']}")
            if p["projected_ttfk_ns"] > p["ttfk_ns"]:
                errors.append(f"pid {pid}: projected ttfk above ttfk")
        lost = [m["lost_ns"] for m in p["modules"] if m["culprit"]]
        if lost != sorted(lost, reverse=True):
            errors.append(f"pid {pid}: culprits not ranked by time lost")
    saves = [f["saves_ns"] for f in doc["fixes"]]
    if saves != sorted(saves, reverse=True):
        errors.append("fixes not ranked by time saved")
    return errors


# ---- the tests ----
def test_reports():
    cli, work = traces()
    update = os.environ.get("JST_GOLDEN_UPDATE") == "1"
    for case, args in CASES.items():
        for ext, opts in FORMATS.items():
            rc, out, err = run([cli, "report"] + opts + args, cwd=work)
            name = f"{case}.{ext}"
            if rc != 0:
                fail(f"{name}: exit {rc}: {err}")
                continue
            if ext == "md":
                # A GitHub job summary scrolls sideways past about nine columns.
                wide = [l for l in out.splitlines() if l.startswith("|") and l.count(" | ") + 1 > 9]
                if wide:
                    fail(f"{name}: a Markdown table wider than 9 columns: {wide[0][:120]}")
                # Fix commands, variables and paths are code spans, to be copied as they are.
                # (in the fix lists and the culprits' fix cells; elsewhere a
                # variable may be a plain state, "CUDA_CACHE_DISABLE=1")
                fixes = "\n".join(l for l in out.splitlines()
                                   if re.match(r"(\d+\. \*\*(saves|fixes)|\| \d+ \|)", l))
                bare = re.sub(r"`[^`]*`", "", fixes)
                for cmd in ("-gencode", "docker run", "CUDA\\_CACHE", "jitstall warm"):
                    if cmd in bare:
                        fail(f"{name}: {cmd!r} outside a code span: "
                             f"{bare[bare.index(cmd) - 60:bare.index(cmd) + 40]!r}")
            path = os.path.join(EXPECTED, name)
            if update:
                os.makedirs(EXPECTED, exist_ok=True)
                with open(path, "w") as f:
                    f.write(out)
                print(f"updated {path}")
                continue
            try:
                with open(path) as f:
                    want = f.read()
            except FileNotFoundError:
                fail(f"{path} is missing (JST_GOLDEN_UPDATE=1 writes it)")
                continue
            if out != want:
                diff = "".join(difflib.unified_diff(want.splitlines(True), out.splitlines(True),
                                                    "expected/" + name, "actual"))
                fail(f"{name} differs from the golden file:\n{diff}")
    # colour: on a terminal only, and never with NO_COLOR
    rc, out, _ = run([cli, "report", "cold.jst"], cwd=work, env=clean_env(NO_COLOR=""))
    if "\x1b[" in out:
        fail("colour escape codes written to a pipe")
    env = clean_env()
    del env["NO_COLOR"]
    if "\x1b[" not in run_tty([cli, "report", "cold.jst"], work, env):
        fail("no colour on a terminal")
    if "\x1b[" in run_tty([cli, "report", "cold.jst"], work, clean_env(NO_COLOR="1")):
        fail("colour on a terminal although NO_COLOR is set")
    shutil.rmtree(work)


def test_schema():
    cli, work = traces()
    for case, args in CASES.items():
        rc, out, err = run([cli, "report", "--json"] + args, cwd=work)
        if rc != 0:
            fail(f"{case}: exit {rc}: {err}")
            continue
        doc = json.loads(out)
        for e in schema_errors(doc) + consistency_errors(doc):
            fail(f"{case}: {e}")
    # hostile strings: valid JSON that keeps them, text without control
    # characters, Markdown tables that keep their shape
    rc, out, err = run([cli, "report", "--json", "odd.jst"], cwd=work)
    try:
        doc = json.loads(out)
        p = doc["processes"][0]
        if not (p["exe"].startswith('/opt/we"ird\n\x1b[2Japp') and "\ufffd" in p["exe"]):
            fail(f"odd.jst: exe not kept through JSON: {p['exe']!r}")
        if p["modules"][0]["source"] != "/opt/my lib/k|odd\n.ptx":
            fail(f"odd.jst: source not kept: {p['modules'][0]['source']!r}")
        for e in schema_errors(doc):
            fail(f"odd.jst: {e}")
    except (ValueError, KeyError, IndexError) as e:
        fail(f"odd.jst: --json is not valid: {e}\n{out}")
    rc, out, err = run([cli, "report", "odd.jst"], cwd=work)
    if rc != 0 or re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out):
        fail(f"odd.jst: text report has control characters: {out!r}")
    # The newline and ESC shown escaped (the CLI's one rule), on one line.
    if not any(l.startswith("Process 31337  /opt/we\"ird\\n\\x1b[2Japp") for l in out.splitlines()):
        fail("odd.jst: the process line was split by the newline in exe, or not escaped")
    rc, out, err = run([cli, "report", "--markdown", "odd.jst"], cwd=work)
    width = None
    for line in out.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = len(re.split(r"(?<!\\)\|", line))
        if width is None:
            width = cells  # a table's header row
        if cells != width or not line.endswith("|") or re.search(r"[\x00-\x1f\x7f-\x9f]", line):
            fail(f"odd.jst: broken Markdown row ({cells} cells, header {width}): {line!r}")
    if rc != 0:
        fail(f"odd.jst --markdown: exit {rc}")
    # the schema itself must reject what it should: a stable key missing
    rc, out, _ = run([cli, "report", "--json", "cold.jst"], cwd=work)
    doc = json.loads(out)
    del doc["processes"][0]["modules"][0]["call_site"]
    if not schema_errors(doc):
        fail("the validator accepted a module without call_site")
    # the cold-cache case, key by key
    doc = json.loads(out)
    p = doc["processes"][0]
    jit = [m for m in p["modules"] if m["jit"]]
    if not (p["pid"] == 4242 and p["ttfk_ns"] == 12200000000 and p["jit_ns"] == 11800000000
            and len(jit) == 1 and jit[0]["jit_from"] == "compute_75"
            and jit[0]["cache"] == "miss_stored" and jit[0]["source"] == "/opt/app/lib/libfoo.so"
            and "-gencode arch=compute_90,code=sm_90" in jit[0]["fix"]):
        fail(f"cold.jst: unexpected figures: {json.dumps(p)[:400]}")
    if not doc["fixes"] or "libfoo.so" not in doc["fixes"][0]["text"]:
        fail("cold.jst: the first fix is not the -gencode of libfoo.so")
    shutil.rmtree(work)


def test_partial():
    cli, work = traces()
    # a trace cut off by SIGKILL: a report of what it holds, exit 0
    rc, out, err = run([cli, "report", "killed.jst"], cwd=work)
    if rc != 0 or "truncated" not in out or "no kernel launch" not in out:
        fail(f"killed.jst: exit {rc}, report does not say it is truncated:\n{out}{err}")
    if "11.80 s" not in out or "libfoo.so" not in out:
        fail("killed.jst: the JIT load it holds is not reported")
    rc, out, err = run([cli, "report", "--json", "killed.jst"], cwd=work)
    doc = json.loads(out) if rc == 0 else {}
    if rc != 0 or not doc["partial"] or not doc["processes"][0]["truncated"] \
            or doc["processes"][0]["ttfk_ns"] is not None:
        fail(f"killed.jst --json: exit {rc}, partial/truncated/ttfk wrong")
    # damaged in the middle of the stream: still exit 0, says damaged or truncated
    with open(os.path.join(work, "cold.jst"), "rb") as f:
        data = bytearray(f.read())
    mid = 32 + (len(data) - 32) // 2
    for i in range(mid, min(mid + 64, len(data))):
        data[i] ^= 0x5A
    with open(os.path.join(work, "damaged.jst"), "wb") as f:
        f.write(data)
    rc, out, err = run([cli, "report", "damaged.jst"], cwd=work)
    if rc != 0 or not re.search(r"damaged|truncated", out):
        fail(f"damaged.jst: exit {rc}, expected a partial report:\n{out}{err}")
    # cut at many lengths: a partial report (0) or unreadable (2), never a crash
    cut = os.path.join(work, "cut.jst")
    for n in list(range(0, len(data), 37)) + [len(data) - 1]:
        with open(os.path.join(work, "cold.jst"), "rb") as f:
            whole = f.read()
        with open(cut, "wb") as f:
            f.write(whole[:n])
        for fmt in ([], ["--json"]):
            rc, out, err = run([cli, "report"] + fmt + ["cut.jst"], cwd=work)
            if rc not in (0, 2) or (rc == 0 and fmt and not json.loads(out)["partial"]):
                fail(f"cold.jst cut at {n} bytes: exit {rc}: {err}")
    # garbage: unreadable, exit 2, one clear line
    rc, out, err = run([cli, "report", "garbage.jst"], cwd=work)
    if rc != 2 or "garbage.jst" not in err or out:
        fail(f"garbage.jst: exit {rc} (want 2), stderr {err!r}")
    # a path that does not exist: exit 2
    rc, out, err = run([cli, "report", "cold.jst", "nonexistent.jst"], cwd=work)
    if rc != 2 or "nonexistent.jst" not in err:
        fail(f"nonexistent path: exit {rc} (want 2), stderr {err!r}")
    # garbage next to a good trace: the report, naming the unreadable one, and
    # exit 2 with the reason on stderr, as every reader does
    rc, out, err = run([cli, "report", "cold.jst", "garbage.jst"], cwd=work)
    if rc != 2 or "unreadable" not in out or "garbage.jst" not in out or \
            not err.startswith("jitstall report: garbage.jst: "):
        fail(f"cold + garbage: exit {rc}, the unreadable file is not named:\n{out}\n{err}")
    # an empty directory: nothing to read, exit 2
    os.mkdir(os.path.join(work, "empty"))
    rc, out, err = run([cli, "report", "empty"], cwd=work)
    if rc != 2:
        fail(f"empty directory: exit {rc} (want 2)")
    # usage errors
    for args in (["report"], ["report", "--json", "--markdown", "cold.jst"],
                 ["report", "--bogus", "cold.jst"]):
        rc, out, err = run([cli] + args, cwd=work)
        if rc != 2 or not err.startswith("jitstall report: "):
            fail(f"{args}: exit {rc} (want 2), stderr {err!r}")
    shutil.rmtree(work)


def man_blocks(path):
    """The fenced blocks under ## SYNOPSIS and ## OPTIONS of a man page."""
    with open(path) as f:
        text = f.read()
    blocks = {}
    for section in ("SYNOPSIS", "OPTIONS"):
        m = re.search(r"^## " + section + r"\s*\n(.*?)(?=^## |\Z)", text, re.S | re.M)
        code = re.search(r"^```[a-z]*\n(.*?)^```", m.group(1), re.S | re.M) if m else None
        blocks[section] = code.group(1) if code else None
    return blocks


def test_help():
    cli, docs = env_or_skip("JST_CLI", "JST_DOCS")
    for cmd in ("report", "run"):
        page = os.path.join(docs, f"jitstall-{cmd}.1.md")
        rc, out, err = run([cli, cmd, "--help"])
        if rc != 0:
            fail(f"{cmd} --help: exit {rc}")
            continue
        try:
            blocks = man_blocks(page)
        except FileNotFoundError:
            fail(f"{page} is missing")
            continue
        for section, block in blocks.items():
            if not block:
                fail(f"{page}: no code block under ## {section}")
            elif block not in out:
                fail(f"{page}: ## {section} does not match `jitstall {cmd} --help`:\n"
                     f"--- man page\n{block}--- --help\n{out}")
        # the whole --help text must be in the man page's DESCRIPTION too
        with open(page) as f:
            text = f.read()
        m = re.search(r"^```text\n(usage: jitstall .*?)^```", text, re.S | re.M)
        if not m or m.group(1) != out:
            fail(f"{page}: the full --help block is missing or differs")


def test_run_e2e():
    cli, preload, simdir, prog, prog_fork, fix = env_or_skip(
        "JST_CLI", "JST_PRELOAD", "JST_SIMDIR", "JST_PROG", "JST_PROG_FORK", "JST_FIXTURES")
    work = tempfile.mkdtemp(prefix="jst-run-")
    env = clean_env(LD_LIBRARY_PATH=simdir, CUDA_CACHE_PATH=os.path.join(work, "cache"),
                    JITSTALL_SIM_JIT_US_PER_KB="5000")

    # cold cache: a PTX-only module JITs; the program's exit status comes back
    rc, out, err = run([cli, "run", "-o", "cold", "--", prog, fix, "3", "module", "k75.ptx"],
                       cwd=work, env=env)
    lines = [l for l in err.splitlines() if l.startswith("jitstall: ")]
    if rc != 3:
        fail(f"run: exit {rc}, want the program's 3\n{out}{err}")
    if len(lines) != 3 or "time to first kernel" not in lines[0] \
            or "time in JIT" not in lines[1] or "jitstall report cold" not in lines[2]:
        fail(f"run: the summary is not three lines as documented:\n{err}")
    if "launch add_one: CUDA_SUCCESS" not in out:
        fail(f"run: the program's own output changed:\n{out}")
    rc, out, err = run([cli, "report", "--json", "cold"], cwd=work, env=env)
    doc = json.loads(out) if rc == 0 else None
    if not doc:
        fail(f"report after run: exit {rc}: {err}")
    else:
        for e in schema_errors(doc) + consistency_errors(doc):
            fail(f"report after run: {e}")
        p = doc["processes"][0]
        jit = [m for m in p["modules"] if m["jit"]]
        if len(doc["processes"]) != 1 or not jit or jit[0]["jit_from"] != "compute_75" \
                or jit[0]["cache"] != "miss_stored" or p["ttfk_ns"] is None \
                or p["jit_ns"] <= 0 or "ptxas -arch=sm_90" not in (jit[0]["fix"] or ""):
            fail(f"report after run: unexpected content:\n{out[:1500]}")
        # PTX text read by the program: compile it ahead of time
        if not any(f["kind"] == "ptx_file" and "ptxas -arch=sm_90" in f["text"]
                   for f in doc["fixes"]):
            fail("report after run: no ptx_file fix")
        # jitstall's own cost, measured by the preload
        if not p.get("self_ns") or p["self_ns"] >= p["jit_ns"] * 10:
            fail(f"report after run: self_ns {p.get('self_ns')} missing or implausible")
    rc, text, err = run([cli, "report", "cold"], cwd=work, env=env)
    if rc != 0 or "Time to first kernel" not in text or "ptx_jit" not in text \
            or "jitstall's own cost: " not in text:
        fail(f"text report after run: exit {rc}:\n{text}{err}")

    # warm cache: the same module is now a cache hit, counted as cache load
    rc, out, err = run([cli, "run", "-o", "warm", prog, fix, "0", "module", "k75.ptx"],
                       cwd=work, env=env)
    rc2, out, err = run([cli, "report", "--json", "warm"], cwd=work, env=env)
    doc = json.loads(out) if rc2 == 0 else None
    if rc != 0 or not doc:
        fail(f"warm run: exit {rc}/{rc2}: {err}")
    else:
        p = doc["processes"][0]
        jit = [m for m in p["modules"] if m["jit"]]
        if not jit or jit[0]["cache"] != "hit" or p["jit_cache_load_ns"] != p["jit_ns"]:
            fail(f"warm run: the JIT is not a cache hit:\n{out[:1500]}")

    # fork + exec: every process traces into the same directory; one report
    rc, out, err = run([cli, "run", "-o", "fork", prog_fork, fix, "4", prog], cwd=work, env=env)
    if rc != 4:
        fail(f"fork run: exit {rc}, want 4\n{err}")
    rc, out, err = run([cli, "report", "--json", "fork"], cwd=work, env=env)
    doc = json.loads(out) if rc == 0 else None
    if not doc or len(doc["processes"]) < 2:
        fail(f"fork run: want a process per trace, got {out[:800]}{err}")

    # LD_PRELOAD keeps what was there, after libjitstall.so
    rc, out, err = run([cli, "run", "-o", "env", "sh", "-c", 'echo "$LD_PRELOAD|$JITSTALL_DIR"'],
                       cwd=work, env=dict(env, LD_PRELOAD="libm.so.6"))
    first, _, rest = out.strip().partition("|")
    if rc != 0 or not first.endswith("libjitstall.so:libm.so.6") \
            or rest != os.path.join(os.path.realpath(work), "env"):
        fail(f"run: LD_PRELOAD/JITSTALL_DIR not as documented: {out!r}")

    # the default directory: jitstall-<cmd>-<YYYYmmdd-HHMMSS>
    rc, out, err = run([cli, "run", prog, fix, "0", "module", "sm90.fatbin"], cwd=work, env=env)
    base = os.path.basename(prog)
    made = [d for d in os.listdir(work)
            if re.fullmatch(r"jitstall-" + re.escape(base) + r"-\d{8}-\d{6}(-\d+)?", d)]
    if rc != 0 or len(made) != 1:
        fail(f"run: default directory not created as documented: {os.listdir(work)}")
    # ... and removed again when the command made no driver call (no trace)
    rc, out, err = run([cli, "run", "true"], cwd=work, env=env)
    if rc != 0 or any(d.startswith("jitstall-true-") for d in os.listdir(work)):
        fail(f"run: the empty default directory of a command without CUDA was kept: {os.listdir(work)}")

    # a signal ends the child: 128 + N, like a shell
    rc, out, err = run([cli, "run", "-o", "sig", "sh", "-c", "kill -TERM $$"], cwd=work, env=env)
    if rc != 128 + 15:
        fail(f"run: child killed by SIGTERM gave exit {rc}, want 143")
    # a signal sent to jitstall is passed on to the child
    p = subprocess.Popen([cli, "run", "-o", "fwd", "sh", "-c", "trap 'exit 42' USR1; "
                          "echo ready; while :; do sleep 0.1; done"], cwd=work, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.send_signal(10)  # SIGUSR1
    try:
        rc = p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = None
    if rc != 42:
        fail(f"run: SIGUSR1 was not forwarded (exit {rc}, want 42)")
    # command not found: 127
    rc, out, err = run([cli, "run", "-o", "nf", "no-such-command-jst"], cwd=work, env=env)
    if rc != 127 or "command not found" not in err:
        fail(f"run: missing command gave exit {rc}, stderr {err!r}")
    shutil.rmtree(work, ignore_errors=True)


def main():
    tests = {"reports": test_reports, "schema": test_schema, "partial": test_partial,
             "help": test_help, "run_e2e": test_run_e2e}
    if len(sys.argv) != 2 or sys.argv[1] not in tests:
        print(__doc__, file=sys.stderr)
        return 2
    tests[sys.argv[1]]()
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
