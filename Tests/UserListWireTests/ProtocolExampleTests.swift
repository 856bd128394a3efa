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

    /// Plays each transcript as a client would: snapshots replace the state, in-sequence patches
    /// must apply, and a gap must be followed by the client's resync and ignored until the next
    /// snapshot. Every state reached must match the state schema.
    @Test func transcriptsReplayAsAClientWould() throws {
        for (file, lines) in examples where file != "errors.jsonl" {
            var state: JSONValue?
            var epoch = -1
            var seq = -1
            var awaitingSnapshot = false
            var patchesApplied = 0
            for (index, line) in lines.enumerated() where line.direction == "s2c" {
                guard case .some(let message) = try? ServerMessage(json: line.frame) else { continue }
                switch message {
                case .welcome(let welcome):
                    #expect(lines[index + 1].frame["epoch"]?.int64Value == Int64(welcome.epoch), "\(file):\(line.number)")
                case .snapshot(let snapshot):
                    #expect(snapshot.seq == 0)
                    #expect(snapshot.epoch != epoch, "\(file):\(line.number) a snapshot starts a new epoch")
                    state = snapshot.state
                    epoch = snapshot.epoch
                    seq = 0
                    awaitingSnapshot = false
                case .patch(let patch):
                    if awaitingSnapshot { continue }
                    guard patch.epoch == epoch, patch.seq == seq + 1 else {
                        awaitingSnapshot = true
                        let next = lines[(index + 1)...].first { $0.direction == "c2s" }
                        #expect(next?.frame["type"] == "resync", "\(file):\(line.number) gap not followed by resync")
                        continue
                    }
                    state = try JSONPatch.apply(patch.ops, to: try #require(state))
                    seq = patch.seq
                    patchesApplied += 1
                    let errors = validator.validate(state!, against: "state.schema.json")
                    #expect(errors.isEmpty, "\(file):\(line.number) state after patch: \(errors)")
                default:
                    break
                }
            }
            #expect(patchesApplied > 0, "\(file)")
        }
    }

    @Test func deliberatelyWrongFramesAreRejected() throws {
        let wrong: [(String, String)] = [
            (#"{"type":"snapshot","epoch":1,"seq":3,"state":{"screens":[]}}"#, "snapshot seq must be 0, stack non-empty"),
            (#"{"type":"reply","id":1,"ok":true,"error":{"code":"conflict","message":"x"}}"#, "ok with an error"),
            (#"{"type":"reply","id":1,"ok":false}"#, "failure without error"),
            (#"{"type":"welcome","protocol":1,"server":{"name":"d","build":"1"},"session_id":"s","resumed":false,"access":"admin","epoch":1}"#, "bad access"),
            (#"{"type":"patch","epoch":1,"seq":1,"ops":[{"op":"add","path":"/x"}]}"#, "add without value"),
            (#"{"type":"error","code":"oops","message":"m","fatal":false}"#, "unknown code"),
            (#"{"type":"intent","id":1.5,"screen":"list","action":"refresh"}"#, "fractional id"),
            (#"{"type":"hello","protocol":{"min":1,"max":1},"client":{"name":"c"},"session_key":"k"}"#, "client without build"),
            (#"{"type":"teleport"}"#, "unknown type"),
            (#"{"type":"snapshot","epoch":1,"seq":0,"state":{"screens":[{"id":"detail","kind":"detail","state":{}}]}}"#, "detail first"),
        ]
        for (text, why) in wrong {
            let frame = try JSONValue(parsing: text)
            #expect(!validator.validate(frame, against: "message.schema.json").isEmpty, "schema accepted: \(why)")
        }
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
