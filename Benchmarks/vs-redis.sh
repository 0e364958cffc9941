#!/usr/bin/env bash
# Reads side by side with Redis: the same 1M-item list (40-byte texts) in a
# local redis-server and a local checklistd, 100-row pages read by 50
# connections with 1 and 10 requests in flight, at offset 0 and at the
# middle. Redis is driven by redis-benchmark (LRANGE key START START+99),
# checklistd by `checklist-bench load --mix page=100 --compression off`
# (Redis does not compress); each prints the ratio of requests per second.
#
#   Benchmarks/vs-redis.sh [--seconds 10] [--items 1000000] [--connections 50]
#                          [--text-bytes 40] [--no-build] [--json]
#
# Installs redis-server and redis-tools from Debian (apt-get) when
# redis-server or redis-benchmark is missing. Both servers bind 127.0.0.1
# on free ports and are stopped on exit; every measured run lasts about
# --seconds. Builds the release checklistd and checklist-bench first unless
# --no-build (BIN_DIR overrides .build/release).
#
# Output: a table with, per shape, both rates, the ratio ours/Redis, each
# server's CPU per request (from /proc, over the measured run) and the bench
# tool's own CPU per request; with --json one JSON object on one line:
# {"items", "connections", "textBytes", "seconds", "runs": [{"pipeline",
#  "offset", "oursPerSecond", "redisPerSecond", "ratio", "oursServerCpuUs",
#  "redisServerCpuUs", "toolCpuUs", "redisToolCpuUs", "errors"}, ...]}
# (toolCpuUs: checklist-bench's CPU per request; redisToolCpuUs:
# redis-benchmark's, the calibration run excluded).
set -euo pipefail

