#!/usr/bin/env bash
# The Prometheus file the preload writes (JITSTALL_PROM_DIR) is always valid
# text exposition, whatever the labels: eight JITSTALL_LABELS values of 120
# '"' each (every label whole, none cut after its name), invalid UTF-8 in the
# executable's name and in the label values (replaced by U+FFFD), '\' and '"'
# escaped. Checked by a strict parser here, and by `promtool check metrics`
# when it is installed.
. "$(dirname "$0")/lib.sh"
q=$(printf '"%.0s' $(seq 120))
labels=""
for i in 1 2 3 4 5 6 7 8; do labels="$labels${labels:+,}l$i=$q"; done
bad_exe="$WORK/prog$(printf '\xff\xfe')\"q\\"
cp "$BIN/prog_harm" "$bad_exe"
bad_labels="team=$(printf 'a\xc3\x28b\xe2\x82'),path=$(printf 'x\\y"z\xed\xa0\x80'),ok=caf$(printf '\xc3\xa9')"

check_prom() { # FILE NLABELS-EXPECTED...
    python3 - "$@" <<'PY'
import re, sys
path, want = sys.argv[1], sys.argv[2:]
raw = open(path, "rb").read()
text = raw.decode("utf-8")  # strict: invalid UTF-8 fails here
name_re = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
lname_re = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
seen = 0
for line in text.split("\n")[:-1]:
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        continue
    m = name_re.match(line)
    assert m, f"bad metric name: {line!r}"
    i = m.end()
    assert line[i] == "{", f"no labels: {line!r}"
    i += 1
    labels = {}
    while line[i] != "}":
        m = lname_re.match(line, i)
        assert m, f"bad label name at {i}: {line!r}"
        i = m.end()
        assert line[i:i + 2] == '="', f"expected '=\"' after label name at {i}: {line!r}"
        i += 2
        v = []
        while line[i] != '"':
            if line[i] == "\\":
                assert line[i + 1] in '\\"n', f"bad escape at {i}: {line!r}"
                v.append({"n": "\n"}.get(line[i + 1], line[i + 1]))
                i += 2
            else:
                v.append(line[i])
                i += 1
        i += 1
        assert m.group(0) not in labels, f"label twice: {line!r}"
        labels[m.group(0)] = "".join(v)
        if line[i] == ",":
            i += 1
    i += 1
    assert line[i] == " ", f"no space before the value: {line!r}"
    float(line[i + 1:])
    for w in want:
        k, _, val = w.partition("=")
        assert labels.get(k) == val, f"label {k}: {labels.get(k)!r}, want {val!r}"
    seen += 1
assert seen > 5, f"only {seen} samples"
PY
}

run_promtool() {
    if command -v promtool >/dev/null; then
        promtool check metrics <"$1" >"$WORK/promtool.out" 2>&1 ||
            fail "promtool: $(cat "$WORK/promtool.out")"
    fi
}

# A long program name too: jitstall's own labels take their share.
long_exe="$WORK/prog_$(printf 'x%.0s' $(seq 120))"
cp "$BIN/prog_harm" "$long_exe"
mkdir -p "$WORK/p1"
run_traced quotes JITSTALL_PROM_DIR="$WORK/p1" JITSTALL_LABELS="$labels" "$long_exe" "$FIX" loads 1
expect_rc quotes 0
f=$(ls "$WORK"/p1/*.prom)
want=()
for i in 1 2 3 4 5 6 7 8; do want+=("l$i=$q"); done
check_prom "$f" "${want[@]}" || fail "invalid file with 8 labels of 120 quotes: $(head -c 600 "$f")"
run_promtool "$f"

mkdir -p "$WORK/p2"
run_traced utf JITSTALL_PROM_DIR="$WORK/p2" JITSTALL_LABELS="$bad_labels" "$bad_exe" "$FIX" loads 1
expect_rc utf 0
f=$(ls "$WORK"/p2/*.prom)
check_prom "$f" "program=prog��\"q\\" "team=a�(b��" "path=x\\y\"z���" "ok=café" ||
    fail "invalid file with invalid UTF-8: $(head -c 600 "$f" | od -c | head -20)"
run_promtool "$f"
# Names Prometheus reserves (le: histogram buckets, quantile: summaries) and
# one jitstall sets itself are dropped; promtool rejects a gauge with le. A
# control character (ESC, a bidirectional override) reads as the report
# shows it, not raw.
mkdir -p "$WORK/p3"
ctl="x$(printf '\x1b\xe2\x80\xae')y"
run_traced reserved JITSTALL_PROM_DIR="$WORK/p3" \
    JITSTALL_LABELS="le=0.5,quantile=0.9,verdict=x,svc=a,ctl=$ctl" "$BIN/prog_harm" "$FIX" loads 1
expect_rc reserved 0
f=$(ls "$WORK"/p3/*.prom)
check_prom "$f" "svc=a" 'ctl=x\x1b\u202ey' ||
    fail "reserved names or controls in labels: $(head -c 600 "$f" | od -c | head)"
if grep -Eq '[{,](le|quantile)="' "$f"; then
    fail "a reserved label name was kept: $(grep -Em1 '[{,](le|quantile)="' "$f")"
fi
run_promtool "$f"
echo "ok: Prometheus labels"
