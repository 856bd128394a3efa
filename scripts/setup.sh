#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine with the Swift toolchain lacks to build and test userlistd.
set -euo pipefail
need=()
# postgresql, postgresql-contrib (pg_trgm): the PostgreSQL store's integration tests; libpq5: the
# store's client library, loaded when a PostgreSQL database is configured.
# libcurl4: the REST source (upstream=) loads libcurl.so.4 when it makes its first request.
for pkg in libsystemd-dev libsqlite3-dev libcurl4 pkg-config tmux python3 postgresql postgresql-contrib libpq5; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
command -v systemd-socket-activate >/dev/null 2>&1 || need+=(systemd)
if ((${#need[@]})); then
  sudo_cmd=""
  [[ $(id -u) -eq 0 ]] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
command -v swift >/dev/null || { echo "setup: the Swift toolchain is not on PATH (expected /opt/swift/usr/bin)" >&2; exit 69; }