seconds=10 items=1000000 connections=50 text_bytes=40 build=1 json=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --items) items=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --text-bytes) text_bytes=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --json) json=1; shift ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "vs-redis.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
for n in "$seconds" "$items" "$connections" "$text_bytes"; do
    [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || { echo "vs-redis.sh: options take whole numbers >= 1" >&2; exit 2; }
done
[[ $seconds -le 600 ]] || { echo "vs-redis.sh: --seconds at most 600" >&2; exit 2; }
[[ $items -ge 200 ]] || { echo "vs-redis.sh: --items at least 200" >&2; exit 2; }
cd "$(dirname "$0")/.."
log() { echo "vs-redis: $*" >&2; }

if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    log "installing redis-server from Debian"
    sudo_cmd=(); [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq redis-server redis-tools >&2
fi
bin=${BIN_DIR:-.build/release}
if [[ $build -eq 1 && -z ${BIN_DIR:-} ]]; then
    log "building release checklistd and checklist-bench"
    swift build -c release --product checklistd >&2
    swift build -c release --product checklist-bench >&2
fi
for tool in checklistd checklist-bench; do
    [[ -x $bin/$tool ]] || { echo "vs-redis.sh: no $bin/$tool (build with swift build -c release)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vs-redis.XXXXXX")
redis_pid="" server_pid=""
cleanup() {
    [[ -n $redis_pid ]] && kill "$redis_pid" 2>/dev/null || true
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# CPU time (user + system) of process $1 in microseconds.
cpu_us() { awk -v tck="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000000 / tck) }' "/proc/$1/stat"; }

# --- Redis: no persistence, loopback only.
redis_port=$(free_port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --protected-mode yes \
    --daemonize no --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$redis_port" ping >/dev/null || { echo "vs-redis.sh: redis-server did not start" >&2; exit 1; }
log "redis-server $redis_pid on 127.0.0.1:$redis_port: filling $items items"
# RPUSH in batches of 1000, as RESP, through redis-cli --pipe. Texts are
# the bench's: "item N" padded with dots to --text-bytes.
python3 - "$items" "$text_bytes" >"$work/fill.resp" <<'EOF'
import sys
items, width = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
def bulk(b): return b"$%d\r\n%s\r\n" % (len(b), b)
for start in range(0, items, 1000):
    n = min(1000, items - start)
    parts = [b"*%d\r\n" % (n + 2), bulk(b"RPUSH"), bulk(b"list")]
    for i in range(start, start + n):
        t = b"item %d" % i
        parts.append(bulk(t + b"." * (width - len(t)) if len(t) < width else t))
    out.write(b"".join(parts))
EOF
redis-cli -p "$redis_port" --pipe <"$work/fill.resp" >"$work/fill.out"
rm -f "$work/fill.resp"
[[ $(redis-cli -p "$redis_port" llen list) -eq $items ]] || { echo "vs-redis.sh: redis fill incomplete" >&2; exit 1; }

# --- checklistd: release, its own data directory, loopback only.
"$bin/checklistd" --host 127.0.0.1 --port 0 --data-dir "$work/data" --max-connections $((connections + 16)) \
    >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 300); do
    grep -q "listening on" "$work/server.out" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { echo "vs-redis.sh: checklistd exited:" >&2; cat "$work/server.err" >&2; exit 1; }
    sleep 0.1
done
address=$(grep -o "listening on [^ ]*" "$work/server.out" | head -1 | cut -d' ' -f3)
[[ -n $address ]] || { echo "vs-redis.sh: checklistd did not report listening" >&2; exit 1; }
log "checklistd $server_pid on $address"

# One redis-benchmark run with arguments "$@" (--csv among them). Prints
# "RPS CPU_US": its rate, from its CSV line, and its own CPU time (user +
# system, from its rusage as a child, so both tools are seen the same way).
redis_bench() {
    python3 -c '
import csv, io, resource, subprocess, sys
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, check=True).stdout.decode()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(list(csv.reader(io.StringIO(out)))[-1][1], int((r.ru_utime + r.ru_stime) * 1e6))
' "$@"
}

# redis-benchmark has no time limit: a short calibration sets -n for about
# --seconds, and `timeout` bounds it in any case. Prints "RPS SERVER_CPU_US
# TOOL_CPU_US": Redis's CPU and redis-benchmark's own, per request.
redis_run() {
    local pipeline=$1 start=$2 stop=$(($2 + 99)) rps n before after tool_us
    read -r rps _ < <(redis_bench redis-benchmark -h 127.0.0.1 -p "$redis_port" -c "$connections" -P "$pipeline" \
        -n 20000 --csv LRANGE list "$start" "$stop")
    n=$(python3 -c "print(max(1000, int(float('$rps') * $seconds)))")
    before=$(cpu_us "$redis_pid")
    read -r rps tool_us < <(redis_bench timeout $((seconds * 3 + 30)) redis-benchmark -h 127.0.0.1 -p "$redis_port" \
        -c "$connections" -P "$pipeline" -n "$n" --csv LRANGE list "$start" "$stop")
    after=$(cpu_us "$redis_pid")
    echo "$rps $(python3 -c "print(round(($after - $before) / $n, 2), round($tool_us / $n, 2))")"
}

# One `checklist-bench load` run (it fills its own list of --items rows on
# our server, reads, deletes the list). The server's CPU is sampled from the
# "running" line to the end. Prints the report's JSON, with the server's
# CPU per request added as "serverCpuUs".
ours_run() {
    local pipeline=$1 offset=$2 before after
    "$bin/checklist-bench" load --server "$address" --connections "$connections" --pipeline "$pipeline" \
        --mix page=100 --page 100 --lists 1 --items "$items" --text-bytes "$text_bytes" --offset "$offset" \
        --compression off --seconds "$seconds" --json >"$work/load.json" 2>"$work/load.err" &
    local load_pid=$!
    while kill -0 "$load_pid" 2>/dev/null && ! grep -q "running" "$work/load.err" 2>/dev/null; do sleep 0.05; done
    before=$(cpu_us "$server_pid")
    wait "$load_pid" || { echo "vs-redis.sh: checklist-bench load failed:" >&2; cat "$work/load.err" >&2; exit 1; }
    after=$(cpu_us "$server_pid")
    python3 -c "
import json, sys
r = json.load(open('$work/load.json'))
r['serverCpuUs'] = round(($after - $before) / max(1, r['requests']), 2)
print(json.dumps(r))"
}

middle=$((items / 2))
results=()
for pipeline in 1 10; do
    for offset in 0 "$middle"; do
        log "pipeline $pipeline, offset $offset: Redis"
        read -r redis_rps redis_cpu redis_tool_cpu < <(redis_run "$pipeline" "$offset")
        log "pipeline $pipeline, offset $offset: checklistd"
        ours=$(ours_run "$pipeline" "$offset")
        results+=("$pipeline $offset $redis_rps $redis_cpu $redis_tool_cpu $ours")
    done
done

printf '%s\n' "${results[@]}" | python3 -c "
import json, sys
runs = []
for line in sys.stdin:
    pipeline, offset, redis_rps, redis_cpu, redis_tool_cpu, ours = line.split(' ', 5)
    o = json.loads(ours)
    runs.append({'pipeline': int(pipeline), 'offset': int(offset), 'oursPerSecond': round(o['requestsPerSecond']),
                 'redisPerSecond': round(float(redis_rps)), 'ratio': round(o['requestsPerSecond'] / float(redis_rps), 3),
                 'oursServerCpuUs': o['serverCpuUs'], 'redisServerCpuUs': float(redis_cpu),
                 'toolCpuUs': round(o['toolCpuUsPerRequest'], 2), 'redisToolCpuUs': float(redis_tool_cpu),
                 'errors': o['errors']})
if $json:
    print(json.dumps({'items': $items, 'connections': $connections, 'textBytes': $text_bytes, 'seconds': $seconds, 'runs': runs}))
else:
    print('%d items, %d-byte texts, 100-row pages, %d connections, %d s per run' % ($items, $text_bytes, $connections, $seconds))
    print('| in flight | offset | ours/s | Redis LRANGE/s | ratio | our server CPU µs/req | Redis CPU µs/req | checklist-bench CPU µs/req | redis-benchmark CPU µs/req | errors |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for r in runs:
        print('| %(pipeline)d | %(offset)d | %(oursPerSecond)d | %(redisPerSecond)d | %(ratio).2fx | %(oursServerCpuUs).2f | %(redisServerCpuUs).2f | %(toolCpuUs).2f | %(redisToolCpuUs).2f | %(errors)d |' % r)
"
