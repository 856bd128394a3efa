import Foundation
import UserListData
import UserListDomain
import UserListServer
import UserListWire

/// One line of a Protocol/examples transcript.
struct TranscriptLine {
    var connection: String
    var direction: String
    var frame: JSONValue
    /// The raw line (kept to write `expect_error` and other members back when recording).
    var raw: JSONValue
}

/// The transcripts of Protocol/examples, found by walking up from this file.
enum Transcripts {
    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            let candidate = url.appendingPathComponent("Protocol/examples")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            url.deleteLastPathComponent()
        }
        fatalError("Protocol/examples not found above \(#filePath)")
    }()

    /// Every connection transcript (errors.jsonl is a catalogue of frames, not one run).
    static var replayable: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") && $0 != "errors.jsonl" }.sorted()
    }

    static func lines(of name: String) throws -> [TranscriptLine] {
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        return try text.split(separator: "\n").map { raw in
            let value = try JSONValue(parsing: Array(raw.utf8))
            return TranscriptLine(connection: value["conn"]?.stringValue ?? "a", direction: value["dir"]?.stringValue ?? "?",
                                  frame: value["frame"] ?? .null, raw: value)
        }
    }

    /// The store every transcript starts from: 52 deterministic sample users (a first page of
    /// 50 and a second of 2).
    static let users = SampleUsers.generate(count: 52, seed: 12)

    /// The users in list order, for `"$user:N"` in a transcript being written by hand.
    static let listed = users.sorted { ($0.name.lowercased(), $0.id.uuidString.lowercased()) < ($1.name.lowercased(), $1.id.uuidString.lowercased()) }

    /// Replaces `"$user:N"` strings with the id of the N-th listed user.
    static func substituted(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object): return .object(object.mapValues(substituted))
        case .array(let array): return .array(array.map(substituted))
        case .string(let text) where text.hasPrefix("$user:"):
            guard let index = Int(text.dropFirst(6)), listed.indices.contains(index) else { return value }
            return .string(listed[index].id.uuidString.lowercased())
        default: return value
        }
    }
}

/// Plays a transcript's client frames against a live daemon, over real sockets, and compares
/// what the daemon sends by meaning: the same frames of each kind in the same order per
/// connection, and the same state document whenever a reply, event or goodbye arrives. Ids
/// the daemon makes up (session ids, epochs, new users' ids, ping nonces) and the wording of
/// messages are not compared; error codes, results, payloads and states are.
///
/// The same run records what the daemon actually sent (`recorded`), which is how the
/// transcripts are regenerated: `USERLISTD_RECORD_EXAMPLES=1 swift test --filter TranscriptReplayTests`.
// Invariant for @unchecked Sendable: one test drives one replayer, on one thread at a time.
final class TranscriptReplayer: @unchecked Sendable {
    private let daemon: DaemonHarness
    private var clients: [String: WireTestClient] = [:]
    private var expectedDocuments: [String: JSONValue] = [:]
    private var lastPingNonce: [String: JSONValue] = [:]
    private let knownIDs: Set<String>
    private(set) var mismatches: [String] = []
    private(set) var recorded: [JSONValue] = []
    private var multipleConnections = false

    init(daemon: DaemonHarness) {
        self.daemon = daemon
        knownIDs = Set(Transcripts.users.map { $0.id.uuidString.lowercased() })
    }

    func play(_ name: String, _ lines: [TranscriptLine]) throws {
        multipleConnections = Set(lines.map(\.connection)).count > 1
        for (index, line) in lines.enumerated() {
            let place = "\(name):\(index + 1)"
            let client = try client(line.connection)
            if line.direction == "c2s" {
                var frame = Transcripts.substituted(line.frame)
                if frame["type"] == "pong", let nonce = lastPingNonce[line.connection] {
                    frame = .object((frame.objectValue ?? [:]).merging(["nonce": nonce]) { $1 })
                }
                client.sendJSON(frame.description)
                record(line.connection, "c2s", frame, extra: line.raw)
                continue
            }
            switch line.frame["type"]?.stringValue {
            case "snapshot":
                expectedDocuments[line.connection] = line.frame["state"] ?? .null
            case "patch":
                guard case .patch(let patch) = try ServerMessage(json: line.frame) else { continue }
                expectedDocuments[line.connection] = try JSONPatch.apply(patch.ops, to: expectedDocuments[line.connection] ?? .null)
            default:
                try expect(line.frame, on: line.connection, client, at: place)
            }
        }
    }

