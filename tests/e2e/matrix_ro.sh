# The read-only cache case of test_cache_matrix.sh, sourced inside a private
# mount namespace where $WORK/ro is a read-only bind mount (root only), after
# lib.sh with JST_E2E_WORK set to the outer work directory.
ro="$WORK/ro"
run_plain readonly.plain CUDA_CACHE_PATH="$WORK/plain-cache-ro" "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
run_traced readonly CUDA_CACHE_PATH="$ro" "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
same_behaviour readonly.plain readonly
expect_rc readonly 0
dump_json "$(the_trace readonly)" "$WORK/readonly.json"
check_json "$WORK/readonly.json" <<'PY'
l = loads()[0]
expect(l["verdict"] == "ptx_jit" and l["result"] == 0, "JIT load succeeded")
expect(l.get("cache") == "miss_not_stored" and l.get("cache_reason") == "read_only",
       f"read-only cache: {l.get('cache')} / {l.get('cache_reason')}")
st = of_type("cache_state")
expect(st and all(s["writable"] == 0 and s["exists"] == 1 for s in st), "cache state: exists, not writable")
PY
[ -z "$(find "$ro" -type f)" ] || fail "the read-only cache got files"
