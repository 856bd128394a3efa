#!/usr/bin/env bash
# A/B of two revisions with the same bench, alternating runs so that the machine's drift hits
# both sides alike (BENCHMARKS.md, "How to run it").
#   scripts/bench-ab.sh BASE NEW [SECTIONS] [ROUNDS]
#   e.g. scripts/bench-ab.sh 125308e HEAD fanout,roundtrip,sustained 2
#   BASE_ARGS / NEW_ARGS: extra flags for one side's bench only (one that the other lacks, such
#   as NEW_ARGS="--readers 1" to measure exactly what an older bench did).
# Each revision is built in release mode in its own worktree under $TMPDIR, and its own
# userlistd-bench runs the userlistd beside it. Output: one file per run in the printed folder.
set -euo pipefail
base=$1 new=$2 sections=${3:-fanout,roundtrip,sustained} rounds=${4:-2}
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d /tmp/bench-ab.XXXXXX)
for side in base new; do
  rev=${!side}
  git -C "$repo" worktree add -q --detach "$out/$side-tree" "$rev"
  (cd "$out/$side-tree" && swift build -c release --static-swift-stdlib --product userlistd >/dev/null \
     && swift build -c release --product userlistd-bench >/dev/null)
done
trap 'git -C "$repo" worktree remove --force "$out/base-tree"; git -C "$repo" worktree remove --force "$out/new-tree"' EXIT
for round in $(seq 1 "$rounds"); do
  for side in base new; do
    args=BASE_ARGS; [ "$side" = new ] && args=NEW_ARGS
    # shellcheck disable=SC2086  # the extra flags are words
    (cd "$out/$side-tree" && ./.build/release/userlistd-bench --only "$sections" ${!args:-} >"$out/$side-$round.txt" 2>&1)
    echo "$side round $round: $out/$side-$round.txt"
  done
done
