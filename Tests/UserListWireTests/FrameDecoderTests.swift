import Testing
import UserListWire

@Suite struct FrameDecoderTests {
    let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
    let messages: [JSONValue] = [
        ["type": "ping", "nonce": 1],
        ["type": "intent", "id": 7, "screen": "list", "action": "search", "args": ["text": "grâce"]],
        ["type": "bye"],
    ]

    func stream() throws -> [UInt8] {
        var bytes: [UInt8] = []
        for message in messages { try encoder.encode(message, into: &bytes) }
        return bytes
    }

    /// Feeds `chunks` and collects every frame, parsed.
    func decode(_ chunks: [ArraySlice<UInt8>], limit: Int = 1 << 20) throws -> [JSONValue] {
        var decoder = FrameDecoder(maximumFrameSize: limit)
        var out: [JSONValue] = []
        for chunk in chunks {
            decoder.feed(chunk)
            while let frame = try decoder.nextFrame() { out.append(try JSONValue(parsing: frame)) }
        }
        try decoder.finish()
        return out
    }

    @Test func headerIsBigEndianByteCount() throws {
        let frame = try encoder.encode(["s": "é"])  // {"s":"é"} is 10 bytes of UTF-8, 9 characters
        #expect(Array(frame.prefix(4)) == [0, 0, 0, 10])
        #expect(frame.count == 14)
    }

    @Test func wholeStreamInOneChunk() throws {
        #expect(try decode([try stream()[...]]) == messages)
    }

    @Test func byteAtATime() throws {
        #expect(try decode(try stream().map { [$0][...] }) == messages)
    }

    @Test func splitAtEveryOffset() throws {
        let bytes = try stream()
        for cut in 0...bytes.count {
            #expect(try decode([bytes[..<cut], bytes[cut...]]) == messages, "cut at \(cut)")
        }
        for first in stride(from: 0, through: bytes.count, by: 3) {
            for second in first...bytes.count {
                #expect(try decode([bytes[..<first], bytes[first..<second], bytes[second...]]) == messages)
            }
        }
    }

    @Test func manySmallFramesThenCompaction() throws {
        var bytes: [UInt8] = []
        for i in 0..<5000 { try encoder.encode(["n": .int(Int64(i))], into: &bytes) }
        var decoder = FrameDecoder(maximumFrameSize: 64)
        var count = 0
        for chunk in stride(from: 0, to: bytes.count, by: 1000) {
            decoder.feed(bytes[chunk..<min(chunk + 1000, bytes.count)])
            while let frame = try decoder.nextFrame() {
                #expect(try JSONValue(parsing: frame) == ["n": .int(Int64(count))])
                count += 1
            }
        }
        #expect(count == 5000)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func zeroLengthFrameIsReportedAndSkipped() throws {
        var decoder = FrameDecoder(maximumFrameSize: 1024)
        decoder.feed([0, 0, 0, 0] + (try encoder.encode(["type": "bye"])))
        #expect(throws: FrameError.emptyFrame) { try decoder.nextFrame() }
        #expect(FrameError.emptyFrame.errorCode == .malformedFrame)
        #expect(!FrameError.emptyFrame.isFatal)
        #expect(try decoder.nextFrame().map { try JSONValue(parsing: $0) } == ["type": "bye"])
    }

