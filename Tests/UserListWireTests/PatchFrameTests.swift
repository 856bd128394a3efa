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

    /// A socket writes a frame's pieces in order, resuming wherever the last write stopped: from
    /// any offset, the pieces must be the rest of the frame, the shared operations never copied.
    @Test func aPatchFramesPiecesFromAnyOffsetAreTheRestOfTheFrame() throws {
        let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
        let ops = FrameEncoder.serializedOperations([.replace(path: "/screens/0/state/users/3/name", value: "Ada")])
        let frame = try encoder.patchFrame(epoch: 7, seq: 12, serializedOperations: ops)
        let whole = try encoder.encodePatch(epoch: 7, seq: 12, serializedOperations: ops)
        #expect(frame.bytes == whole && frame.count == whole.count)
        ops.withUnsafeBytes { shared in
            var sharedPieces = 0
            frame.forEachPiece(skipping: 0) { base, _ in if base == shared.baseAddress { sharedPieces += 1 } }
            #expect(sharedPieces == 1)
        }
        for offset in 0...whole.count {
            var gathered: [UInt8] = []
            frame.forEachPiece(skipping: offset) { base, count in
                gathered.append(contentsOf: UnsafeRawBufferPointer(start: base, count: count))
            }
            #expect(gathered == Array(whole[offset...]), "from offset \(offset)")
        }
        let plain = OutgoingFrame([1, 2, 3])
        var pieces = 0
        plain.forEachPiece(skipping: 1) { _, count in pieces += 1; #expect(count == 2) }
        #expect(pieces == 1 && plain.bytes == [1, 2, 3])
    }

    @Test func aPatchFrameOverTheLimitIsRefused() {
        let encoder = FrameEncoder(maximumFrameSize: 64)
        let ops = FrameEncoder.serializedOperations([.replace(path: "/a", value: .string(String(repeating: "x", count: 64)))])
        #expect(throws: FrameError.self) { try encoder.patchFrame(epoch: 1, seq: 1, serializedOperations: ops) }
    }
}
