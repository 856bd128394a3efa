#!/bin/sh
# Regenerates Tests/FaultTests/Corpus: raw byte streams a client sends right after connecting,
# and manifest.json saying what the daemon must answer (error codes in order; then the
# connection stays usable, proven by a ping, or is closed). Used by FaultTests.MalformedInput.
set -eu
cd "$(dirname "$0")/../Tests/FaultTests/Corpus"
python3 - <<'PY'
import json, struct

def frame(body):
    if isinstance(body, str):
        body = body.encode()
    return struct.pack(">I", len(body)) + body

HELLO = '{"type":"hello","protocol":{"min":1,"max":1},"client":{"name":"corpus","build":"0"},"session_key":"corpus"}'
cases = []

def case(name, data, codes, end="open", shutdown=False, note="", unordered=False):
    with open(name + ".bin", "wb") as f:
        f.write(data)
    cases.append({"file": name + ".bin", "codes": codes, "end": end, "shutdown": shutdown, "note": note, "unordered": unordered})

case("zero-length", frame(b""), ["malformed_frame"], note="a zero-length frame is answered and skipped")
case("zero-length-twice", frame(b"") + frame(b""), ["malformed_frame", "malformed_frame"])
case("oversized-1MiB-plus-1", struct.pack(">I", (1 << 20) + 1) + b"{" * 64, ["frame_too_large"], end="close")
case("length-ffffffff", b"\xff\xff\xff\xff", ["frame_too_large"], end="close")
case("length-ffffffff-with-body", b"\xff\xff\xff\xff" + b'{"type":"ping"}', ["frame_too_large"], end="close")
case("truncated-header", b"\x00\x00", [], end="close", shutdown=True, note="half a header, then EOF")
case("truncated-body", struct.pack(">I", 100) + b'{"type":"pi', [], end="close", shutdown=True, note="a body cut short, then EOF")
case("truncated-after-good-frame", frame('{"type":"ping","nonce":1}') + struct.pack(">I", 50) + b"{", ["not_ready"], end="close", shutdown=True)
case("invalid-utf8-lone-continuation", frame(b"\x80"), ["invalid_json"])
case("invalid-utf8-bad-sequence", frame(b"\xc3\x28"), ["invalid_json"])
case("invalid-utf8-in-string", frame(b'{"type":"\xff\xfe"}'), ["invalid_json"])
case("invalid-utf8-overlong-slash", frame(b'{"type":"ping","nonce":"\xc0\xaf"}'), ["invalid_json"])
case("invalid-utf8-surrogate", frame(b'{"type":"ping","nonce":"\xed\xa0\x80"}'), ["invalid_json"])
case("utf8-bom", frame(b'\xef\xbb\xbf{"type":"ping"}'), ["invalid_json"])
case("not-json", frame("{not json"), ["invalid_json"])
case("trailing-garbage", frame('{"type":"ping"} xyz'), ["invalid_json"])
case("two-json-values", frame('{"type":"ping"}{"type":"ping"}'), ["invalid_json"])
case("nul-byte", frame(b'{"type":"ping"}\x00'), ["invalid_json"])
case("unterminated-string", frame('{"type":"ping'), ["invalid_json"])
case("lone-surrogate-escape", frame('{"type":"ping","nonce":"\\ud800"}'), [["invalid_json", "not_ready"]],
     note="a lone surrogate escape is either refused or kept; never a crash")
case("nesting-too-deep", frame("[" * 100000), ["invalid_json"], note="a frame of [ must not overflow the parser's stack")
case("nesting-objects-too-deep", frame('{"a":' * 10000 + "1" + "}" * 10000), ["invalid_json"])
case("json-array", frame("[1,2,3]"), ["invalid_message"])
case("json-string", frame('"hello"'), ["invalid_message"])
case("json-number", frame("42"), ["invalid_message"])
case("json-null", frame("null"), ["invalid_message"])
case("object-without-type", frame('{"id":1}'), ["invalid_message"])
case("type-is-number", frame('{"type":5}'), ["invalid_message"])
case("type-is-null", frame('{"type":null}'), ["invalid_message"])
case("unknown-type", frame('{"type":"teleport"}'), ["unknown_message_type"])
case("unknown-type-empty", frame('{"type":""}'), ["unknown_message_type"])
case("intent-before-hello", frame('{"type":"intent","id":1,"screen":"list","action":"refresh"}'), ["not_ready"])
case("resync-before-hello", frame('{"type":"resync"}'), ["not_ready"])
case("intent-missing-id", frame('{"type":"intent","screen":"list","action":"refresh"}'), ["invalid_message"])
case("intent-id-string", frame('{"type":"intent","id":"1","screen":"list","action":"refresh"}'), ["invalid_message"])
case("intent-id-huge", frame('{"type":"intent","id":1e400,"screen":"list","action":"refresh"}'), [["invalid_message", "invalid_json"]])
case("intent-id-fraction", frame('{"type":"intent","id":1.5,"screen":"list","action":"refresh"}'), ["invalid_message"])
case("intent-args-array", frame('{"type":"intent","id":3,"screen":"list","action":"refresh","args":[]}'), ["invalid_message"])
case("hello-protocol-string", frame('{"type":"hello","protocol":"1","client":{"name":"x","build":"0"},"session_key":"k"}'), ["invalid_message"])
case("hello-min-above-max", frame('{"type":"hello","protocol":{"min":2,"max":1},"client":{"name":"x","build":"0"},"session_key":"k"}'), ["invalid_message"])
case("hello-missing-key", frame('{"type":"hello","protocol":{"min":1,"max":1},"client":{"name":"x","build":"0"}}'), ["invalid_message"])
case("hello-unsupported-version", frame('{"type":"hello","protocol":{"min":7,"max":9},"client":{"name":"x","build":"0"},"session_key":"k"}'), ["unsupported_version"], end="close")
case("hello-twice", frame(HELLO) + frame(HELLO), ["!welcome", "!snapshot", "already_attached"], unordered=True,
     note="order not checked here: already_attached can overtake the welcome (see FaultTests.MalformedInput)")
case("hello-then-bad-intents", frame(HELLO)
     + frame('{"type":"intent","id":1,"screen":"nowhere","action":"x"}')
     + frame('{"type":"intent","id":2,"screen":"list","action":"explode"}')
     + frame('{"type":"intent","id":3,"screen":"list","action":"did_select_row","args":{"index":"three"}}')
     + frame('{"type":"intent","id":4,"screen":"session","action":"open_user","args":{"id":"not-a-uuid"}}'),
     ["!welcome", "!snapshot", "reply:unknown_screen", "reply:unknown_action", "reply:invalid_args", "reply:invalid_args"])
case("mixed-stream", frame(b"") + frame("[]") + frame('{"type":"x"}') + frame(b"\xff") + frame('{"type":"ping","nonce":"in-step"}'),
     ["malformed_frame", "invalid_message", "unknown_message_type", "invalid_json", "not_ready"])
case("bye-before-hello", frame('{"type":"bye"}'), ["not_ready"])

with open("manifest.json", "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
print(len(cases), "cases")
PY
