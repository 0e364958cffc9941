#!/usr/bin/env bash
# Reads and writes side by side with Redis.
#
# Reads: the same 1M-item list (40-byte texts) in a local redis-server and
# a local checklistd, 100-row pages read by 50 connections with 1 and 10
# requests in flight, at offset 0 and at the middle. Redis is driven by
# redis-benchmark (LRANGE key START START+99), checklistd by
# `checklist-bench load --mix page=100 --compression off` (Redis does not
# compress).
#
# Writes: single-item writes of a --text-bytes value by 50 connections
# with 1 and 10 in flight, both servers durable alike: Redis LPUSH
# (`redis-benchmark -t lpush -d 40`, appendonly yes, appendfsync everysec,
# then always) against a PATCH inserting one item at the end of a list
# (`checklist-bench load --mix insert=1`, every answer checked; checklistd
# --fsync everysec, then always). Each prints the ratio of requests per
# second.
#
#   Benchmarks/vs-redis.sh [--seconds 10] [--items 1000000] [--connections 50]
#                          [--text-bytes 40] [--only reads|writes] [--repeat 1]
#                          [--threads N] [--no-build] [--json]
#
# --repeat N measures each shape N times, Redis and checklistd in turn
# (on the same servers), and reports each figure's median: on a shared
# machine one run's rates move by a fifth.
#
# --threads N starts checklistd with N event loops (default: its own
# default, one per core). Redis runs its commands on one thread; on this
# 2-core machine the bench shares the cores with the server, and one loop
# can write faster than two (Benchmarks/RESULTS.md).
#
# Installs redis-server and redis-tools from Debian (apt-get) when
# redis-server or redis-benchmark is missing. The servers bind 127.0.0.1
# on free ports, keep their files in a temporary directory and are stopped
# on exit; every measured run lasts about --seconds (8 reads, 8 writes).
# Builds the release checklistd and checklist-bench first unless
# --no-build (BIN_DIR overrides .build/release).
#
# Output: tables with, per shape, both rates, the ratio ours/Redis, each
# server's CPU per request (from /proc, over the measured run) and the bench
# tool's own CPU per request (medians with --repeat); with --json one JSON
# object on one line:
# {"items", "connections", "textBytes", "seconds", "repeat", "threads" (null:
#  checklistd's default), "runs": [{"pipeline",
#  "offset", "oursPerSecond", "redisPerSecond", "ratio", "oursServerCpuUs",
#  "redisServerCpuUs", "toolCpuUs", "redisToolCpuUs", "errors", "oursRuns",
#  "redisRuns"}, ...],
#  "writes": [{"pipeline", "fsync", the same figures from "oursPerSecond"
#  on}, ...]} (toolCpuUs: checklist-bench's CPU per request;
# redisToolCpuUs: redis-benchmark's, the calibration run excluded; errors:
# summed over the repeats; oursRuns, redisRuns: each repeat's rate; "runs"
# or "writes" empty with --only).
set -euo pipefail

