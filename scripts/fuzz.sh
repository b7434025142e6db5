#!/usr/bin/env bash
# Runs every fuzz target of the module for a given time each, one after another (or
# JOBS at a time), and fails if any finds something. New findings are written by the Go
# fuzzer to the package's testdata/fuzz/<Target>/ folder: commit them as regressions.
#
#   scripts/fuzz.sh            # 5 minutes per target
#   scripts/fuzz.sh 60s        # 60 seconds per target
#   JOBS=2 scripts/fuzz.sh 5m  # two targets at a time
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
time="${1:-5m}"
jobs="${JOBS:-1}"
logs="$(mktemp -d)"
targets=()
for pkg in $(go list ./...); do
  for t in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    targets+=("$pkg $t")
  done
done
echo "fuzzing ${#targets[@]} targets for $time each, $jobs at a time (logs in $logs)"
run() {
  local pkg="$1" target="$2" log="$logs/${2}_$(basename "$1").log"
  if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" -parallel 1 "$pkg" >"$log" 2>&1; then
    echo "ok   $pkg $target ($(grep -o 'execs: [0-9]*' "$log" | tail -1))"
  else
    echo "FAIL $pkg $target: see $log"; tail -20 "$log"; return 1
  fi
}
status=0
running=0
for entry in "${targets[@]}"; do
  run $entry &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
