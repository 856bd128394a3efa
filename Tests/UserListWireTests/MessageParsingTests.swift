import Testing
import UserListWire

@Suite struct MessageParsingTests {
    func client(_ text: String) throws(MessageError) -> ClientMessage { try ClientMessage(frame: Array(text.utf8)) }
    func server(_ text: String) throws(MessageError) -> ServerMessage { try ServerMessage(frame: Array(text.utf8)) }

    func error(_ body: () throws -> Void) -> MessageError? {
        do { try body(); return nil } catch { return error as? MessageError }
    }

    @Test func unknownTypeIsDistinct() {
        let e = error { _ = try client(#"{"type":"teleport","where":"mars"}"#) }
        #expect(e?.code == .unknownMessageType)
        #expect(error { _ = try server(#"{"type":"hologram"}"#) }?.code == .unknownMessageType)
        // A server-only type sent by a client is unknown to the client side.
        #expect(error { _ = try client(#"{"type":"welcome"}"#) }?.code == .unknownMessageType)
    }

    /// A read-only session is told which group may write; a daemon that does not say (or a
    /// read-write session) leaves it out, and the client reads nil.
    @Test func aWelcomeCarriesTheGroupThatMayWrite() throws {
        let welcome = ServerMessage.Welcome(protocolVersion: 1, server: PeerInfo(name: "userlistd", build: "1"),
                                            sessionID: "s", resumed: false, access: .readOnly, epoch: 1,
                                            writeGroup: "ulxadmin")
        let encoded = ServerMessage.welcome(welcome).json
        #expect(encoded["write_group"] == .string("ulxadmin"))
        #expect(try ServerMessage(json: encoded) == .welcome(welcome))
        let older = try server(#"{"type":"welcome","protocol":1,"server":{"name":"u","build":"1"},"session_id":"s","#
                               + #""resumed":false,"access":"read-only","epoch":1}"#)
        guard case .welcome(let plain) = older else { Issue.record("not a welcome: \(older)"); return }
        #expect(plain.writeGroup == nil)
    }

    @Test func missingFieldNamesTheField() {
        let e = error { _ = try client(#"{"type":"intent","id":3,"action":"refresh"}"#) }
        #expect(e?.code == .invalidMessage)
        #expect(e?.field == "screen")
        #expect(e?.intentID == 3)
        #expect(e?.message.contains("screen") == true)
        let nested = error { _ = try client(#"{"type":"hello","protocol":{"min":1},"client":{"name":"c","build":"1"},"session_key":"k"}"#) }
        #expect(nested?.field == "protocol.max")
        #expect(error { _ = try client(#"{"id":1}"#) }?.field == "type")
    }

    @Test func wrongTypeNamesTheField() {
        let e = error { _ = try client(#"{"type":"intent","id":"seven","screen":"list","action":"refresh"}"#) }
        #expect(e?.code == .invalidMessage)
        #expect(e?.field == "id")
        #expect(error { _ = try client(#"{"type":"intent","id":1,"screen":"list","action":"x","args":[1]}"#) }?.field == "args")
        #expect(error { _ = try server(#"{"type":"patch","epoch":1,"seq":1,"ops":[{"op":"add","path":"x","value":1}]}"#) }?.field == "ops[0].path")
        // An unknown code is tolerated (UnknownErrorCodeTests); a code that is not a string is not.
        #expect(error { _ = try server(#"{"type":"error","code":5,"message":"m","fatal":false}"#) }?.field == "code")
        #expect(error { _ = try client(#"{"type":"hello","protocol":{"min":2,"max":1},"client":{"name":"c","build":"1"},"session_key":"k"}"#) }?.field == "protocol")
    }

    @Test func protocolVersionsAreNumberedOneToSixtyFour() throws {
        for range in ["0,1", "1,65", "-3,1"] {
            let parts = range.split(separator: ",")
            let e = error { _ = try client(#"{"type":"hello","protocol":{"min":\#(parts[0]),"max":\#(parts[1])},"client":{"name":"c","build":"1"},"session_key":"k"}"#) }
            #expect(e?.code == .invalidMessage && e?.field == "protocol", "\(range)")
        }
        #expect(try client(#"{"type":"hello","protocol":{"min":1,"max":64},"client":{"name":"c","build":"1"},"session_key":"k"}"#).type == "hello")
    }

    @Test func aBodyStartingWithAByteOrderMarkIsInvalidJSON() {
        let body: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"type":"resync"}"#.utf8)
        #expect(error { _ = try ClientMessage(frame: body) }?.code == .invalidJSON)
    }

    @Test func aPingWithNonceNullIsAPingWithoutNonce() throws {
        #expect(try client(#"{"type":"ping","nonce":null}"#) == .ping(nonce: nil))
        #expect(ClientMessage.ping(nonce: nil).json == ["type": "ping"])
    }

    @Test func intentIDsStayWithinWhatEveryJSONReaderHoldsExactly() throws {
        let largest = try client(#"{"type":"intent","id":9007199254740991,"screen":"list","action":"refresh"}"#)
        #expect(largest == .intent(.init(id: 9_007_199_254_740_991, screen: "list", action: "refresh")))
        #expect(try client(#"{"type":"intent","id":-9007199254740991,"screen":"list","action":"refresh"}"#).type == "intent")
        for id in ["9007199254740992", "-9007199254740992", "9223372036854775807"] {
            let e = error { _ = try client(#"{"type":"intent","id":\#(id),"screen":"list","action":"refresh"}"#) }
            #expect(e?.code == .invalidMessage, "id \(id)")
            #expect(e?.message.contains("2^53") == true, "\(e?.message ?? "")")
        }
    }

    @Test func notJSONAndNotObject() {
        #expect(error { _ = try client("{") }?.code == .invalidJSON)
        #expect(error { _ = try client("42") }?.code == .invalidMessage)
    }

    @Test func unknownFieldsAreIgnored() throws {
        #expect(try client(#"{"type":"resync","future":{"x":1}}"#) == .resync)
        #expect(try client(#"{"type":"ping","nonce":null}"#) == .ping(nonce: nil))
    }

    @Test func goldenEncoding() throws {
        let hello = ClientMessage.hello(.init(
            protocolVersions: 1...1, client: PeerInfo(name: "userctl", build: "0.1.0"), sessionKey: "k",
            terminal: .init(columns: 80, rows: 24)))
        #expect(hello.json.description
            == #"{"client":{"build":"0.1.0","name":"userctl"},"protocol":{"max":1,"min":1},"session_key":"k","terminal":{"columns":80,"rows":24},"type":"hello"}"#)
        let reply = ServerMessage.reply(.failure(id: 4, code: .conflict, message: "changed"))
        #expect(reply.json.description == #"{"error":{"code":"conflict","message":"changed"},"id":4,"ok":false,"type":"reply"}"#)
        // An import the daemon took whole but could not apply yet: marked, so the client does not send it again.
        let kept = ServerMessage.reply(.failure(id: 5, code: .unavailable, message: "later", kept: true))
        #expect(kept.json.description
            == #"{"error":{"code":"unavailable","kept":true,"message":"later"},"id":5,"ok":false,"type":"reply"}"#)
        #expect(try ServerMessage(json: kept.json) == kept)
        #expect(try ServerMessage(json: reply.json) == reply, "no mark: not kept")
        let err = ServerMessage.error(.init(code: .frameTooLarge, message: "too big"))
        #expect(err.json.description == #"{"code":"frame_too_large","fatal":true,"message":"too big","type":"error"}"#)
        let patch = ServerMessage.patch(.init(epoch: 2, seq: 5, ops: [.move(from: "/a/0", path: "/a/3"), .remove(path: "/b~1c")]))
        #expect(patch.json.description
            == #"{"epoch":2,"ops":[{"from":"/a/0","op":"move","path":"/a/3"},{"op":"remove","path":"/b~1c"}],"seq":5,"type":"patch"}"#)
        #expect(try ServerMessage(json: patch.json) == patch)
    }

    @Test func fatalCodes() {
        let fatal = Set(ErrorCode.allCases.filter(\.isFatal))
        #expect(fatal == [.frameTooLarge, .unsupportedVersion, .tooManyConnections, .tooManySessions, .shuttingDown, .frameTimeout, .inputLimit])
    }

    @Test func versionNegotiation() {
        #expect(ProtocolVersion.negotiate(client: 1...3) == 1)
        #expect(ProtocolVersion.negotiate(client: 1...3, server: 1...2) == 2)
        #expect(ProtocolVersion.negotiate(client: 2...3, server: 0...1) == nil)
        #expect(ProtocolVersion.mismatchMessage(client: 2...3, server: 0...1).contains("client supports 2-3"))
    }
}

/// §8: a client reads an error code it does not know instead of failing the frame.
@Suite struct UnknownErrorCodeTests {
    @Test func anUnknownCodeReadsAsInternalWithTheCodeShown() throws {
        let frame = Array(#"{"type":"error","code":"brand_new_code","message":"something new","fatal":false}"#.utf8)
        guard case .error(let error) = try ServerMessage(frame: frame[...]) else {
            Issue.record("not an error")
            return
        }
        #expect(error.code == .internal)
        #expect(error.message == "[brand_new_code] something new")
        #expect(!error.fatal)
        let reply = Array(#"{"type":"reply","id":7,"ok":false,"error":{"code":"brand_new_code","message":"m"}}"#.utf8)
        guard case .reply(let parsed) = try ServerMessage(frame: reply[...]), case .failure(let body) = parsed.outcome else {
            Issue.record("not a failed reply")
            return
        }
        #expect(body.code == .internal)
        #expect(body.message == "[brand_new_code] m")
    }
}
