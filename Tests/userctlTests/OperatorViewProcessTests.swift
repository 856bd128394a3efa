import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Issue 48 item 6: `status` and `sessions` as an operator reads them: the user count, store,
/// version, uptime, sessions and connections; sessions by login name with the screen each is on
/// and whether it holds a draft, sorted by user, one duration format.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)),
       .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct OperatorViewProcessTests {
    /// A wire client (python3) that opens user `id` on session `key`, types a draft, says "ready"
    /// and stays attached until its stdin closes.
    static let holder = """
    import json, socket, struct, sys
    conn = socket.socket(socket.AF_UNIX); conn.connect(sys.argv[1]); buf = b""; n = 0
    def send(m):
        b = json.dumps(m).encode(); conn.sendall(struct.pack(">I", len(b)) + b)
    def receive():
        global buf
        while True:
            if len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
                size = struct.unpack(">I", buf[:4])[0]; m = json.loads(buf[4:4 + size]); buf = buf[4 + size:]; return m
            data = conn.recv(65536)
            if not data: sys.exit("closed")
            buf += data
    def intent(screen, action, **args):
        global n
        n += 1; send({"type": "intent", "id": n, "screen": screen, "action": action, "args": args})
        while True:
            m = receive()
            if m["type"] == "reply" and m["id"] == n:
                if not m["ok"]: sys.exit(str(m))
                return m
    send({"type": "hello", "client": {"name": "holder", "build": "0"}, "protocol": {"min": 1, "max": 1},
          "session_key": sys.argv[2]})
    receive(); receive()
    intent("session", "open_user", id=sys.argv[3])
    intent("detail", "set_draft_name", name="A Draft Nobody Saved")
    print("ready", flush=True)
    sys.stdin.read()
    """

    @Test func statusAndSessionsSpeakToOperators() throws {
        let daemon = try RealDaemon(sampleData: 12)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let list = try UserctlCommandTests.userctl(socket + ["list", "--json", "--page-size", "1"])
        let id = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first?["id"]?.stringValue)

        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", Self.holder, daemon.socketPath, "drafting", id]
        let input = Pipe(), output = Pipe()
        python.standardInput = input
        python.standardOutput = output
        try python.run()
        defer {
            try? input.fileHandleForWriting.close()
            python.waitUntilExit()
        }
        let ready = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(ready.hasPrefix("ready"), "the holder opened the user: \(ready)")

        let status = try UserctlCommandTests.userctl(socket + ["status"])
        #expect(status.status == 0, "\(status.stderr)")
        let rows = Dictionary(status.stdout.split(separator: "\n").dropFirst().map { line -> (String, String) in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }) { first, _ in first }
        #expect(rows["users"] == "12", "\(status.stdout)")
        #expect(rows["version"] != nil && rows["store"]?.hasPrefix("sqlite:") == true, "\(status.stdout)")
        #expect(rows["uptime"]?.range(of: #"^\d+(s|m \d\ds|h \d\dm|d \d\dh)$"#, options: .regularExpression) != nil,
                "one duration format: \(status.stdout)")
        #expect(rows["sessions"] != nil && rows["connections"] != nil, "\(status.stdout)")

        let sessions = try UserctlCommandTests.userctl(socket + ["--session", "viewer", "sessions"])
        #expect(sessions.status == 0, "\(sessions.stderr)")
        let lines = sessions.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("USER  ") == true && lines.first?.contains("SCREEN") == true
                && lines.first?.contains("DRAFT") == true, "\(sessions.stdout)")
        let me = WatchProcessTests.me
        let drafting = try #require(lines.first { $0.contains(" drafting ") }, "\(sessions.stdout)")
        #expect(drafting.hasPrefix(me + " "), "a login name, not a uid: \(drafting)")
        #expect(drafting.split(separator: " ").prefix(3) == [Substring(me), "user", "yes"], "\(drafting)")
        let viewer = try #require(lines.first { $0.contains(" viewer ") }, "\(sessions.stdout)")
        #expect(viewer.split(separator: " ").prefix(3) == [Substring(me), "list", "no"], "\(viewer)")
        for line in lines.dropFirst() {
            #expect(line.range(of: #" \d+(s|m \d\ds|h \d\dm|d \d\dh) "#, options: .regularExpression) != nil,
                    "idle in the one format, never \"9.0 s\": \(line)")
        }

        let json = try UserctlCommandTests.userctl(socket + ["sessions", "--json"])
        let all = try JSONValue(parsing: json.stdout).arrayValue ?? []
        let row = try #require(all.first { $0["key"]?.stringValue == "drafting" })
        #expect(row["user"]?.stringValue == me && row["screen"]?.stringValue == "user")
        #expect(row["draft"]?.boolValue == true)
        #expect(row["user_open"]?.stringValue == id, "\(row)")
    }
}
