#!/usr/bin/env python3
"""Sends set_draft_name back to back on one session of a running userlistd, for profiling the
daemon's own work per intent (BENCHMARKS.md, "How to run it"):

    userlistd --socket /tmp/d/s --database /tmp/d/db --state-directory /tmp/d/st --sample-data 1000 \\
        --intents-per-second 1000000 --intents-per-second-per-uid 1000000 &
    scripts/draft-stream.py /tmp/d/s 10 &
    perf record -g -p $(pgrep -n userlistd) -- sleep 5

Opens the first user of the list, then sends drafts (each waiting for its reply) for SECONDS
seconds and prints how many it sent. Python is slow: this drives the daemon, it does not time it.
"""
import json
import os
import socket
import struct
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
conn = socket.socket(socket.AF_UNIX)
conn.connect(path)
buffer = b""
next_id = 0
seen = []


def send(message):
    body = json.dumps(message).encode()
    conn.sendall(struct.pack(">I", len(body)) + body)


def receive():
    global buffer
    while True:
        if len(buffer) >= 4:
            length = struct.unpack(">I", buffer[:4])[0]
            if len(buffer) >= 4 + length:
                message = json.loads(buffer[4:4 + length])
                buffer = buffer[4 + length:]
                return message
        data = conn.recv(65536)
        if not data:
            sys.exit("the daemon closed the connection")
        buffer += data


def intent(screen, action, **args):
    global next_id
    next_id += 1
    message = {"type": "intent", "id": next_id, "screen": screen, "action": action}
    if args:
        message["args"] = args
    send(message)
    while True:
        reply = receive()
        if reply["type"] == "reply" and reply["id"] == next_id:
            return reply
        seen.append(reply)


send({"type": "hello", "client": {"name": "draft-stream", "build": "0"},
      "protocol": {"min": 1, "max": 1}, "session_key": "draft-stream-%d" % os.getpid()})
receive()  # welcome
receive()  # snapshot
intent("list", "on_appear")
first = next(op["value"]["id"] for m in seen if m["type"] == "patch"
             for op in m["ops"] if op["path"] == "/screens/0/state/users/0")
intent("session", "open_user", id=first)
start, sent = time.time(), 0
while time.time() - start < seconds:
    intent("detail", "set_draft_name", name="Draft %d" % sent)
    sent += 1
print("drafts sent:", sent)
