#!/usr/bin/env bash
# Where the PTX came from, on hand-made traces (tests/e2e/account/synth.py): races on one cold
# cache and their limits (no overlap, cache hits, other images, one process,
# other clock anchors, two waves), and third-party libraries named by dpkg's
# file lists, in a conda env or in the CUDA toolkit.
. "$(dirname "$0")/lib.sh"
python3 "$JST_E2E_SRC/account/synth.py" "$JST_CLI" "$WORK" || fail "synth.py"
echo "ok: account synth"