    @Test func oversizedFrameIsRejectedFromTheHeaderAlone() throws {
        var decoder = FrameDecoder(maximumFrameSize: FrameLimits.clientToServer)
        decoder.feed([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: FrameError.frameTooLarge(length: 0xFFFF_FFFF, limit: FrameLimits.clientToServer)) {
            try decoder.nextFrame()
        }
        #expect(FrameError.frameTooLarge(length: 1, limit: 0).errorCode == .frameTooLarge)
        #expect(FrameError.frameTooLarge(length: 1, limit: 0).isFatal)
        decoder.feed([1, 2, 3])
        #expect(decoder.bufferedByteCount == 0)
        #expect(throws: FrameError.decoderFailed) { try decoder.nextFrame() }

        var exact = FrameDecoder(maximumFrameSize: 10)
        exact.feed(try encoder.encode(["s": "é"]))
        #expect(try exact.nextFrame() != nil)
    }

    @Test func encoderRefusesOversizedValues() {
        let small = FrameEncoder(maximumFrameSize: 8)
        var buffer: [UInt8] = [1, 2]
        #expect(throws: FrameError.self) { try small.encode(["long": "enough to overflow"], into: &buffer) }
        #expect(buffer == [1, 2])
    }

    @Test func truncatedAtEndOfStream() throws {
        let frame = try encoder.encode(["type": "bye"])
        var inBody = FrameDecoder(maximumFrameSize: 1024)
        inBody.feed(frame.dropLast(2))
        #expect(try inBody.nextFrame() == nil)
        #expect(throws: FrameError.truncated(expected: frame.count - 4, received: frame.count - 6)) { try inBody.finish() }

        var inHeader = FrameDecoder(maximumFrameSize: 1024)
        inHeader.feed([0, 0])
        #expect(try inHeader.nextFrame() == nil)
        #expect(throws: FrameError.truncated(expected: 4, received: 2)) { try inHeader.finish() }

        var clean = FrameDecoder(maximumFrameSize: 1024)
        clean.feed(frame)
        _ = try clean.nextFrame()
        #expect(throws: Never.self) { try clean.finish() }
    }

    @Test func frameBodiesThatAreNotMessages() throws {
        var decoder = FrameDecoder(maximumFrameSize: 1024)
        let invalidUTF8: [UInt8] = Array(#"{"type":"ping","nonce":""#.utf8) + [0xFE] + Array(#""}"#.utf8)
        let notAnObject = Array("[1,2,3]".utf8)
        for body in [invalidUTF8, notAnObject] {
            decoder.feed([0, 0, 0, UInt8(body.count)] + body)
        }
        let first = try #require(try decoder.nextFrame())
        #expect { try ClientMessage(frame: first) } throws: { ($0 as? MessageError)?.code == .invalidJSON }
        let second = try #require(try decoder.nextFrame())
        #expect { try ClientMessage(frame: second) } throws: { ($0 as? MessageError)?.code == .invalidMessage }
    }

    @Test func typedMessagesThroughFrames() throws {
        let sent: [ServerMessage] = [
            .welcome(.init(protocolVersion: 1, server: PeerInfo(name: "userlistd", build: "1"), sessionID: "s",
                           resumed: false, access: .readOnly, epoch: 7)),
            .snapshot(.init(epoch: 7, state: ["screens": []])),
            .patch(.init(epoch: 7, seq: 1, ops: [.add(path: "/screens/0", value: ["id": "list"])])),
            .reply(.success(id: 1, result: ["imported": 3])),
            .goodbye(reason: "bye"),
        ]
        var bytes: [UInt8] = []
        for message in sent { try encoder.encode(message, into: &bytes) }
        var decoder = FrameDecoder(maximumFrameSize: FrameLimits.serverToClient)
        decoder.feed(bytes)
        var received: [ServerMessage] = []
        while let frame = try decoder.nextFrame() { received.append(try ServerMessage(frame: frame)) }
        #expect(received == sent)
    }

    /// A daemon handing a connection on passes what it read and had not decoded; a fresh decoder
    /// fed those bytes, then the rest of the stream, sees every frame, wherever the cut fell
    /// (inside a header, inside a body, between frames, after frames decoded already).
    @Test func unreadBytesContinueTheStreamInAnotherDecoder() throws {
        let bytes = try stream()
        for cut in 0...bytes.count {
            for decodedFirst in [false, true] {
                var first = FrameDecoder(maximumFrameSize: 1 << 20)
                first.feed(bytes[..<cut])
                var seen: [JSONValue] = []
                if decodedFirst {
                    while let frame = try first.nextFrame() { seen.append(try JSONValue(parsing: frame)) }
                }
                var next = FrameDecoder(maximumFrameSize: 1 << 20)
                next.feed(first.takeUnread())
                next.feed(bytes[cut...])
                while let frame = try next.nextFrame() { seen.append(try JSONValue(parsing: frame)) }
                try next.finish()
                #expect(seen == messages, "cut at \(cut), decoded first: \(decodedFirst)")
                #expect(first.bufferedByteCount == 0, "the first decoder gave everything away")
            }
        }
    }
}
