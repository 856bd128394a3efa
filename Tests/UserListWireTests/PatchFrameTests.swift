import Testing
import UserListWire

/// The server's fast patch frames must be byte for byte what the generic encoder writes.
struct PatchFrameTests {
    @Test func fastPatchFramesEqualTheGenericEncoding() throws {
        let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
        let ops: [PatchOperation] = [
            .replace(path: "/screens/0/state/users/417/name", value: "Zoë \"Q\" 山田 🐙"),
            .add(path: "/screens/0/state/users/-", value: ["id": "a", "version": 3, "avatar_url": nil]),
            .remove(path: "/screens/1"),
            .move(from: "/screens/0/state/users/3", path: "/screens/0/state/users/0"),
            .copy(from: "/a~1b", path: "/c~0d"),
            .test(path: "/screens/0/state/has_more", value: true),
            // Pointer tokens that need both escapings: RFC 6901's (~, /) and JSON's (", \\, controls).
            .replace(path: JSONPointer(tokens: ["quote\"back\\slash", "tab\tnew\nline\u{1}", "~/~1", "é山🐙", ""]), value: 1),
            .move(from: JSONPointer(tokens: ["a/\"b"]), path: JSONPointer(tokens: ["~\\"])),
        ]
        for (epoch, seq) in [(1, 1), (1_795_950_159_673, 4_000_000)] {
            let fast = try encoder.encodePatch(epoch: epoch, seq: seq, serializedOperations: FrameEncoder.serializedOperations(ops))
            let generic = try encoder.encode(ServerMessage.patch(.init(epoch: epoch, seq: seq, ops: ops)))
            #expect(fast == generic)
        }
        let empty = try encoder.encodePatch(epoch: 2, seq: 3, serializedOperations: FrameEncoder.serializedOperations([]))
        #expect(empty == (try encoder.encode(ServerMessage.patch(.init(epoch: 2, seq: 3, ops: [])))))
    }
}
