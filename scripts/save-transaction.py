#!/usr/bin/env python3
"""A save's SQLite transaction alone, three ways, on a copy of a store's own schema (BENCHMARKS.md,
"How to run it"): how much the history entry costs the commit, apart from
the daemon around it.

  scripts/save-transaction.py STORE VARIANT [SAVES] [SYNCHRONOUS]
    STORE        any userlistd SQLite store of schema v8 or later (e.g. one `userlistd --sample-data 1000` made);
                 only its schema is read, the users are this script's own 1,000
    VARIANT      base: 44e2b65's statements, no history (the UPDATE naming both keys);
                 head: cf213de's (the entry by INSERT ... SELECT from users, then that UPDATE);
                 new:  this branch's (one read of the row, the UPDATE naming only the changed key,
                       the entry's fields bound)
    SAVES        renames of one user, each its own transaction (default 1000)
    SYNCHRONOUS  FULL (the daemon's default: one fdatasync a commit) or OFF (the CPU alone)

Prints the p50 of a transaction (BEGIN IMMEDIATE ... COMMIT, as the writer runs it) and the WAL
frames (pages) a commit writes. Python's sqlite3 keeps the statements prepared, as the
daemon's connection does; its own per-statement cost is in every variant alike.
"""
import os
import random
import sqlite3
import sys
import tempfile
import time
import uuid

store, variant = sys.argv[1], sys.argv[2]
saves = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
synchronous = sys.argv[4] if len(sys.argv) > 4 else "FULL"
assert variant in ("base", "head", "new") and synchronous in ("FULL", "OFF")

source = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
schema = [(kind, name, sql) for kind, name, sql in source.execute(
    "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
source.close()
# FTS5 makes its own shadow tables; the history goes only where the variant has it.
shadow = ("users_search_data", "users_search_idx", "users_search_docsize", "users_search_config")
statements = [sql for kind, name, sql in schema
              if name not in shadow and not (variant == "base" and name.startswith("history"))]

directory = tempfile.mkdtemp(prefix="save-transaction.")
path = os.path.join(directory, "users.sqlite3")
db = sqlite3.connect(path, isolation_level=None, cached_statements=64)
db.execute("PRAGMA journal_mode = WAL")
db.execute(f"PRAGMA synchronous = {synchronous}")
db.execute("PRAGMA wal_autocheckpoint = 0")  # the WAL's size after the run is the frames written
for sql in statements:
    db.execute(sql)
db.execute("INSERT INTO store_state (only, user_count, log_changes, search_indexed_through) VALUES (1, 0, 1, NULL)")
ids = []
db.execute("BEGIN")
for i in range(1000):
    id = str(uuid.UUID(int=random.getrandbits(128))).upper()
    ids.append(id)
    db.execute("INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key) VALUES (?, ?, ?, NULL, 1, ?, ?)",
               (id, f"User {i}", f"u{i}@example.org", f"user {i}", f"u{i}@example.org"))
db.execute("COMMIT")
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

both_keys = """UPDATE users SET name = ?1, email = ?2, avatar_url = ?3, name_key = ?4,
    email_key = CASE WHEN email = ?2 THEN email_key ELSE ?5 END, version = version + 1 WHERE id = ?6 AND version = ?7"""
name_key = "UPDATE users SET name = ?1, email = ?2, avatar_url = ?3, name_key = ?4, version = version + 1 WHERE id = ?6 AND version = ?7"
columns = """INSERT INTO history (at, via, actor_uid, actor_name, client, daemon, reverts, user_id, kind,
    before_name, before_email, before_avatar_url, after_name, after_email, after_avatar_url, version_after) """
entry_by_select = columns + """SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, id, 'saved', name, email, avatar_url, ?8, ?9, ?10, version + 1
    FROM users WHERE id = ?11 AND version = ?12"""
entry_bound = columns + "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'saved', ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
read = "SELECT id, name, email, avatar_url, version, name_key FROM users WHERE id = ?1"

target, email, version, times = ids[0], "u0@example.org", 1, []
author = ("intent", 1001, "alice", "userctl", "bench")
for i in range(saves):
    name = f"Aaaa Bench {i}"
    now = int(time.time() * 1000)
    started = time.perf_counter_ns()
    db.execute("BEGIN IMMEDIATE")
    if variant == "base":
        db.execute(both_keys, (name, email, None, name.lower(), email, target, version))
    elif variant == "head":
        db.execute(entry_by_select, (now, *author, None, name, email, None, target, version))
        db.execute(both_keys, (name, email, None, name.lower(), email, target, version))
    else:
        row = db.execute(read, (target,)).fetchone()
        db.execute(name_key, (name, email, None, name.lower(), None, target, version))
        db.execute(entry_bound, (now, *author, None, target, row[1], row[2], row[3], name, email, None, version + 1))
    db.execute("SELECT MAX(seq) FROM changes").fetchone()
    db.execute("COMMIT")
    times.append(time.perf_counter_ns() - started)
    version += 1
frames = (os.path.getsize(path + "-wal") - 32) / (24 + 4096) / saves
db.close()
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
os.rmdir(directory)
times.sort()
print(f"{variant} synchronous={synchronous}: p50 {times[len(times) // 2] / 1000:.1f} µs, {frames:.2f} WAL frames a commit")
