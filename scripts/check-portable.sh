#!/usr/bin/env bash
# The client library builds where the apps run: fails on any Linux-only API
# in ChecklistClient's module closure (read from Package.swift) outside
# `#if os(Linux)` / `#if canImport(Glibc)` code. The checker first proves on
# its fixtures that an unguarded use fails and guarded ones pass.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/check-portable.py --self-test
python3 scripts/check-portable.py
