#!/usr/bin/env bash
# `make tsan`: the in-process suites built with ThreadSanitizer must pass with no report.
#
# First a canary (a deliberate race, ThreadSanitizerCanary) must be reported: proof that the
# sanitizer is live in this build. Then every suite `make test` runs in parallel (not the child
# process suites: their daemons are separate, uninstrumented builds) runs under it, one test at
# a time: instrumented code is several times slower, and run in parallel it held both cores for
# minutes, so the session journal's SCHED_IDLE writer got no turn within its tests' 120 s wait.
# Any report fails the run. The build lives in .build/tsan so it never invalidates .build/debug.
set -euo pipefail
cd "$(dirname "$0")/.."
process_tests=$(sed -n 's/^PROCESS_TESTS := //p' Makefile)
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
swift build --build-tests --sanitize=thread --scratch-path .build/tsan

USERLISTD_TSAN_CANARY=1 swift test --skip-build --sanitize=thread --scratch-path .build/tsan \
  --filter ThreadSanitizerCanary >"$log_dir/canary.log" 2>&1 || true
if ! grep -q "WARNING: ThreadSanitizer: " "$log_dir/canary.log"; then
  cat "$log_dir/canary.log"
  echo "tsan: the canary's race was not reported: this build is not instrumented" >&2
  exit 1
fi
echo "tsan: canary reported, as it must be"

status=0
swift test --skip-build --sanitize=thread --scratch-path .build/tsan --no-parallel --skip "$process_tests" \
  2>&1 | tee "$log_dir/suites.log" || status=$?
reports=$(grep -c "WARNING: ThreadSanitizer" "$log_dir/suites.log" || true)
echo "tsan: $reports reports"
if [[ $reports -ne 0 ]]; then
  grep -A 30 "WARNING: ThreadSanitizer" "$log_dir/suites.log" | head -200 >&2
  exit 1
fi
exit "$status"
