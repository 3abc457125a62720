#!/usr/bin/env bash
# Build the libFuzzer target around the request handler and run it for SECONDS (default 60).
#   tests/fuzz/run.sh [SECONDS] [more libFuzzer options]
# New inputs go to build/fuzz/corpus; the seeds in tests/fuzz/corpus are only read. A finding
# leaves build/fuzz/crash-* and makes this exit non-zero.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
python=${PYTHON:-.venv/bin/python}
out=build/fuzz

"$python" -m zonebake build -c tests/fuzz/fuzz.toml -o "$out"
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Iruntime "-Wa,-I$out" runtime/wire.c runtime/lookup.c runtime/denial.c runtime/chaos.c runtime/respond.c runtime/statkeys.c runtime/cookies.c runtime/rrl.c "$out/zonedata.c" \
	tests/fuzz/fuzz_respond.c -o "$out/fuzz_respond"
mkdir -p "$out/corpus"
exec "$out/fuzz_respond" -max_total_time="$seconds" -print_final_stats=1 \
	-artifact_prefix="$out/" "$@" "$out/corpus" tests/fuzz/corpus
