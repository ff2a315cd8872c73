#!/usr/bin/env bash
# Route "direct": prog_direct loads, launches and exits 7; its output and exit status
# must not change under the preload, and every load, its duration, verdict,
# cache outcome and result must be in the trace with route "direct".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/routes.sh"
route_scenario prog_direct direct
echo "ok: route direct"
