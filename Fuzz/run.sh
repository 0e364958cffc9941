#!/usr/bin/env bash
# Builds the libFuzzer targets with `swiftc -sanitize=fuzzer,address` and
# runs each for SECONDS (default 60), starting from a seed corpus made from
# Protocol/vectors (frames), from the real SnapshotWriter (snapshots) and
# from Tests/AppFiles/app_files.py (the apps' files).
#
#   Fuzz/run.sh [SECONDS] [TARGET...]      TARGET: frame-decoder, snapshot-reader, app-files, websocket (default: all)
#
# Builds into $FUZZ_BUILD_DIR (default .build/fuzz); the corpus grown by
# earlier runs is kept there and reused. A crash stops the run with libFuzzer's
# report and a reproducer in .build/fuzz/artifacts/; the script then exits 1.
# Reproduce with: .build/fuzz/bin/TARGET .build/fuzz/artifacts/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(frame-decoder snapshot-reader app-files websocket)

OUT=${FUZZ_BUILD_DIR:-$PWD/.build/fuzz}
MODULES=$OUT/modules
BIN=$OUT/bin
mkdir -p "$MODULES" "$BIN" "$OUT/artifacts"
FLAGS=(-sanitize=fuzzer,address -parse-as-library -package-name checklists -O -g -I "$MODULES" -I Sources/CZlib -I Sources/CLinux -I Sources/COpenSSL)

# One module at a time, bottom layer first, each instrumented for coverage.
build_module() {
    local name=$1
    swiftc "${FLAGS[@]}" -wmo -module-name "$name" -emit-module -emit-module-path "$MODULES/$name.swiftmodule" \
        -emit-object -o "$MODULES/$name.o" $(find "Sources/$name" -name '*.swift' | sort) 2>&1 | grep -v "Cannot export local symbol" || true
    [ -f "$MODULES/$name.o" ] || { echo "fuzz: building $name failed" >&2; exit 1; }
}