seconds=10 items=1000000 connections=50 text_bytes=40 build=1 json=0 only="" repeat=1 threads=
while [[ $# -gt 0 ]]; do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --items) items=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --text-bytes) text_bytes=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --json) json=1; shift ;;
        -h|--help) sed -n '2,52p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "vs-redis.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ -z $only || $only == reads || $only == writes ]] || { echo "vs-redis.sh: --only reads or --only writes" >&2; exit 2; }
for n in "$seconds" "$items" "$connections" "$text_bytes" "$repeat" ${threads:+"$threads"}; do
    [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || { echo "vs-redis.sh: options take whole numbers >= 1" >&2; exit 2; }
done
[[ $seconds -le 600 ]] || { echo "vs-redis.sh: --seconds at most 600" >&2; exit 2; }
[[ $items -ge 200 ]] || { echo "vs-redis.sh: --items at least 200" >&2; exit 2; }
[[ $repeat -le 20 ]] || { echo "vs-redis.sh: --repeat at most 20" >&2; exit 2; }
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

# Starts redis-server on a free port of 127.0.0.1, its files in a
# directory of its own, with the persistence options "$@"; sets
# redis_port and redis_pid.
start_redis() {
    local dir
    dir=$(mktemp -d "$work/redis.XXXX")
    redis_port=$(free_port)
    redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$dir" --save '' --protected-mode yes \
        --daemonize no --logfile "$dir/redis.log" "$@" &
    redis_pid=$!
    for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$redis_port" ping >/dev/null || { echo "vs-redis.sh: redis-server did not start" >&2; exit 1; }
}

stop_redis() {
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    redis_pid=""
}

# Starts the release checklistd, its data in a directory of its own, with
# the options "$@"; sets address and server_pid.
start_ours() {
    local dir
    dir=$(mktemp -d "$work/ours.XXXX")
    "$bin/checklistd" --host 127.0.0.1 --port 0 --data-dir "$dir/data" --max-connections $((connections + 16)) \
        ${threads:+--threads "$threads"} "$@" \
        >"$dir/server.out" 2>"$dir/server.err" &
    server_pid=$!
    for _ in $(seq 300); do
        grep -q "listening on" "$dir/server.out" 2>/dev/null && break
        kill -0 "$server_pid" 2>/dev/null || { echo "vs-redis.sh: checklistd exited:" >&2; cat "$dir/server.err" >&2; exit 1; }
        sleep 0.1
    done
    address=$(grep -o "listening on [^ ]*" "$dir/server.out" | head -1 | cut -d' ' -f3)
    [[ -n $address ]] || { echo "vs-redis.sh: checklistd did not report listening" >&2; exit 1; }
    log "checklistd $server_pid on $address $*"
}

stop_ours() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

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
# --seconds, and `timeout` bounds it in any case. Runs the test "${@:2}"
# (`LRANGE list START STOP`, or `-t lpush -d BYTES`) with $1 requests in
# flight. Prints "RPS SERVER_CPU_US TOOL_CPU_US": Redis's CPU and
# redis-benchmark's own, per request.
redis_run() {
    local pipeline=$1 rps n before after tool_us
    shift
    read -r rps _ < <(redis_bench redis-benchmark -h 127.0.0.1 -p "$redis_port" -c "$connections" -P "$pipeline" \
        -n 20000 --csv "$@")
    n=$(python3 -c "print(max(1000, int(float('$rps') * $seconds)))")
    before=$(cpu_us "$redis_pid")
    read -r rps tool_us < <(redis_bench timeout $((seconds * 3 + 30)) redis-benchmark -h 127.0.0.1 -p "$redis_port" \
        -c "$connections" -P "$pipeline" -n "$n" --csv "$@")
    after=$(cpu_us "$redis_pid")
    echo "$rps $(python3 -c "print(round(($after - $before) / $n, 2), round($tool_us / $n, 2))")"
}

# One `checklist-bench load` run with $1 requests in flight and the load
# options "${@:2}" (it makes its own lists on our server, runs, deletes
# them). The server's CPU is sampled from the "running" line to the end.
# Prints the report's JSON, with the server's CPU per request added as
# "serverCpuUs".
ours_run() {
    local pipeline=$1 before after
    shift
    "$bin/checklist-bench" load --server "$address" --connections "$connections" --pipeline "$pipeline" \
        --text-bytes "$text_bytes" --compression off --seconds "$seconds" --json "$@" \
        >"$work/load.json" 2>"$work/load.err" &
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

# --- Reads: Redis without persistence, checklistd with its defaults.
reads=()
if [[ $only != writes ]]; then
    start_redis --appendonly no
    log "redis-server $redis_pid on 127.0.0.1:$redis_port: filling $items items"
    # RPUSH in batches of 1000, as RESP, through redis-cli --pipe. Texts are
    # the bench's: "item N" padded with dots to --text-bytes.
    python3 - "$items" "$text_bytes" >"$work/fill.resp" <<'PY'
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
PY
    redis-cli -p "$redis_port" --pipe <"$work/fill.resp" >"$work/fill.out"
    rm -f "$work/fill.resp"
    [[ $(redis-cli -p "$redis_port" llen list) -eq $items ]] || { echo "vs-redis.sh: redis fill incomplete" >&2; exit 1; }
    start_ours

    middle=$((items / 2))
    for pipeline in 1 10; do
        for offset in 0 "$middle"; do
            for round in $(seq "$repeat"); do
                log "reads, pipeline $pipeline, offset $offset, round $round of $repeat: Redis"
                read -r redis_rps redis_cpu redis_tool_cpu < <(redis_run "$pipeline" LRANGE list "$offset" $((offset + 99)))
                log "reads, pipeline $pipeline, offset $offset, round $round of $repeat: checklistd"
                ours=$(ours_run "$pipeline" --mix page=100 --page 100 --lists 1 --items "$items" --offset "$offset")
                reads+=("R $pipeline $offset $redis_rps $redis_cpu $redis_tool_cpu $ours")
            done
        done
    done
    stop_redis
    stop_ours
fi

# --- Writes: both servers durable alike, started afresh for each policy.
# Redis appends every LPUSH to its AOF (appendonly yes, appendfsync P);
# checklistd logs every PATCH before answering it (--fsync P: under always
# an answer leaves once its change is fsynced, as Redis's does).
writes=()
if [[ $only != reads ]]; then
    for fsync in everysec always; do
        start_redis --appendonly yes --appendfsync "$fsync"
        log "redis-server $redis_pid on 127.0.0.1:$redis_port, appendfsync $fsync"
        start_ours --fsync "$fsync"
        for pipeline in 1 10; do
            for round in $(seq "$repeat"); do
                log "writes, pipeline $pipeline, fsync $fsync, round $round of $repeat: Redis LPUSH"
                read -r redis_rps redis_cpu redis_tool_cpu < <(redis_run "$pipeline" -t lpush -d "$text_bytes")
                log "writes, pipeline $pipeline, fsync $fsync, round $round of $repeat: checklistd PATCH insert"
                ours=$(ours_run "$pipeline" --mix insert=1 --lists 1 --items 1)
                writes+=("W $pipeline $fsync $redis_rps $redis_cpu $redis_tool_cpu $ours")
            done
        done
        stop_redis
        stop_ours
    done
fi

printf '%s\n' "${reads[@]+"${reads[@]}"}" "${writes[@]+"${writes[@]}"}" | python3 -c "
import json, statistics, sys
# Each shape's rounds, in the order measured.
rounds = {}
for line in sys.stdin:
    if not line.strip():
        continue
    part, shape, where, redis_rps, redis_cpu, redis_tool_cpu, ours = line.rstrip('\n').split(' ', 6)
    o = json.loads(ours)
    rounds.setdefault((part, shape, where), []).append({
        'ours': o['requestsPerSecond'], 'redis': float(redis_rps), 'oursCpu': o['serverCpuUs'],
        'redisCpu': float(redis_cpu), 'tool': o['toolCpuUsPerRequest'], 'redisTool': float(redis_tool_cpu),
        'errors': o['errors']})
runs, writes = [], []
for (part, shape, where), rs in rounds.items():
    med = lambda key: statistics.median(r[key] for r in rs)
    figures = {'oursPerSecond': round(med('ours')), 'redisPerSecond': round(med('redis')),
               'ratio': round(med('ours') / med('redis'), 3),
               'oursServerCpuUs': round(med('oursCpu'), 2), 'redisServerCpuUs': round(med('redisCpu'), 2),
               'toolCpuUs': round(med('tool'), 2), 'redisToolCpuUs': round(med('redisTool'), 2),
               'errors': sum(r['errors'] for r in rs),
               'oursRuns': [round(r['ours']) for r in rs], 'redisRuns': [round(r['redis']) for r in rs]}
    if part == 'R':
        runs.append(dict({'pipeline': int(shape), 'offset': int(where)}, **figures))
    else:
        writes.append(dict({'pipeline': int(shape), 'fsync': where}, **figures))
if $json:
    print(json.dumps({'items': $items, 'connections': $connections, 'textBytes': $text_bytes, 'seconds': $seconds,
                      'repeat': $repeat, 'threads': ${threads:-None}, 'runs': runs, 'writes': writes}))
    sys.exit(0)
cpu = 'our server CPU µs/req | Redis CPU µs/req | checklist-bench CPU µs/req | redis-benchmark CPU µs/req | errors |'
row = '%(ratio).2fx | %(oursServerCpuUs).2f | %(redisServerCpuUs).2f | %(toolCpuUs).2f | %(redisToolCpuUs).2f | %(errors)d |'
medians = ', medians of %d rounds' % $repeat if $repeat > 1 else ''
medians += ', checklistd --threads ${threads}' if '${threads}' else ''
if runs:
    print('%d items, %d-byte texts, 100-row pages, %d connections, %d s per run%s' % ($items, $text_bytes, $connections, $seconds, medians))
    print('| in flight | offset | ours/s | Redis LRANGE/s | ratio | ' + cpu)
    print('|---|---|---|---|---|---|---|---|---|---|')
    for r in runs:
        print(('| %(pipeline)d | %(offset)d | %(oursPerSecond)d | %(redisPerSecond)d | ' + row) % r)
if runs and writes:
    print()
if writes:
    print('Writes: one %d-byte item a request, %d connections, %d s per run%s' % ($text_bytes, $connections, $seconds, medians))
    print('| in flight | fsync | ours PATCH insert/s | Redis LPUSH/s | ratio | ' + cpu)
    print('|---|---|---|---|---|---|---|---|---|---|')
    for r in writes:
        print(('| %(pipeline)d | %(fsync)s | %(oursPerSecond)d | %(redisPerSecond)d | ' + row) % r)
"
