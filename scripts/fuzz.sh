#!/usr/bin/env bash
# Runs every fuzz target of the module for a given time each, one after another (or
# JOBS at a time), and fails if any finds something or if a target's execution rate
# collapses (a stall: some input makes one run slow). New findings are written by the
# Go fuzzer to the package's testdata/fuzz/<Target>/ folder: commit them as
# regressions. Each input also has a deadline of its own (fuzzguard, 2s; set
# AGENTRUN_FUZZ_DEADLINE), so a stalling input fails with its input saved.
#
#   scripts/fuzz.sh            # 5 minutes per target
#   scripts/fuzz.sh 60s        # 60 seconds per target
#   JOBS=2 scripts/fuzz.sh 5m  # two targets at a time
#   MIN_RATE=500 scripts/fuzz.sh 60s   # fail below 500 execs/s (default 1000)
#   TARGETS='jobs|openai ' scripts/fuzz.sh 60s   # only targets whose "pkg Target" matches
#
# The Go fuzzer minimizes every new interesting input for up to a minute by default
# and reports no executions meanwhile, which reads as a stall for a target with large
# seeds (jobs FuzzParse: 17 execs in 20 s): minimization is capped at MINIMIZE
# executions (default 1000x) so the rate measures the target.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
time="${1:-5m}"
jobs="${JOBS:-1}"
min_rate="${MIN_RATE:-1000}"
minimize="${MINIMIZE:-1000x}"
logs="$(mktemp -d)"
targets=()
for pkg in $(go list ./...); do
  for t in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    if [[ -z "${TARGETS:-}" || "$pkg $t" =~ ${TARGETS} ]]; then
      targets+=("$pkg $t")
    fi
  done
done
echo "fuzzing ${#targets[@]} targets for $time each, $jobs at a time (logs in $logs)"
# rate prints "EXECS SECONDS RATE" from the last progress line of a go test -fuzz log
# ("fuzz: elapsed: 1m0s, execs: 123456 (2057/sec), ..."): the whole run's executions
# over its whole time, so a stall anywhere in it lowers the rate.
rate() {
  grep -E '^fuzz: elapsed: [0-9hms.]+, execs: [0-9]+' "$1" | tail -1 | awk '{
    d = $3; sub(/,$/, "", d); secs = 0
    while (match(d, /^[0-9.]+[hms]/)) {
      n = substr(d, 1, RLENGTH - 1) + 0; u = substr(d, RLENGTH, 1)
      secs += (u == "h" ? 3600 : u == "m" ? 60 : 1) * n
      d = substr(d, RLENGTH + 1)
    }
    execs = $5 + 0
    printf "%d %d %d\n", execs, secs, (secs > 0 ? execs / secs : 0)
  }'
}
run() {
  local pkg="$1" target="$2" log="$logs/${2}_$(basename "$1").log"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" -fuzzminimizetime "$minimize" -parallel 1 "$pkg" >"$log" 2>&1; then
    echo "FAIL $pkg $target: see $log"; tail -20 "$log"; return 1
  fi
  local execs secs r
  read -r execs secs r < <(rate "$log" || true) || true
  if [ -z "${r:-}" ]; then
    echo "FAIL $pkg $target: no execution count in $log"; tail -5 "$log"; return 1
  fi
  if [ "$r" -lt "$min_rate" ]; then
    echo "FAIL $pkg $target: $execs execs in ${secs}s = $r/s, under $min_rate/s: a stall; see $log"
    grep -E '^fuzz: elapsed' "$log" | tail -5
    return 1
  fi
  echo "ok   $pkg $target ($execs execs in ${secs}s, $r/s)"
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