echo "fuzz: building (swiftc -sanitize=fuzzer,address) into $OUT"
rm -f "$MODULES"/*.o
build_module ChecklistModel
build_module ChecklistThreads
build_module ChecklistWire
build_module ChecklistSnapshot
build_module ChecklistTransfer
build_module ChecklistWebSocket

link() {
    local target=$1; shift
    swiftc "${FLAGS[@]}" "$@" -lz -o "$BIN/$target" 2>&1 | grep -v "Cannot export local symbol" || true
    [ -x "$BIN/$target" ] || { echo "fuzz: linking $target failed" >&2; exit 1; }
}
link frame-decoder Fuzz/FrameDecoder/main.swift "$MODULES/ChecklistModel.o" "$MODULES/ChecklistWire.o"
link snapshot-reader Fuzz/SnapshotReader/*.swift "$MODULES/ChecklistModel.o" "$MODULES/ChecklistWire.o" \
    "$MODULES/ChecklistThreads.o" "$MODULES/ChecklistSnapshot.o"
link app-files Fuzz/AppFiles/main.swift "$MODULES/ChecklistModel.o" "$MODULES/ChecklistWire.o" \
    "$MODULES/ChecklistThreads.o" "$MODULES/ChecklistSnapshot.o" "$MODULES/ChecklistTransfer.o"
link websocket Fuzz/WebSocket/main.swift "$MODULES/ChecklistModel.o" "$MODULES/ChecklistWire.o" \
    "$MODULES/ChecklistWebSocket.o" -lssl -lcrypto

# Seeds. Frames: every golden vector, prefixed with the byte that selects a
# 4 MiB maxFrameBytes (65536 for the zlib bomb), plus one stream of all the
# request vectors back to back. Snapshots: written by the real writer.
SEEDS=$OUT/seeds
rm -rf "$SEEDS" && mkdir -p "$SEEDS/frame-decoder" "$SEEDS/snapshot-reader" "$SEEDS/app-files" "$SEEDS/websocket"
python3 - "$SEEDS/frame-decoder" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
stream = bytearray([3])
for path in sorted(glob.glob("Protocol/vectors/*.json")):
    v = json.load(open(path))
    data = bytes.fromhex(v["hex"])
    selector = 2 if v.get("maxFrameBytes") == 65536 else 3
    open(os.path.join(out, v["name"]), "wb").write(bytes([selector]) + data)
    if v["direction"] == "request" and "error" not in v:
        stream += data
open(os.path.join(out, "all-requests-stream"), "wb").write(bytes(stream))
PY
SNAPSHOT_FUZZ_WRITE_SEEDS="$SEEDS/snapshot-reader" "$BIN/snapshot-reader" \
    || echo "fuzz: could not write the snapshot seeds" >&2
# ... and the snapshot vectors (good and corrupt ones), in both modes.
python3 - "$SEEDS/snapshot-reader" <<'PY'
import glob, gzip, os, sys
for path in sorted(glob.glob("Protocol/vectors/snapshot/*.ckss.gz")):
    name = os.path.basename(path)
    data = open(path, "rb").read()
    open(os.path.join(sys.argv[1], "vector-" + name), "wb").write(b"\x00" + data)
    try:
        open(os.path.join(sys.argv[1], "vector-raw-" + name), "wb").write(b"\x01" + gzip.decompress(data))
    except Exception:
        pass  # a corrupt vector has no clean uncompressed form
PY

# The apps' files (keyed archives by plistlib, seed.plist as binary) and a JSON document.
python3 Tests/AppFiles/app_files.py write "$SEEDS/app-files"
python3 - "$SEEDS/app-files" <<'PY'
import os, plistlib, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    data = open(os.path.join(d, name), "rb").read()
    if not data.startswith(b"bplist00"):
        data = plistlib.dumps(plistlib.loads(data), fmt=plistlib.FMT_BINARY)
    open(os.path.join(d, name), "wb").write(b"\x00" + data)
open(os.path.join(d, "document.json"), "wb").write(b"\x01" +
    b'{"format": "checklists", "version": 1, "lists": [{"id": 2, "name": "G", "items": [{"id": 1, "text": "M\\u00e9", "checked": true, "price": 249, "due": -5}]}, {"name": "E", "icon": "Trips", "revision": 3, "nextItemID": 9, "items": []}]}')
open(os.path.join(d, "items.json"), "wb").write(b'\x01[{"name": "Milk", "price": 2.99, "uuid": "u"}, {"name": "Tea", "price": 1e-3}]')
PY

# WebSocket: every case of Protocol/vectors/websocket (client bytes, handshake requests), read 1 and 7 bytes at a time.
python3 - "$SEEDS/websocket" <<'PY'
import json, os, sys
out = sys.argv[1]
for case in json.load(open("Protocol/vectors/websocket/client-frames.json"))["cases"]:
    data = bytes.fromhex("".join(case["reads"]))
    for size in (0, 6):
        open(os.path.join(out, "%s-%d" % (case["name"], size + 1)), "wb").write(bytes([size]) + data)
for case in json.load(open("Protocol/vectors/websocket/handshake.json"))["cases"]:
    open(os.path.join(out, "handshake-" + case["name"]), "wb").write(b"\xff" + case["request"].encode())
PY

status=0
for target in "${TARGETS[@]}"; do
    corpus=$OUT/corpus/$target
    mkdir -p "$corpus"
    echo "fuzz: $target for ${SECONDS_EACH}s (corpus $corpus, $(ls "$SEEDS/$target" | wc -l) seeds)"
    log=$OUT/$target.log
    if "$BIN/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
        -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target-" "$corpus" "$SEEDS/$target" >"$log" 2>&1; then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
        cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true)
        echo "fuzz: $target: $runs inputs executed without a crash ($cov, corpus $(ls "$corpus" | wc -l) inputs)"
    else
        echo "fuzz: $target FAILED; the end of its log ($log):" >&2
        tail -60 "$log" >&2
        status=1
    fi
done
exit $status
