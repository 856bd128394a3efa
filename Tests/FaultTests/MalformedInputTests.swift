import Foundation
import UserListTestSupport
import Glibc
import Testing
import UserListWire

extension Fault {
    /// Tests/FaultTests/Corpus (made by scripts/fault-corpus.sh) over a real socket: every
    /// input is answered with the spec's error code, or the connection is closed cleanly; a
    /// non-fatal error leaves the stream in step (a ping after it gets its pong); the daemon
    /// lives on and serves the next client.
    @Suite struct MalformedInput {
        struct Case: Decodable {
            let file: String
            /// Per expected message: one token or several acceptable ones. A token is an error
            /// code, `reply:<code>` for a failed reply, or `!<type>` for another message.
            let codes: [Expected]
            let end: String
            let shutdown: Bool
            let note: String
            /// Compare the tokens as a multiset (for a known ordering bug).
            let unordered: Bool
        }

        enum Expected: Decodable, CustomStringConvertible {
            case one(String)
            case any([String])
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let text = try? container.decode(String.self) { self = .one(text) } else { self = .any(try container.decode([String].self)) }
            }
            func accepts(_ token: String) -> Bool {
                switch self {
                case .one(let text): text == token
                case .any(let options): options.contains(token)
                }
            }
            var description: String {
                switch self {
                case .one(let text): text
                case .any(let options): options.joined(separator: "|")
                }
            }
        }

        static func token(_ message: ServerMessage) -> String? {
            switch message {
            case .error(let error): error.code.rawValue
            case .reply(let reply): "reply:" + (reply.failure?.code.rawValue ?? "ok")
            case .patch, .event: nil
            default: "!" + message.type
            }
        }

