#!/usr/bin/env bash
# Soak test: runs `checklist-bench load` against one checklistd for MINUTES
# minutes, plus a churn loop of short load runs (connections and lists come
# and go), and records the server's memory every few seconds.
#
#   Benchmarks/soak.sh MINUTES [extra checklist-bench load options...]
#
# Environment:
#   BIN_DIR        where checklistd and checklist-bench are (default: .build/release,
#                  else .build/debug); build first: swift build -c release
#   SOAK_CSV       the CSV to write (default: soak-YYYYmmdd-HHMMSS.csv here)
#   SOAK_INTERVAL  seconds between samples (default 5)
#   SOAK_LOAD      load options of the main run
#                  (default: --connections 500 --pipeline 2 --mix page=70,patch=20,lists=10)
#
# CSV columns: elapsed_seconds, rss_kb (VmRSS), hwm_kb (VmHWM), threads, fds.
# Prints the first and last RSS and the load report; exits 1 if the load
# found an error or the server did not stop cleanly (exit 0 on SIGTERM).
set -euo pipefail

minutes=${1:?usage: Benchmarks/soak.sh MINUTES [extra load options...]}
shift
[[ $minutes =~ ^[0-9]+$ && $minutes -ge 1 && $minutes -le 1440 ]] || { echo "MINUTES: 1 to 1440" >&2; exit 2; }
cd "$(dirname "$0")/.."
bin=${BIN_DIR:-}
if [[ -z $bin ]]; then
    if [[ -x .build/release/checklistd && -x .build/release/checklist-bench ]]; then bin=.build/release; else bin=.build/debug; fi
fi
for tool in checklistd checklist-bench; do
    [[ -x $bin/$tool ]] || { echo "no $bin/$tool: build first (swift build -c release)" >&2; exit 2; }
done
interval=${SOAK_INTERVAL:-5}
csv=${SOAK_CSV:-soak-$(date +%Y%m%d-%H%M%S).csv}
read -r -a load_options <<< "${SOAK_LOAD:---connections 500 --pipeline 2 --mix page=70,patch=20,lists=10}"
seconds=$((minutes * 60))

work=$(mktemp -d "${TMPDIR:-/tmp}/checklist-soak.XXXXXX")
server_pid=""
sampler_pid=""
cleanup() {
    [[ -n $sampler_pid ]] && kill "$sampler_pid" 2>/dev/null || true
    [[ -n $server_pid ]] && kill -9 "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

"$bin/checklistd" --host 127.0.0.1 --port 0 --data-dir "$work/data" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
# Wait (at most 30 s) for the readiness line.
for _ in $(seq 300); do
    grep -q "listening on" "$work/server.out" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { echo "checklistd exited:" >&2; cat "$work/server.err" >&2; exit 1; }
    sleep 0.1
done
address=$(grep -o "listening on [^ ]*" "$work/server.out" | head -1 | cut -d' ' -f3)
[[ -n $address ]] || { echo "checklistd did not report listening within 30 s" >&2; exit 1; }
echo "soak: checklistd $server_pid on $address for $minutes min; samples every ${interval}s into $csv" >&2

sample() {
    local start=$SECONDS
    echo "elapsed_seconds,rss_kb,hwm_kb,threads,fds"
    while kill -0 "$server_pid" 2>/dev/null; do
        local status rss hwm threads fds
        status=$(cat "/proc/$server_pid/status" 2>/dev/null) || break
        rss=$(awk '/^VmRSS:/ {print $2}' <<< "$status")
        hwm=$(awk '/^VmHWM:/ {print $2}' <<< "$status")
        threads=$(awk '/^Threads:/ {print $2}' <<< "$status")
        fds=$(ls "/proc/$server_pid/fd" 2>/dev/null | wc -l)
        echo "$((SECONDS - start)),$rss,$hwm,$threads,$fds"
        sleep "$interval"
    done
}
sampler_start=$SECONDS
sample >"$csv" &
sampler_pid=$!

# The main run, and a churn loop of short runs beside it.
"$bin/checklist-bench" load --server "$address" --seconds "$seconds" "${load_options[@]}" "$@" --json \
    >"$work/load.json" 2>"$work/load.err" &
load_pid=$!
churn_runs=0
churn_errors=0
deadline=$((SECONDS + seconds - 10))
while (( SECONDS < deadline )) && kill -0 "$load_pid" 2>/dev/null; do
    out=$("$bin/checklist-bench" load --server "$address" --connections 100 --seconds 5 --lists 2 --items 200 --json 2>/dev/null || true)
    churn_runs=$((churn_runs + 1))
    errors=$(grep -o '"errors": [0-9]*' <<< "$out" | grep -o '[0-9]*$' || echo 1)
    churn_errors=$((churn_errors + ${errors:-1}))
done
status=0
wait "$load_pid" || status=$?

# The last sample is taken with the server still running, then it is stopped.
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=""
status_now=$(cat "/proc/$server_pid/status")
echo "$((SECONDS - sampler_start)),$(awk '/^VmRSS:/ {print $2}' <<< "$status_now"),$(awk '/^VmHWM:/ {print $2}' <<< "$status_now"),$(awk '/^Threads:/ {print $2}' <<< "$status_now"),$(ls "/proc/$server_pid/fd" | wc -l)" >>"$csv"
kill -TERM "$server_pid"
server_status=0
wait "$server_pid" || server_status=$?
server_pid=""

first=$(sed -n 2p "$csv")
last=$(tail -1 "$csv")
echo "load: $(cat "$work/load.json")"
echo "churn: $churn_runs short runs, $churn_errors errors"
echo "first sample: ${first%%,*} s, RSS $(cut -d, -f2 <<< "$first") kB"
echo "last sample:  ${last%%,*} s, RSS $(cut -d, -f2 <<< "$last") kB (peak $(cut -d, -f3 <<< "$last") kB)"
echo "RSS over the run: min $(tail -n +2 "$csv" | cut -d, -f2 | sort -n | head -1) kB, max $(tail -n +2 "$csv" | cut -d, -f2 | sort -n | tail -1) kB"
echo "samples: $csv ($(($(wc -l < "$csv") - 1)) rows)"
grep -E "level=(warn|error)" "$work/server.err" | head -5 || true
load_errors=$(grep -o '"errors": [0-9]*' "$work/load.json" | grep -o '[0-9]*$' || echo 1)
if (( status != 0 || server_status != 0 || load_errors != 0 || churn_errors != 0 )); then
    echo "soak FAILED: load exit $status, server exit $server_status, load errors $load_errors, churn errors $churn_errors" >&2
    exit 1
fi
echo "soak passed"
