#!/usr/bin/env python3
"""Soak: the real userlistd under churning clients for N minutes; prints RSS, open descriptors,
sessions and connections each minute, then the slopes after warm-up and a verdict.

Run by scripts/soak.sh (which builds the release binaries); stdlib only. The wire protocol is
Protocol/PROTOCOL.md: 4-byte big-endian length, then a UTF-8 JSON object.

What churns, all on a Unix socket in a private temporary directory, all in bounded loops:
  - clients that connect, say hello under one of a pool of session keys (so they reattach to
    the same sessions), send intents (refresh, did_display_row, open_user, set_draft_name, back),
    then leave with bye or by simply closing;
  - clients that leave a partial frame hanging (before or after hello) and close, or wait for
    the daemon's frame timeout to close them;
  - `userctl watch` processes killed with SIGKILL after a moment, reattaching to pooled keys.
The daemon runs with a short retention so detached sessions expire during the soak.
"""
import argparse
import grp
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

SESSION_KEYS = [f"soak-{i}" for i in range(40)]
WATCH_KEYS = [f"soak-watch-{i}" for i in range(20)]


class Closed(Exception):
    pass


class Client:
    """One connection: frames in and out, answers the daemon's pings, waits for replies."""

    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1
        self.state = None

    def send(self, message):
        body = json.dumps(message).encode()
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def read(self):
        while True:
            if len(self.buffer) >= 4:
                length = struct.unpack(">I", self.buffer[:4])[0]
                if len(self.buffer) >= 4 + length:
                    body, self.buffer = self.buffer[4:4 + length], self.buffer[4 + length:]
                    message = json.loads(body)
                    if message.get("type") == "ping":
                        self.send({"type": "pong", "nonce": message.get("nonce")})
                    elif message.get("type") == "snapshot":
                        self.state = message.get("state")
                    return message
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed()
            self.buffer += chunk

    def wait_for(self, predicate):
        while True:
            message = self.read()
            if predicate(message):
                return message

    def hello(self, key):
        self.send({"type": "hello", "protocol": {"min": 1, "max": 1},
                   "client": {"name": "soak", "build": "0"}, "session_key": key})
        welcome = self.wait_for(lambda m: m.get("type") in ("welcome", "error"))
        if welcome.get("type") == "error":
            raise Closed()
        self.wait_for(lambda m: m.get("type") == "snapshot")
        return welcome

    def intent(self, screen, action, args=None):
        ident = self.next_id
        self.next_id += 1
        message = {"type": "intent", "id": ident, "screen": screen, "action": action}
        if args is not None:
            message["args"] = args
        self.send(message)
        return self.wait_for(lambda m: m.get("type") == "reply" and m.get("id") == ident)

    def user_ids(self):
        try:
            return [row["id"] for row in self.state["screens"][0]["state"]["users"]]
        except (TypeError, KeyError, IndexError):
            return []

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}

    def add(self, name, amount=1):
        with self.lock:
            self.values[name] = self.values.get(name, 0) + amount

    def snapshot(self):
        with self.lock:
            return dict(self.values)


def churn_client(path, stop, counters, rng):
    """connect, hello, a few intents, then bye or a plain close; paced, bounded."""
    while not stop.is_set():
        client = None
        try:
            client = Client(path)
            client.hello(rng.choice(SESSION_KEYS))
            counters.add("connections")
            client.intent("list", "refresh")
            for _ in range(rng.randint(1, 4)):
                client.intent("list", "did_display_row", {"index": rng.randint(0, 120)})
            ids = client.user_ids()
            if ids:
                if client.intent("session", "open_user", {"id": rng.choice(ids)}).get("ok"):
                    client.intent("detail", "set_draft_name", {"name": f"soak draft {rng.randint(0, 10**6)}"})
                    if rng.random() < 0.5:
                        client.intent("detail", "back")
            counters.add("intents")
            if rng.random() < 0.5:
                client.send({"type": "bye"})
                client.wait_for(lambda m: m.get("type") == "goodbye")
        except (Closed, OSError, ValueError):
            counters.add("client_errors")
        finally:
            if client:
                client.close()
        stop.wait(rng.uniform(0.005, 0.03))  # paces the load; decides nothing


