#!/usr/bin/env bash
# Compilers run by system() and popen(), whose shell glibc starts and reaps
# inside libc: each compiler named on the command line is a compile record
# (spawn_how system or popen) with its arguments and the status system or
# pclose returned; a command without a compiler leaves none. fexecve and
# execveat end the trace like execve (END "exec"), never a partial trace.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/bin" "$WORK/out"
for n in ptxas nvcc; do ln -s "$BIN/fake_cc" "$WORK/bin/$n"; done
P="$BIN/prog_shellcc"
run_plain plain PATH="$WORK/bin:$PATH" "$P" shell "$WORK/out"
run_traced shell PATH="$WORK/bin:$PATH" "$P" shell "$WORK/out"
expect_rc plain 0
same_behaviour plain shell
grep -qx 'system nvcc: 3' "$WORK/plain.out" || fail "the shell did not run nvcc"
dump_json "$(the_trace shell)" "$WORK/shell.json"
check_json "$WORK/shell.json" out="$WORK/out" <<'PY'
cs = of_type("compile")
expect(len(cs) == 3, f"three compile records (not one for 'true'), got {len(cs)}")
stacks = {s["stack_id"] for s in of_type("stack")}
a, b, c = cs
expect(a["spawn_how"] == "system" and a["compiler"] == "ptxas", f"system ptxas: {a}")
expect(a["argv"] == ["ptxas", "-arch=sm_90", "-o", arg["out"] + "/sys.cubin", "in put.ptx"], f"quotes undone, redirection dropped: {a['argv']}")
expect(a["wait_status"] == 0 and a.get("out_size") == 100 and a["target"] == "sm_90", f"ptxas: {a}")
expect(b["spawn_how"] == "system" and b["compiler"] == "nvcc" and b["wait_status"] >> 8 == 3, f"system nvcc after cd and an assignment: {b}")
expect(b["argv"][:3] == ["nvcc", "-arch", "sm_80"] and b["target"] == "sm_80", f"nvcc argv {b['argv']}")
expect(c["spawn_how"] == "popen" and c["compiler"] == "ptxas" and c["target"] == "sm_90a", f"popen: {c}")
expect(c["wait_status"] == 0 and c.get("out_size") == 100, f"pclose's status: {c}")
for r in cs:
    expect(r["dur_ns"] >= 25_000_000, f"the compile's 30 ms: {r['dur_ns']}")
    expect(r.get("stack_id") in stacks, f"the caller's stack: {r}")
PY

for how in fexecve execveat; do
    if [ "$JST_EMULATED" = 1 ]; then
        # qemu-user cannot run a program from a descriptor: the plain run fails too
        echo "skip: $how under qemu-user emulation (exec from a descriptor is not emulated)"
        continue
    fi
    run_plain "${how}_plain" "$P" "$how" /bin/echo "$how ran"
    run_traced "$how" "$P" "$how" /bin/echo "$how ran"
    expect_rc "${how}_plain" 0
    same_behaviour "${how}_plain" "$how"
    grep -qx "$how ran" "$WORK/$how.out" || fail "$how did not run echo"
    t=$(the_trace "$how")
    dump_json "$t" "$WORK/$how.json"
    ! grep -q truncated "$WORK/$how.json.err" || fail "$how: the trace is partial"
    check_json "$WORK/$how.json" <<'PY'
e = of_type("end")
expect(len(e) == 1 and e[0]["end_reason"] == "exec", f"END exec: {e}")
expect(e[0]["exec_path"].endswith("/echo"), f"exec_path: {e[0]['exec_path']}")
PY
done
echo "ok: system, popen, fexecve and execveat"
