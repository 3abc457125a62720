#!/usr/bin/env bash
# Build a libFuzzer target (clang, ASan and UBSan) and run it for SECONDS (default 60):
#   tests/fuzz/run.sh TARGET [SECONDS] [more libFuzzer options]
# TARGET is one of
#   respond  the request handler (fuzz_respond.c), linked against tests/fuzz/fuzz.toml's set;
#   frame    the AF_XDP frame layer (fuzz_frame.c): Ethernet to DNS and back, through the
#            request handler and the same set;
#   reader   the compiler core's zone-file reader (fuzz_reader.c);
#   core     the whole compiler core on small zone sets (fuzz_core.c).
# Seeds are read from tests/fuzz/corpus/TARGET (only read); new inputs go to
# build/fuzz/TARGET/corpus. A finding leaves build/fuzz/TARGET/crash-* (or leak-, timeout-)
# and makes this exit non-zero.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:?usage: tests/fuzz/run.sh respond|frame|reader|core [SECONDS] [libFuzzer options]}
seconds=${2:-60}
shift $(( $# < 2 ? $# : 2 ))
python=${PYTHON:-.venv/bin/python}
out=build/fuzz/$target
mkdir -p "$out/corpus"
cflags=(-std=gnu11 -g -O1 -pthread -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
runtime=(runtime/query/*.c)  # the request handler and what it uses
core=()
for source in compiler/core/*.c compiler/core/*/*.c; do
	[ "$source" = compiler/core/main.c ] || core+=("$source")
done
options=()
# The set built, and its data taken out of the server for the harness to include (.incbin).
build_set() {
	"$python" -m zonebake build -c tests/fuzz/fuzz.toml -o "$out"
	objcopy -O binary --only-section=.zonedata "$out/zonebake-server" "$out/zonedata.bin"
}
case $target in
respond)
	build_set
	clang "${cflags[@]}" -Iruntime "-Wa,-I$out" "${runtime[@]}" "$out/zonedata.c" \
		tests/fuzz/fuzz_respond.c -o "$out/fuzz_respond"
	;;
frame)
	build_set
	clang "${cflags[@]}" -Iruntime "-Wa,-I$out" "${runtime[@]}" "$out/zonedata.c" \
		runtime/transport/xdp/frame.c tests/fuzz/fuzz_frame.c -o "$out/fuzz_frame"
	options=(-max_len=4097) # a control octet and a 4096-octet UMEM frame
	;;
reader)
	clang "${cflags[@]}" -Icompiler/core -Iruntime -Itests/fuzz "${core[@]}" \
		tests/fuzz/core_harness.c tests/fuzz/fuzz_reader.c -o "$out/fuzz_reader"
	options=(-dict=tests/fuzz/zone.dict -max_len=4096)
	;;
core)
	clang "${cflags[@]}" -Icompiler/core -Iruntime -Itests/fuzz "${core[@]}" "${runtime[@]}" \
		tests/fuzz/core_harness.c tests/fuzz/fuzz_core.c -o "$out/fuzz_core"
	options=(-dict=tests/fuzz/zone.dict -max_len=4096)
	;;
*)
	echo "tests/fuzz/run.sh: no target $target (respond, frame, reader or core)" >&2
	exit 2
	;;
esac
# The core runs once an input and gives its memory back after (core_harness.c), but an input
# it declines leaves what it had made: not a leak of the compiler's, which runs once a process.
[ "$target" = respond ] || [ "$target" = frame ] || options+=(-detect_leaks=0)
exec "$out/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
	-artifact_prefix="$out/" "${options[@]}" "$@" "$out/corpus" "tests/fuzz/corpus/$target"
