import Testing
import UserListWire

/// Every frame of Protocol/examples against the Swift types, the schemas, and the epoch/seq rules.
@Suite struct ProtocolExampleTests {
    let examples: [String: [ProtocolFiles.Line]]
    let validator: SchemaValidator

    init() throws {
        examples = try ProtocolFiles.exampleLines()
        validator = SchemaValidator(documents: try ProtocolFiles.schemas())
    }

    var allLines: [ProtocolFiles.Line] { examples.keys.sorted().flatMap { examples[$0]! } }

    @Test func theExpectedTranscriptsExist() {
        #expect(Set(examples.keys).isSuperset(of: ["session.jsonl", "reattach.jsonl", "conflict.jsonl", "resync.jsonl", "errors.jsonl"]))
        #expect(allLines.count > 80)
    }

    @Test func everyFrameParsesAndReencodesIdentically() throws {
        for line in allLines {
            let bytes = line.frame.serialized()
            let where_ = "\(line.file):\(line.number)"
            if let expected = line.expectedError {
                #expect(throws: MessageError.self, "\(where_) should be rejected") {
                    _ = try ClientMessage(frame: bytes)
                }
                do { _ = try ClientMessage(frame: bytes) } catch {
                    #expect(error.code == expected, "\(where_)")
                }
                continue
            }
            switch line.direction {
            case "c2s":
                let message = try ClientMessage(frame: bytes)
                #expect(message.json == line.frame, "\(where_)")
                #expect(message.type == line.frame["type"]?.stringValue)
            case "s2c":
                let message = try ServerMessage(frame: bytes)
                #expect(message.json == line.frame, "\(where_)")
                #expect(message.type == line.frame["type"]?.stringValue)
            default:
                Issue.record("\(where_): dir must be c2s or s2c")
            }
        }
    }

    @Test func everyFrameValidatesAgainstTheSchemas() {
        for line in allLines {
            let where_ = "\(line.file):\(line.number)"
            let messageErrors = validator.validate(line.frame, against: "message.schema.json")
            if line.expectedError != nil {
                #expect(!messageErrors.isEmpty, "\(where_) is deliberately wrong but the schema accepts it")
                continue
            }
            #expect(messageErrors.isEmpty, "\(where_): \(messageErrors)")
            let type = line.frame["type"]?.stringValue ?? ""
            #expect(validator.validate(line.frame, against: "\(type).schema.json").isEmpty, "\(where_)")
        }
    }

    @Test func everyErrorCodeAppearsInTheCatalogue() {
        var seen = Set<String>()
        for line in examples["errors.jsonl"] ?? [] {
            if let code = line.frame["code"]?.stringValue { seen.insert(code) }
            if let code = line.frame["error"]?["code"]?.stringValue { seen.insert(code) }
        }
        #expect(seen == Set(ErrorCode.allCases.map(\.rawValue)))
        for line in examples["errors.jsonl"] ?? [] where line.frame["type"] == "error" {
            let code = ErrorCode(rawValue: line.frame["code"]?.stringValue ?? "")
            #expect(line.frame["fatal"]?.boolValue == code?.isFatal, "\(line.file):\(line.number)")
        }
    }

    /// Plays each transcript as a client would, one client per connection: snapshots replace
    /// the state, in-sequence patches must apply, and a gap must be followed by the client's
    /// resync and ignored until the next snapshot. Every state reached must match the state schema.
    @Test func transcriptsReplayAsAClientWould() throws {
        struct Client { var state: JSONValue?; var epoch = -1; var seq = -1; var awaitingSnapshot = false }
        for (file, lines) in examples where file != "errors.jsonl" {
            var clients: [String: Client] = [:]
            var patchesApplied = 0
            for (index, line) in lines.enumerated() where line.direction == "s2c" {
                guard case .some(let message) = try? ServerMessage(json: line.frame) else { continue }
                var client = clients[line.connection] ?? Client()
                defer { clients[line.connection] = client }
                switch message {
                case .welcome(let welcome):
                    let snapshot = lines[(index + 1)...].first { $0.connection == line.connection }
                    #expect(snapshot?.frame["epoch"]?.int64Value == Int64(welcome.epoch), "\(file):\(line.number)")
                case .snapshot(let snapshot):
                    #expect(snapshot.seq == 0)
                    #expect(snapshot.epoch != client.epoch, "\(file):\(line.number) a snapshot starts a new epoch")
                    client = Client(state: snapshot.state, epoch: snapshot.epoch, seq: 0)
                case .patch(let patch):
                    if client.awaitingSnapshot { continue }
                    guard patch.epoch == client.epoch, patch.seq == client.seq + 1 else {
                        client.awaitingSnapshot = true
                        let next = lines[(index + 1)...].first { $0.direction == "c2s" && $0.connection == line.connection }
                        #expect(next?.frame["type"] == "resync", "\(file):\(line.number) gap not followed by resync")
                        continue
                    }
                    client.state = try JSONPatch.apply(patch.ops, to: try #require(client.state))
                    client.seq = patch.seq
                    patchesApplied += 1
                    let errors = validator.validate(client.state!, against: "state.schema.json")
                    #expect(errors.isEmpty, "\(file):\(line.number) state after patch: \(errors)")
                default:
                    break
                }
            }
            #expect(patchesApplied > 0, "\(file)")
        }
    }

    /// Protocol/examples/invalid: frames the prose forbids; every schema must reject them.
    @Test func theSchemasRejectEveryInvalidFrame() throws {
        let frames = try ProtocolFiles.edgeFrames("invalid")
        #expect(frames.count >= 30)
        for (why, frame) in frames {
            #expect(!validator.validate(frame, against: "message.schema.json").isEmpty, "the schemas accept: \(why)")
            if let type = frame["type"]?.stringValue, validator.documents["\(type).schema.json"] != nil {
                #expect(!validator.validate(frame, against: "\(type).schema.json").isEmpty, "\(type).schema.json accepts: \(why)")
            }
        }
    }

    /// Protocol/examples/valid: frames the prose allows that a too-strict schema would refuse.
    @Test func theSchemasAcceptEveryValidEdgeFrame() throws {
        let frames = try ProtocolFiles.edgeFrames("valid")
        #expect(frames.count >= 10)
        for (why, frame) in frames {
            let errors = validator.validate(frame, against: "message.schema.json")
            #expect(errors.isEmpty, "the schemas reject: \(why): \(errors)")
        }
    }

    @Test func theSchemaKnowsEveryErrorCodeOfThisVersion() {
        let known = validator.documents["defs.schema.json"]?["$defs"]?["known_error_code"]?["enum"]?.arrayValue ?? []
        #expect(Set(known.compactMap(\.stringValue)) == Set(ErrorCode.allCases.map(\.rawValue)))
    }

    @Test func aStateWithAUserWithoutVersionIsRejected() {
        let user: JSONValue = ["id": "3f6c1a2e-8b4d-4c1e-9a7f-2d5e6b8c9a01", "name": "A", "email": "a@b", "avatar_url": nil]
        let state: JSONValue = ["screens": [StateFixtures.listScreen(users: [user])]]
        #expect(!validator.validate(state, against: "state.schema.json").isEmpty, "user without version accepted")
    }

    @Test func fixtureStatesMatchTheStateSchema() {
        let users = StateFixtures.users(count: 30)
        let state = StateFixtures.state(StateFixtures.listScreen(users: users), StateFixtures.detailScreen(user: users[3]))
        #expect(validator.validate(state, against: "state.schema.json").isEmpty)
    }
}
