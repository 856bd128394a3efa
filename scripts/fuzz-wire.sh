#!/usr/bin/env bash
# Fuzz the wire layer (JSON parser, frame decoder, message parsing, JSON Patch diff/apply) with
# libFuzzer for a bounded time. Usage: scripts/fuzz-wire.sh [seconds]   (default 20)
#
# Builds with plain swiftc (no package change): the UserListWire sources plus Fuzz/WireFuzz.swift,
# with -sanitize=fuzzer,address (falling back to fuzzer alone if ASan is unavailable), into
# $FUZZ_WORK (default /tmp/userlist-wire-fuzz). Runs over a copy of Fuzz/corpus so the checked-in
# seeds stay small. Exits non-zero if the fuzzer finds a crash; the reproducer is left in
# $FUZZ_WORK/artifacts/.
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${FUZZ_WORK:-/tmp/userlist-wire-fuzz}"
swiftc="${SWIFTC:-swiftc}"
mkdir -p "$work/artifacts"
binary="$work/wire-fuzz"

sources=("$root"/Sources/UserListWire/*.swift "$root/Fuzz/WireFuzz.swift")
flags=(-parse-as-library -O -module-name WireFuzz -swift-version 6
       -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility)

if "$swiftc" -sanitize=fuzzer,address "${flags[@]}" "${sources[@]}" -o "$binary" 2>"$work/build-asan.log"; then
    echo "fuzz-wire: built with -sanitize=fuzzer,address"
else
    echo "fuzz-wire: address sanitizer build failed (see $work/build-asan.log); using -sanitize=fuzzer" >&2
    "$swiftc" -sanitize=fuzzer "${flags[@]}" "${sources[@]}" -o "$binary"
fi

corpus="$work/corpus"
rm -rf "$corpus"
mkdir -p "$corpus"
cp "$root"/Fuzz/corpus/* "$corpus/"

# Let libFuzzer's own crash handler report and save the input: the Swift runtime's backtracer
# would otherwise take the signal first and can sit waiting, holding the terminal.
export SWIFT_BACKTRACE=enable=no

echo "fuzz-wire: running for ${seconds}s over $(ls "$corpus" | wc -l) seeds"
"$binary" "$corpus" \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1
