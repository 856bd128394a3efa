#!/usr/bin/env python3
"""Runs inside the systemd sandbox (scripts/systemd-sandbox-check.sh): attaches clients to the
real userlistd.socket, runs `systemctl restart userlistd`, and checks that no client noticed:
the same connections, no goodbye, welcome or snapshot, the same epochs, and a rename made after
the restart reaches every client as a patch. Exit 0 when all held, 1 otherwise."""
import json, socket, struct, subprocess, sys, time

SOCKET = "/run/userlistd/userlistd.sock"
CLIENTS = 5


class Client:
    def __init__(self, key):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(SOCKET)
        self.buffer = b""
        self.frames = []
        self.next_id = 1
        self.send({"type": "hello", "protocol": {"min": 1, "max": 1},
                   "client": {"name": "restart-check", "build": "1"}, "session_key": key})
        self.epoch = self.wait(lambda f: f["type"] == "snapshot")["epoch"]

    def send(self, frame):
        body = json.dumps(frame).encode()
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def read(self, timeout):
        self.sock.settimeout(timeout)
        while len(self.buffer) < 4 or len(self.buffer) < 4 + struct.unpack(">I", self.buffer[:4])[0]:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the daemon closed the connection")
            self.buffer += chunk
        size = struct.unpack(">I", self.buffer[:4])[0]
        frame = json.loads(self.buffer[4:4 + size])
        self.buffer = self.buffer[4 + size:]
        self.frames.append(frame)
        return frame

    def wait(self, match, timeout=30):
        deadline = time.time() + timeout
        while True:
            frame = self.read(max(0.1, deadline - time.time()))
            if match(frame):
                return frame

    def intent(self, screen, action, args=None):
        ident = self.next_id
        self.next_id += 1
        self.send({"type": "intent", "id": ident, "screen": screen, "action": action, "args": args or {}})
        return self.wait(lambda f: f["type"] == "reply" and f["id"] == ident)


def main_pid():
    return subprocess.run(["systemctl", "show", "-p", "MainPID", "--value", "userlistd"],
                          capture_output=True, text=True).stdout.strip()


problems = []
clients = [Client(f"restart-check-{n}") for n in range(CLIENTS)]
for client in clients:
    client.intent("list", "on_appear")
picked = clients[0].intent("list", "did_select_row", {"index": 0})
user = picked["result"]["id"]
before = main_pid()
marks = [len(c.frames) for c in clients]

started = time.time()
subprocess.run(["systemctl", "restart", "userlistd"], check=True)
print(f"systemctl restart userlistd took {time.time() - started:.3f} s; MainPID {before} -> {main_pid()}")
if main_pid() == before:
    problems.append("the MainPID did not change: no restart happened")

reply = clients[0].intent("session", "rename_user", {"id": user, "name": "Renamed After Restart"})
if not reply.get("ok"):
    problems.append(f"rename after the restart failed: {reply}")
for number, client in enumerate(clients):
    renamed = lambda f: f["type"] == "patch" and "Renamed After Restart" in json.dumps(f)
    try:
        # The renaming client has its patch already: it comes before the rename's reply.
        if not any(renamed(f) for f in client.frames[marks[number]:]):
            client.wait(renamed, timeout=30)
    except Exception as error:
        problems.append(f"client {number}: no patch with the rename after the restart ({error})")
        continue
    after = client.frames[marks[number]:]
    noticed = [f["type"] for f in after if f["type"] in ("goodbye", "welcome", "snapshot")]
    if noticed:
        problems.append(f"client {number} saw {noticed} after the restart")
    epochs = {f["epoch"] for f in after if f["type"] == "patch"}
    if epochs - {client.epoch}:
        problems.append(f"client {number}: patches in epochs {epochs}, not its epoch {client.epoch}")

taken = subprocess.run(["journalctl", "-u", "userlistd", "-o", "cat", "--no-pager"], capture_output=True, text=True).stdout
print("\n".join(line for line in taken.splitlines() if "Took over" in line or "Handover" in line or "Handed" in line))
if f"Took over {CLIENTS + 0} client connection" not in taken:
    problems.append(f"the journal does not say the new process took over {CLIENTS} connections")

for problem in problems:
    print("FAIL:", problem)
print("restart-check:", "ok" if not problems else f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