        /// Runs one corpus case; returns what went wrong, if anything.
        static func run(_ item: Case, path: String) throws -> [String] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Repo.corpus + "/" + item.file)))
            let client = try FaultClient(path: path)
            defer { client.disconnect() }
            client.sendRaw(bytes)
            if item.shutdown { Glibc.shutdown(client.fd, Int32(SHUT_WR)) }
            var tokens: [String] = []
            let deadline = Date().addingTimeInterval(generousDeadline)
            while tokens.count < item.codes.count, deadline.timeIntervalSinceNow > 0 {
                guard let message = try? client.readMessage(timeout: deadline.timeIntervalSinceNow) else { break }
                if let token = token(message) { tokens.append(token) }
            }
            var problems: [String] = []
            var matches = tokens.count == item.codes.count && zip(item.codes, tokens).allSatisfy { $0.accepts($1) }
            if item.unordered && !matches && tokens.count == item.codes.count {
                var left = tokens
                matches = item.codes.allSatisfy { expected in
                    guard let at = left.firstIndex(where: { expected.accepts($0) }) else { return false }
                    left.remove(at: at)
                    return true
                }
            }
            if !matches { problems.append("\(item.file): expected \(item.codes) got \(tokens)") }
            // Error frames carry `fatal` exactly when the spec says the code is fatal.
            for case .error(let error) in client.received where error.fatal != error.code.isFatal {
                problems.append("\(item.file): \(error.code.rawValue) came with fatal: \(error.fatal)")
            }
            if item.end == "close" {
                if !client.drainUntilClosed(timeout: generousDeadline) { problems.append("\(item.file): the connection was not closed") }
            } else {
                // Still in step: a ping is answered (with its pong after hello, `not_ready` before).
                let nonce = JSONValue.string("after " + item.file)
                client.send(.ping(nonce: nonce))
                do {
                    _ = try client.next(where: "pong or not_ready") { message -> Bool? in
                        if case .pong(let got) = message, got == nonce { return true }
                        if case .error(let error) = message, error.code == .notReady { return true }
                        return nil
                    }
                } catch {
                    problems.append("\(item.file): no pong after the errors (\(error))")
                }
            }
            return problems
        }

        @Test(.timeLimit(.minutes(5)))
        func everyMalformedInputIsAnsweredAndTheDaemonServesOn() async throws {
            let directory = try TempDirectory("corpus")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 10)
            defer { daemon.killHard() }
            try daemon.start()
            let cases = try JSONDecoder().decode([Case].self, from: Data(contentsOf: URL(fileURLWithPath: Repo.corpus + "/manifest.json")))
            #expect(cases.count >= 40)
            let path = daemon.socketPath
            let problems = try await offPool { () -> [String] in
                var problems: [String] = []
                // A bystander attached all along is never disturbed.
                let bystander = try FaultClient(path: path)
                try bystander.hello(key: "bystander")
                for item in cases {
                    problems += try Self.run(item, path: path)
                    if daemon.reap() != nil {
                        problems.append("the daemon died on \(item.file): \(daemon.log)")
                        break
                    }
                }
                if !(try bystander.intent("list", "refresh").isOK) { problems.append("the bystander's refresh failed") }
                let second = try FaultClient(path: path)
                try second.hello(key: "second")
                if !(try second.intent("list", "refresh").isOK) { problems.append("a second client's refresh failed") }
                return problems
            }
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
            #expect(daemon.reap() == nil, "the daemon exited: \(daemon.log)")
        }

        /// PROTOCOL.md §2: frames are processed in order, so a pipelined second hello is refused
        /// after the first one's welcome and snapshot, not before.
        @Test(.timeLimit(.minutes(5)))
        func aPipelinedSecondHelloIsRefusedAfterTheWelcome() async throws {
            let directory = try TempDirectory("hello-twice")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 10)
            defer { daemon.killHard() }
            try daemon.start()
            let path = daemon.socketPath
            let overtaken = try await offPool { () -> Int in
                var overtaken = 0
                for attempt in 0..<50 {
                    let client = try FaultClient(path: path)
                    let hello = RawSocket.frame(Array(try FrameEncoder(maximumFrameSize: 1 << 20).encode(client.helloMessage(key: "twice-\(attempt)")).dropFirst(4)))
                    client.sendRaw(hello + hello)
                    let first = try client.next(where: "welcome or error") { message -> String? in
                        switch message {
                        case .welcome: "welcome"
                        case .error(let error): error.code.rawValue
                        default: nil
                        }
                    }
                    if first != "welcome" { overtaken += 1 }
                    client.disconnect()
                }
                return overtaken
            }
            #expect(overtaken == 0, "already_attached overtook the welcome in \(overtaken) of 50 connections")
        }

        /// Floods 10,000 intents in one burst; counts, per intent id, the replies that ran and the
        /// replies refused with `rate_limited` (every intent gets exactly one reply, §4.1).
        static func flood(path: String, count: Int) throws -> (answered: [Int: Int], replies: Int, limited: Int, other: [String]) {
            let client = try FaultClient(path: path)
            defer { client.disconnect() }
            try client.hello(key: "flood")
            let first = client.peekIntentID
            var burst: [UInt8] = []
            let encoder = FrameEncoder(maximumFrameSize: 1 << 20)
            for offset in 0..<count {
                let intent = ClientMessage.intent(.init(id: first + offset, screen: "list", action: "dismiss_error"))
                try encoder.encode(intent, into: &burst)
            }
            let fd = client.fd
            let bytes = burst
            let writer = Thread { RawSocket.sendAll(fd, bytes) }
            writer.start()
            var answered: [Int: Int] = [:]
            var replies = 0, limited = 0
            var other: [String] = []
            let deadline = Date().addingTimeInterval(4 * generousDeadline)
            while answered.count < count, deadline.timeIntervalSinceNow > 0 {
                guard let message = try? client.readMessage(timeout: generousDeadline) else { break }
                switch message {
                case .reply(let reply):
                    answered[reply.id, default: 0] += 1
                    if case .failure(let error) = reply.outcome, error.code == .rateLimited {
                        limited += 1
                    } else {
                        replies += 1
                    }
                case .error(let error):
                    other.append("\(error.code.rawValue): \(error.message)")
                default:
                    break
                }
            }
            return (answered, replies, limited, other)
        }

        @Test(.timeLimit(.minutes(5)))
        func aFloodOfTenThousandIntentsIsAnsweredOneByOneAndTheDaemonServesOn() async throws {
            let directory = try TempDirectory("flood")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 10, extra: ["--intents-per-second", "200"])
            defer { daemon.killHard() }
            try daemon.start()
            let path = daemon.socketPath
            let result = try await offPool { try Self.flood(path: path, count: 10_000) }
            #expect(result.answered.count == 10_000, "\(10_000 - result.answered.count) intents got neither a reply nor an error")
            #expect(result.answered.values.allSatisfy { $0 == 1 }, "some intent was answered twice")
            #expect(result.replies > 0 && result.limited > 0, "replies \(result.replies), rate_limited \(result.limited)")
            #expect(result.other.isEmpty, "\(result.other.prefix(5))")
            let alive = try await offPool { () -> Bool in
                let second = try FaultClient(path: path)
                try second.hello(key: "after-flood")
                return try second.intent("list", "refresh").isOK
            }
            #expect(alive)
            #expect(daemon.reap() == nil)
            print("flood (default rate limit): \(result.replies) replies, \(result.limited) rate_limited")
        }

        /// With the rate limit out of the way every one of 10,000 intents must get its reply
        /// (PROTOCOL.md §4.1: "exactly one reply").
        @Test(.timeLimit(.minutes(5)))
        func withoutARateLimitEveryIntentOfAFloodGetsItsReply() async throws {
            let directory = try TempDirectory("flood-unlimited")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 10, extra: ["--intents-per-second", "1000000"])
            defer { daemon.killHard() }
            try daemon.start()
            let path = daemon.socketPath
            let result = try await offPool { try Self.flood(path: path, count: 10_000) }
            #expect(result.replies == 10_000, "\(10_000 - result.replies) of 10,000 intents never got a reply")
            #expect(daemon.reap() == nil)
            print("flood (no rate limit): \(result.replies) replies, \(result.limited) rate_limited, \(result.other.count) other errors")
        }
    }
}
