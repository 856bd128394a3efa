#!/usr/bin/env python3
"""A small REST users service for the Data layer's tests (shape: Sources/UserListData/REST.md).

Standard library only. Binds 127.0.0.1 on a free port, prints the port on stdout (one line),
then serves users held in memory until killed.

    http-fixture-server.py [users.json]     # a JSON array of {id, full_name, email, avatar_url, version}

Misbehaviour for tests is chosen by a path prefix in the base URL, /_fixture/<mode>/users...:
    slow        sleeps 10 s before answering (timeouts)
    500         answers 500 to everything
    malformed   answers 200 with a truncated JSON body
    bare412     answers a stale PUT with 412 and an empty body (the client must GET the user)
Without a prefix it behaves: list (ordered by lower-cased name, then id; `search` matches a
lower-cased prefix of name or email), get, PUT with If-Match (412 + stored user on mismatch),
POST (201, 409 on a taken id), DELETE (204), 404 for unknown ids, 422 for an empty name.
"""
import json
import os
import signal
import sys
import threading
import unicodedata
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

USERS = {}
LOCK = threading.Lock()


def fold(text):
    """The daemon's TextKey: NFKC, case-folded, accents removed (see Sources/UserListDomain/TextKey.swift)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    stripped = "".join(c for c in unicodedata.normalize("NFD", folded) if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFC", stripped)


def order_key(user):
    return (fold(user["full_name"]), user["id"])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        self.route("GET")

    def do_PUT(self):
        self.route("PUT")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")

    def send_json(self, status, body=None, raw=None):
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def route(self, method):
        url = urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        mode = None
        if parts[:1] == ["_fixture"] and len(parts) >= 2:
            mode, parts = parts[1], parts[2:]
        if method in ("PUT", "POST"):
            body = self.read_body()
        else:
            body = None
        if mode == "slow":
            time.sleep(10)
        if mode == "500":
            return self.send_json(500, {"error": "the fixture was told to fail"})
        if mode == "malformed":
            return self.send_json(200, raw=b'{"page": 1, "per_page": 50, "data": [{"id": "')
        if parts[:1] != ["users"] or len(parts) > 2:
            return self.send_json(404, {"error": "no such route"})

        with LOCK:
            if len(parts) == 1 and method == "GET":
                query = parse_qs(url.query)
                page = int(query.get("page", ["1"])[0])
                per_page = int(query.get("per_page", ["50"])[0])
                search = fold(query.get("search", [""])[0])
                users = sorted(USERS.values(), key=order_key)
                if search:
                    users = [u for u in users
                             if fold(u["full_name"]).startswith(search) or fold(u["email"]).startswith(search)]
                total_pages = max(1, -(-len(users) // per_page))
                start = (page - 1) * per_page
                return self.send_json(200, {"page": page, "per_page": per_page, "total": len(users),
                                            "total_pages": total_pages, "data": users[start:start + per_page]})
            if len(parts) == 1 and method == "POST":
                if body["id"] in USERS:
                    return self.send_json(409, USERS[body["id"]])
                if not body.get("full_name", "").strip():
                    return self.send_json(422, {"field": "full_name", "message": "The name cannot be empty."})
                body["version"] = 1
                USERS[body["id"]] = body
                return self.send_json(201, body)

            user_id = parts[1].upper()
            stored = USERS.get(user_id)
            if stored is None:
                return self.send_json(404, {"error": "no such user"})
            if method == "GET":
                return self.send_json(200, stored)
            if method == "DELETE":
                del USERS[user_id]
                return self.send_json(204)
            if method == "PUT":
                if str(stored["version"]) != self.headers.get("If-Match"):
                    return self.send_json(412, raw=b"") if mode == "bare412" else self.send_json(412, stored)
                if not body.get("full_name", "").strip():
                    return self.send_json(422, {"field": "full_name", "message": "The name cannot be empty."})
                updated = dict(body, id=user_id, version=stored["version"] + 1)
                USERS[user_id] = updated
                return self.send_json(200, updated)
        return self.send_json(405, {"error": "method not allowed"})


def main():
    # A parent that blocks signals in its threads (a Swift test process does) passes the mask on:
    # unblock, or SIGTERM would stay pending forever and the server would never stop.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            for user in json.load(f):
                USERS[user["id"].upper()] = user
    # A test process that dies (a crash) cannot stop its fixture: the fixture stops itself
    # once it has been handed to another parent, rather than serving on for nobody.
    parent = os.getppid()

    def follow_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=follow_parent, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
