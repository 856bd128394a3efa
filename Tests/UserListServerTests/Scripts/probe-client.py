#!/usr/bin/env python3
"""A minimal protocol client for tests that must run as another user (uid separation).

Usage: probe-client.py SOCKET SESSION_KEY
Says hello, then tries to add a user, and prints one JSON object with what the server said.
"""
import json
import socket
import struct
import sys


def main():
    path, key = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)  # generous: the daemon may share a busy machine with a whole test run
    s.connect(path)

    def send(obj):
        body = json.dumps(obj).encode()
        s.sendall(struct.pack(">I", len(body)) + body)

    def recv():
        head = b""
        while len(head) < 4:
            chunk = s.recv(4 - len(head))
            if not chunk:
                raise EOFError("server closed")
            head += chunk
        (n,) = struct.unpack(">I", head)
        body = b""
        while len(body) < n:
            body += s.recv(n - len(body))
        return json.loads(body)

    send({"type": "hello", "protocol": {"min": 1, "max": 1},
          "client": {"name": "probe", "build": "0"}, "session_key": key})
    welcome = recv()
    snapshot = recv()
    send({"type": "intent", "id": 1, "screen": "list", "action": "add_user",
          "args": {"name": "Mallory", "email": "mallory@example.com"}})
    reply = None
    while reply is None:
        message = recv()
        if message.get("type") == "reply" and message.get("id") == 1:
            reply = message
    print(json.dumps({"welcome": welcome, "screens": len(snapshot["state"]["screens"]), "reply": reply}))


if __name__ == "__main__":
    main()
