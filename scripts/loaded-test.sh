#!/bin/bash
# Runs `make test` N times (default 5) in a row from a clean clone of this repository's HEAD while
# two busy loops occupy both cores: the evidence that the suite does not flake under load
# (issue #17). Prints one line per run: exit status, seconds, and the two invocations' counts.
set -u
runs=${1:-5}
repo=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/opt/swift/usr/bin:$PATH"
clone=$(mktemp -d /tmp/loaded-test.XXXXXX)
chmod 755 "$clone"  # tests run helpers as nobody from the checkout (mktemp makes it 0700)
git clone -q "$repo" "$clone" && cd "$clone" || exit 1
git log --oneline -1
sh -c 'while :; do :; done' & busy1=$!
sh -c 'while :; do :; done' & busy2=$!
trap 'kill $busy1 $busy2 2>/dev/null; rm -rf "$clone"' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  make test > "$clone.run$i.log" 2>&1; rc=$?
  [ $rc -eq 0 ] || failed=1
  counts=$(grep -E 'Test run with' "$clone.run$i.log" | sed -E 's/.*Test run with ([0-9]+) tests.* (passed|failed).*/\1 \2/' | tr '\n' ' ')
  echo "run $i: exit $rc, $(( $(date +%s) - start )) s, $counts(log: $clone.run$i.log)"
done
exit $failed
