#!/bin/sh
# `systemctl restart userlistd` with clients attached, under a real systemd 252 as PID 1
# (the systemd-sandbox tool, which needs root, and a rootfs built once with
# `SANDBOX_EXTRA_PACKAGES=libcurl4,libpq5 sandbox.sh build`, ~60 s; the daemon loads libpq for
# the PostgreSQL store and libcurl for the REST source when they are configured). Builds the release binaries,
# installs them with the units into the sandbox, starts userlistd.socket, attaches clients and
# restarts the service: scripts/systemd-sandbox/restart-check.py says whether any client noticed.
# Exit 0: passed; 77: cannot run here (the reason is printed); anything else: failed.
set -eu
cd "$(dirname "$0")/.."
SANDBOX=${SYSTEMD_SANDBOX:-}
if [ -z "$SANDBOX" ]; then
    for candidate in ../shared/tools/systemd-sandbox/sandbox.sh ../../shared/tools/systemd-sandbox/sandbox.sh; do
        if [ -x "$candidate" ]; then SANDBOX=$candidate; break; fi
    done
fi
if [ -z "$SANDBOX" ]; then echo "skipped: no systemd-sandbox (set SYSTEMD_SANDBOX=/path/to/sandbox.sh)"; exit 77; fi
if [ "$(id -u)" != 0 ]; then echo "skipped: the systemd sandbox needs root"; exit 77; fi
ROOTFS=/var/tmp/systemd-sandbox-rootfs
# A rootfs built before the daemon linked libpq lacks it: build it again.
if [ ! -d "$ROOTFS" ] || ! ls "$ROOTFS"/usr/lib/*/libpq.so.5 >/dev/null 2>&1; then
    command -v debootstrap >/dev/null || apt-get install -y debootstrap || { echo "skipped: debootstrap is not installable"; exit 77; }
    echo "building the sandbox rootfs (once, ~60-140 s)"
    SANDBOX_EXTRA_PACKAGES=libcurl4,libpq5 "$SANDBOX" build --force || { echo "skipped: the sandbox rootfs could not be built"; exit 77; }
fi
SWIFT=${SWIFT:-swift}
$SWIFT build -c release --static-swift-stdlib --product userlistd
$SWIFT build -c release --static-swift-stdlib --product userctl
stage=$(mktemp -d /tmp/userlistd-sandbox.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/usr/local/bin" "$stage/etc/systemd/system" "$stage/usr/lib/sysusers.d"
install -m 0755 .build/release/userlistd .build/release/userctl scripts/systemd-sandbox/restart-check.py "$stage/usr/local/bin/"
sed 's|@BINDIR@|/usr/local/bin|g' systemd/userlistd.service > "$stage/etc/systemd/system/userlistd.service"
install -m 0644 systemd/userlistd.socket "$stage/etc/systemd/system/userlistd.socket"
install -m 0644 systemd/userlistd.sysusers "$stage/usr/lib/sysusers.d/userlistd.conf"
printf 'sample-data = 50\n' > "$stage/etc/userlistd.conf"
chmod 0644 "$stage/etc/userlistd.conf"
SANDBOX_TIMEOUT=${SANDBOX_TIMEOUT:-120} "$SANDBOX" run "$stage" -- '
    systemd-sysusers && systemctl daemon-reload && systemctl start userlistd.socket || exit 2
    python3 /usr/local/bin/restart-check.py; status=$?
    [ $status -eq 0 ] || { systemctl status userlistd --no-pager; journalctl -u userlistd --no-pager | tail -40; }
    exit $status'