def partial_client(path, stop, counters, rng):
    """A frame left hanging, before or after hello; closed by us, or by the frame timeout."""
    while not stop.is_set():
        client = None
        try:
            client = Client(path)
            if rng.random() < 0.5:
                client.hello(rng.choice(SESSION_KEYS))
            declared = rng.randint(10_000, 200_000)
            sent = rng.randint(1, declared // 2)
            client.sock.sendall(struct.pack(">I", declared) + b"{" + b" " * (sent - 1))
            counters.add("partial_frames")
            # Linger 0-3 s: past the 2 s frame timeout the daemon closes us first.
            deadline = time.monotonic() + rng.uniform(0, 3)
            client.sock.settimeout(0.2)
            while time.monotonic() < deadline and not stop.is_set():
                try:
                    if not client.sock.recv(65536):
                        counters.add("partial_closed_by_daemon")
                        break
                except socket.timeout:
                    pass
        except (Closed, OSError, ValueError):
            counters.add("client_errors")
        finally:
            if client:
                client.close()
        stop.wait(rng.uniform(0.01, 0.05))  # paces the load; decides nothing


def watch_killer(path, userctl, stop, counters, rng, children, children_lock):
    """`userctl watch` on a pooled session key, SIGKILLed after a moment."""
    while not stop.is_set():
        process = subprocess.Popen(
            [userctl, "--socket", path, "--no-spawn", "--session", rng.choice(WATCH_KEYS), "watch"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with children_lock:
            children.add(process)
        stop.wait(rng.uniform(0.2, 1.5))
        process.kill()
        process.wait()
        with children_lock:
            children.discard(process)
        counters.add("watch_killed")
        stop.wait(rng.uniform(0.01, 0.1))  # paces the load; decides nothing


def proc_figures(pid):
    rss = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds


def daemon_status(path):
    client = Client(path)
    try:
        client.hello("soak-monitor")
        reply = client.intent("session", "status")
        client.send({"type": "bye"})
        return reply.get("result") or {}
    finally:
        client.close()


def slope(points):
    """Least-squares slope of (x, y) points; 0 for fewer than two."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return sxy / sxx if sxx else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daemon", required=True)
    parser.add_argument("--userctl", required=True)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--quick", action="store_true", help="2 minutes")
    parser.add_argument("--warmup", type=float, default=None, help="minutes left out of the slope (default 2, quick 0.5)")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    minutes = 2 if args.quick else args.minutes
    warmup = args.warmup if args.warmup is not None else (0.5 if args.quick else 2)
    rng = random.Random(args.seed)

    directory = tempfile.mkdtemp(prefix="userlistd-soak-")
    path = os.path.join(directory, "s.sock")
    config = os.path.join(directory, "empty.conf")
    open(config, "w").close()
    admin_group = grp.getgrgid(os.getgid()).gr_name  # status and sessions answer root and this group
    command = [args.daemon, "--config", config, "--socket", path,
               "--database", os.path.join(directory, "users.sqlite3"),
               "--state-directory", os.path.join(directory, "state"),
               "--sample-data", "500", "--retention", "30", "--frame-timeout", "2",
               "--admin-group", admin_group, "--log-level", "warning"]
    log = open(os.path.join(directory, "daemon.log"), "w")
    daemon = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    stop = threading.Event()
    children, children_lock = set(), threading.Lock()
    threads = []
    exit_code = 0
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(path) or not _answers(path):
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"soak: the daemon did not start: {open(log.name).read()[-2000:]}")
            time.sleep(0.05)
        print(f"soak: {' '.join(command)}")
        print(f"soak: {minutes:g} min, warm-up {warmup:g} min; 4 churning clients, 2 partial-frame clients, "
              f"1 userctl-watch killer; {len(SESSION_KEYS)}+{len(WATCH_KEYS)} pooled session keys; retention 30 s")
        counters = Counters()
        workers = [(churn_client, (path, stop, counters, random.Random(rng.random()))) for _ in range(4)]
        workers += [(partial_client, (path, stop, counters, random.Random(rng.random()))) for _ in range(2)]
        workers += [(watch_killer, (path, args.userctl, stop, counters, random.Random(rng.random()), children, children_lock))]
        for target, arguments in workers:
            thread = threading.Thread(target=target, args=arguments, daemon=True)
            thread.start()
            threads.append(thread)

        started = time.monotonic()
        samples = []  # (minutes since start, rss, fds), every 10 s
        next_sample = started
        next_minute = started + 60
        print(f"{'min':>4} {'rss MB':>8} {'fds':>5} {'sessions':>8} {'clients':>7} {'conns':>5} "
              f"{'connects':>8} {'partials':>8} {'killed':>6} {'errors':>6}")
        while True:
            now = time.monotonic()
            if daemon.poll() is not None:
                raise SystemExit(f"soak: the daemon exited with {daemon.returncode}: {open(log.name).read()[-2000:]}")
            if now >= next_sample:
                rss, fds = proc_figures(daemon.pid)
                samples.append(((now - started) / 60, rss, fds))
                next_sample += 10
            if now >= next_minute or now - started >= minutes * 60:
                rss, fds = proc_figures(daemon.pid)
                try:
                    status = daemon_status(path)
                except (Closed, OSError, ValueError) as error:
                    status = {"error": str(error)}
                c = counters.snapshot()
                print(f"{(now - started) / 60:4.1f} {rss / 2**20:8.1f} {fds:5d} {status.get('sessions', '?'):>8} "
                      f"{status.get('clients', '?'):>7} {status.get('connections', '?'):>5} "
                      f"{c.get('connections', 0):8d} {c.get('partial_frames', 0):8d} {c.get('watch_killed', 0):6d} "
                      f"{c.get('client_errors', 0):6d}", flush=True)
                next_minute += 60
                if now - started >= minutes * 60:
                    break
            time.sleep(0.5)

        measured = [s for s in samples if s[0] >= warmup]
        rss_slope = slope([(m, r) for m, r, _ in measured])
        fd_slope = slope([(m, f) for m, _, f in measured])
        window = (measured[-1][0] - measured[0][0]) if len(measured) > 1 else 0
        mean_rss = sum(r for _, r, _ in measured) / max(1, len(measured))
        rss_noise = max(4 * 2**20, 0.05 * mean_rss)  # allocator noise: 4 MB or 5 %, whichever is more
        rss_growth = rss_slope * window
        fd_growth = fd_slope * window
        print(f"slope after {warmup:g} min warm-up ({len(measured)} samples over {window:.1f} min): "
              f"RSS {rss_slope / 1024:+.1f} KB/min ({rss_growth / 2**20:+.2f} MB over the window, "
              f"{rss_slope * 60 / 2**20:+.1f} MB/hour), descriptors {fd_slope:+.2f}/min ({fd_growth:+.1f} over the window)")
        flat_rss = rss_growth < rss_noise
        flat_fds = fd_growth < 3
        c = counters.snapshot()
        print(f"load: {c.get('connections', 0)} connections with hello, {c.get('partial_frames', 0)} partial frames "
              f"({c.get('partial_closed_by_daemon', 0)} closed by the frame timeout), "
              f"{c.get('watch_killed', 0)} userctl watch SIGKILLed, {c.get('client_errors', 0)} client errors")
        if flat_rss and flat_fds:
            print(f"VERDICT: flat: RSS within noise ({rss_growth / 2**20:+.2f} MB < {rss_noise / 2**20:.1f} MB), "
                  f"descriptors within noise ({fd_growth:+.1f} < 3)")
        else:
            print(f"VERDICT: GROWING: RSS {rss_growth / 2**20:+.2f} MB (noise {rss_noise / 2**20:.1f} MB), "
                  f"descriptors {fd_growth:+.1f} (noise 3)")
            exit_code = 1
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        with children_lock:
            for process in children:
                process.kill()
                process.wait()
        if daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        log.close()
        shutil.rmtree(directory, ignore_errors=True)
    return exit_code


def _answers(path):
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
