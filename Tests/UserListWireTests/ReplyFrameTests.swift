import Testing
import UserListWire

/// A reply framed around an already-serialized result (`export_page`) must be byte for byte what
/// the generic encoder writes for the same result, and refused past the frame limit the same way.
struct ReplyFrameTests {
    @Test func replyFramesAroundSerializedResultsEqualTheGenericEncoding() throws {
        let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
        let results: [JSONValue] = [
            ["users": [["id": "a", "name": "Zoë \"Q\" \\ 山田\t🐙", "avatar_url": nil, "version": 3]], "next": "b64_-", "total_count": 300_000],
            ["users": [], "next": nil, "total_count": nil],
            "just a string",
        ]
        for result in results {
            for id in [0, 7, 9_007_199_254_740_991] {
                let fast = try encoder.replyFrame(id: id, serializedResult: result.serialized())
                #expect(fast.bytes == (try encoder.encode(ServerMessage.reply(.success(id: id, result: result)))))
            }
        }
    }

    @Test func aResultPastTheFrameLimitIsRefused() {
        let encoder = FrameEncoder(maximumFrameSize: 64)
        #expect(throws: FrameError.self) {
            try encoder.replyFrame(id: 1, serializedResult: JSONValue.string(String(repeating: "x", count: 64)).serialized())
        }
    }
}
