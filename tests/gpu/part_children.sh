# tests/gpu/part_children.sh: compiler children on the real driver (sourced by
# tests/gpu/run.sh; uses run_case, ok, fail, $J, $PRELOAD, $P, $C, $W, $G).
# Never exits; each step is guarded. The stand-in compiler and the programs
# are the simulated driver's e2e ones (tests/e2e), linked with the real
# libcuda here, whose cuInit starts threads of its own:
#  1. a SIGCHLD handler reaps 300 ptxas children while the main thread
#     mallocs and frees: same output ("reaped 300") and exit code, and 300
#     compile records;
#  2. SIGCHLD ignored for 40 children, then 5 reaped: 40 records with
#     end_unseen, 5 with a status;
#  3. system() and popen() of ptxas and nvcc: 3 compile records.
E="$G/../e2e"
cuinc=$(dirname "$(command -v nvcc)")/../include
mkdir -p "$W/ch_bin" "$W/ch_out"
if gcc -O1 "$E/fake_cc.c" -o "$W/ch_bin/fake_cc" 2>"$W/children.build" &&
  gcc -O1 -I"$cuinc" "$E/prog_sigchld.c" -o "$P/prog_sigchld" -L"$cuinc/../lib64/stubs" -lcuda 2>>"$W/children.build" &&
  gcc -O1 -I"$cuinc" "$E/prog_shellcc.c" -o "$P/prog_shellcc" -L"$cuinc/../lib64/stubs" -lcuda 2>>"$W/children.build"; then
  ln -sf fake_cc "$W/ch_bin/ptxas"
  ln -sf fake_cc "$W/ch_bin/nvcc"
  count() { # count NAME PYEXPR: prints the value of PYEXPR over the compile records cs
    python3 -c 'import json,sys
cs=[r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if r.get("type")=="compile"]
print(eval(sys.argv[2]))' "$W/t/$1/dump.jsonl" "$2" 2>/dev/null
  }
  run_case ch_handler "$C/ch" FAKE_CC_MS=1 -- timeout 120 "$P/prog_sigchld" handler 300 "$W/ch_bin" "$W/ch_out"
  if grep -qx 'reaped 300' "$W/t/ch_handler/pre.out"; then ok "children: reaped 300 under the preload"
  else fail "children: $(tail -1 "$W/t/ch_handler/pre.out")"; fi
  n=$(count ch_handler 'len(cs)')
  if [ "$n" = 300 ]; then ok "children: 300 compile records from a SIGCHLD handler"
  else fail "children: ${n:-no} compile records from a SIGCHLD handler, expected 300"; fi
  run_case ch_ignore "$C/ch" FAKE_CC_MS=20 -- "$P/prog_sigchld" ignore 40 "$W/ch_bin" "$W/ch_out"
  n=$(count ch_ignore '"%d/%d" % (sum(1 for c in cs if c.get("end_unseen")), sum(1 for c in cs if "wait_status" in c))')
  if [ "$n" = 40/5 ]; then ok "children: 40 reaped by the kernel, 5 by waitpid"
  else fail "children: kernel/waitpid records $n, expected 40/5"; fi
  run_case ch_shell "$C/ch" PATH="$W/ch_bin:$PATH" -- "$P/prog_shellcc" shell "$W/ch_out"
  n=$(count ch_shell '",".join(c["spawn_how"] for c in cs)')
  if [ "$n" = system,system,popen ]; then ok "children: system and popen compiles recorded"
  else fail "children: system/popen records: $n"; fi
else
  fail "children: build failed: $(head -3 "$W/children.build")"
fi
