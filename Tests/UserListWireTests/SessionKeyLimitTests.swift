import Testing
import UserListWire

/// Session keys are kept, listed and saved by the daemon: a hello must keep them small and plain.
@Suite struct SessionKeyLimitTests {
    private func hello(key: String) throws(MessageError) -> ClientMessage {
        let body: JSONValue = .object([
            "type": "hello",
            "protocol": .object(["min": 1, "max": 1]),
            "client": .object(["name": "test", "build": "1"]),
            "session_key": .string(key),
        ])
        return try ClientMessage(frame: body.serialized())
    }

    @Test func keysUpTo128PrintableBytesAreAccepted() throws {
        let key = String(repeating: "k", count: 128)
        guard case .hello(let hello) = try hello(key: key) else {
            Issue.record("not a hello")
            return
        }
        #expect(hello.sessionKey == key)
        #expect(throws: Never.self) { try self.hello(key: "/dev/pts/3 %12 tmux:pane") }
    }

    @Test(arguments: [String(repeating: "k", count: 129), String(repeating: "x", count: 1_000_000), "tab\there",
                      "esc\u{1B}[2J", "é", "\u{202E}rtl"])
    func otherKeysAreInvalidMessages(key: String) {
        do {
            _ = try hello(key: key)
            Issue.record("accepted session key of \(key.utf8.count) bytes")
        } catch {
            #expect(error.code == .invalidMessage)
            #expect(error.field == "session_key")
            #expect(error.message.contains("128 bytes of printable ASCII"))
        }
    }
}