    /// Stops recording and closes every connection.
    func finish() { clients.removeAll() }

    private func client(_ name: String) throws -> WireTestClient {
        if let existing = clients[name] { return existing }
        let client = try daemon.client()
        clients[name] = client
        return client
    }

    private func record(_ connection: String, _ direction: String, _ frame: JSONValue, extra: JSONValue? = nil) {
        var line: [String: JSONValue] = ["dir": .string(direction), "frame": frame]
        if multipleConnections { line["conn"] = .string(connection) }
        if let expected = extra?["expect_error"] { line["expect_error"] = expected }
        recorded.append(.object(line))
    }

    /// Reads the connection's frames (states applied as they come) up to the next frame that is
    /// not a snapshot or a patch, and compares it with `expected`.
    private func expect(_ expected: JSONValue, on connection: String, _ client: WireTestClient, at place: String) throws {
        let message: ServerMessage
        do {
            message = try client.blockingNext(where: "\(place) \(expected["type"]?.stringValue ?? "?")", timeout: 120) { message in
                switch message {
                case .snapshot, .patch:
                    self.record(connection, "s2c", message.json)
                    return nil
                // A committed import's `reloaded` reaches the importing session too, before or
                // after the commit's reply as the feed's timing has it: not part of the story,
                // so neither recorded nor expected.
                case .event(let event) where event.screen == "session" && event.name == "reloaded": return nil
                default:
                    self.record(connection, "s2c", message.json)
                    return message
                }
            }
        } catch {
            mismatches.append("\(place): \(error)")
            return
        }
        if case .welcome(let welcome) = message {
            // The snapshot follows at once; read it so the document is known.
            _ = try? client.blockingNext(where: "\(place) snapshot", timeout: 120) { message in
                self.record(connection, "s2c", message.json)
                if case .snapshot(let snapshot) = message {
                    if snapshot.epoch != welcome.epoch {
                        self.mismatches.append("\(place): the snapshot is in epoch \(snapshot.epoch), the welcome named \(welcome.epoch)")
                    }
                    return true
                }
                return nil
            }
        }
        if case .ping(let nonce) = message { lastPingNonce[connection] = nonce ?? .null }
        let actual = normalized(message.json)
        let wanted = normalized(expected)
        if actual != wanted {
            mismatches.append("\(place): expected \(wanted)\n    got \(actual)")
        }
        let type = expected["type"]?.stringValue
        if type == "reply" || type == "goodbye", let document = expectedDocuments[connection],
           normalized(client.document) != normalized(document) {
            mismatches.append("\(place): when the \(type!) arrived the state was\n    \(normalized(client.document))\n    expected\n    \(normalized(document))")
        }
    }

    /// The frame with what a daemon makes up, or words for people, taken out.
    private func normalized(_ frame: JSONValue) -> JSONValue {
        switch frame {
        case .object(var object):
            if object["type"] == "welcome" {
                object["session_id"] = nil
                object["epoch"] = nil
                object["server"] = object["server"]?["name"].map { ["name": $0] }
            }
            if object["type"] == "ping" { object["nonce"] = nil }
            // A history entry's time and actor are the run's (the clock, the uid running the tests).
            if object["entry"] != nil, object["at"]?.stringValue != nil {
                object["at"] = "<time>"
                object["uid"] = "<actor>"
                object["user"] = "<actor>"
            }
            // A presence entry's name is the login name of the uid running the tests.
            if object.count == 2, object["editing"]?.boolValue != nil, object["user"]?.stringValue != nil {
                object["user"] = "<person>"
            }
            if object["type"] == "error" || object["code"] != nil { object["message"] = nil }
            return .object(object.mapValues(normalized))
        case .array(let array):
            return .array(array.map(normalized))
        case .string(let text) where text.count == 36 && UUID(uuidString: text) != nil && !knownIDs.contains(text):
            return "<new id>"
        default:
            return frame
        }
    }
}
