import Foundation
import UserListClient
import UserListWire
import ThreadLocks

/// `userctl import FILE`: all or nothing (PROTOCOL.md §4.3). The file is read as a stream
/// (`JSONArrayReader`) and staged in the daemon in chunks of at most `chunkUsers` users and
/// `chunkBytes` bytes under one import (`import_begin`, `import_users` with `import` and
/// `first`), up to `window` chunks in flight; then `import_commit` applies the whole file.
///
/// Until the commit is sent nothing is visible: a bad entry, Ctrl-C or a lost daemon ends the
/// import with nothing imported (userctl aborts it; a daemon restart drops it). Once the daemon
/// has taken the commit, the import is the daemon's: a crash or restart finishes it.
enum BulkImport {
    /// 3,000: the daemon counts a chunk as one intent, so at 1,000 the pacer (150 intents/s under
    /// the default limit of 200) set the staging's pace, not the CPU: 330 chunks took 2.2 s.
    /// 3,000 took 0.83x the whole import's time on SQLite, 0.89x on PostgreSQL; 5,000 gained
    /// nothing more, and each chunk is parsed on an event loop (BENCHMARKS.md, "Import").
    static let chunkUsers = 3_000
    static let chunkBytes = 768 * 1024
    /// Chunks in flight: 3 stage as fast as 8 did, and the daemon holds fewer decoded users at
    /// once (VmHWM 130 MiB against 146 at a million).
    static let window = 3
    static let replyTimeout: Duration = .seconds(120)
    /// The merge of a million users into a million takes tens of seconds on a small machine.
    static let commitTimeout: Duration = .seconds(1_800)

    static func run(_ context: CommandContext) async throws {
        let argument = context.invocation.positionals[0]
        if argument != "-", !FileManager.default.fileExists(atPath: argument) {
            throw CommandFailure(.noInput, "no such file: \(argument)")
        }
        let reader: JSONArrayReader
        do { reader = try JSONArrayReader(path: argument) } catch { throw CommandFailure(.noInput, describe(error)) }
        // What the messages call the file: standard input is "stdin" ("stdin: entry 3 …"), not "-".
        let path = argument == "-" ? "stdin" : argument
        let first: UInt8?
        do { first = try reader.peekFirst() } catch { throw CommandFailure(.noInput, describe(error)) }
        guard let first else { throw CommandFailure(.dataError, "\(path) is empty; nothing was imported") }
        guard first == UInt8(ascii: "[") || first == UInt8(ascii: "{") else {
            throw CommandFailure(.dataError, "\(path) must hold \(JSONArrayReader.shapes); nothing was imported")
        }
        // A REST page ({"users": [...]}) is read whole; any other object starts JSON Lines,
        // streamed like an array's elements. Both are staged the same way (the same rules).
        let entries: Staging.Entries
        if first == UInt8(ascii: "{"), let page = try restPage(reader, path) {
            entries = .page(page[...], reader)
        } else {
            entries = .stream(reader)
        }

        Interruption.install()
        Interruption.againMessage = "userctl: interrupted again; stopping now (nothing was imported: the daemon "
            + "drops what it was sent)"
        let token: String
        do {
            let begun = try await context.client.send(screen: "session", action: "import_begin")
            guard let value = begun?["import"]?.stringValue else {
                throw CommandFailure(.software, "the daemon did not name the import it began")
            }
            token = value
        } catch let error as ClientError {
            throw CommandFailure(error, nothingImported("the import could not begin: \(error.message)"))
        }
        let progress = Progress(verb: "import", json: context.json, quiet: context.invocation.flags.contains("quiet"))
        let staging = Staging(context: context, token: token, entries: entries, progress: progress)
        do {
            try await staging.sendFile(path)
        } catch let failure as CommandFailure {
            progress.finish()
            await staging.abort()
            throw CommandFailure(failure.code, nothingImported(failure.message), reason: failure.reason)
        }
        progress.update(done: staging.taken, fraction: Interruption.requested ? nil : 1, force: true)
        progress.finish()
        if Interruption.requested {
            await staging.abort()
            throw CommandFailure(.interrupted, "interrupted: nothing was imported (the daemon had taken "
                                 + "\(Plural.users(staging.taken)) of \(path), and dropped them)")
        }
        Interruption.againMessage = "userctl: interrupted again; stopping now (the daemon has the whole file and "
            + "finishes the import)"
        let summary = try await commit(context, token: token, entries: staging.entries, path)
        report(ImportReport(read: summary.read, users: staging.users.count, written: summary.written), path, context)
    }

    /// Sends `import_commit` and waits for the merge. Ctrl-C now only stops the waiting: the
    /// daemon has the whole file and applies it whole.
    private static func commit(_ context: CommandContext, token: String, entries: Int,
                               _ path: String) async throws -> (read: Int, written: Int) {
        // The history names the import by the file's name ("stdin" for `-`), as the person gave it.
        let source = (path as NSString).lastPathComponent
        let args: [String: JSONValue] = ["import": .string(token), "source": .string(source)]
        let reply = PendingReply(await enqueue(context.client, action: "import_commit", args, timeout: commitTimeout))
        let handedOver = "the daemon has all \(Plural.users(entries)) of \(path) and applies them all or none"
        while true {
            if Interruption.requested {
                throw CommandFailure(.interrupted, "interrupted while waiting: \(handedOver), whether or not userctl "
                                     + "waits (see `userctl list`)")
            }
            // 10 ms: the reply is seen that soon after it comes (100 ms added 50 on average).
            if let result = await reply.wait(for: .milliseconds(10)) {
                switch result {
                case .success(let value):
                    let read = value?["read"]?.int64Value.map(Int.init) ?? entries
                    return (read, value?["imported"]?.int64Value.map(Int.init) ?? read)
                case .failure(let error as ClientError) where error.kind == .disconnected || error.kind == .timedOut:
                    throw CommandFailure(error, "\(error.message) while the import was being applied: "
                                         + "if the daemon had taken the commit, "
                                         + "\(handedOver) (a restart finishes it); otherwise nothing was imported")
                case .failure(let error as ClientError) where error.kept:
                    throw CommandFailure(error, "\(path): \(error.message)")  // the daemon finishes it
                case .failure(let error as ClientError):
                    throw CommandFailure(error, nothingImported("\(path): \(error.message)"))
                case .failure(let error):
                    throw CommandFailure(.software, nothingImported("\(path): \(error)"))
                }
            }
        }
    }

    /// `message`, then that nothing was imported.
    static func nothingImported(_ message: String) -> String {
        message.hasSuffix(".") ? message + " Nothing was imported." : message + "; nothing was imported"
    }

    private static func report(_ outcome: ImportReport, _ path: String, _ context: CommandContext) {
        if context.json {
            print(JSONValue.object(["imported": .int(Int64(outcome.written)), "read": .int(Int64(outcome.read)),
                                    "users": .int(Int64(outcome.users))]).description)
        } else {
            print(outcome.summary(of: path))
        }
    }

    /// Writes the intent in the pacer's next slot (so chunks reach the daemon in file order, and
    /// under its per-client limit) and returns its reply.
    static func enqueue(_ client: UserListClient, action: String, _ args: [String: JSONValue],
                        timeout: Duration = replyTimeout) async -> Task<JSONValue?, any Error> {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<JSONValue?, ClientError>.self)
        await client.enqueuePaced(screen: "session", action: action, args: args, timeout: timeout) { result in
            continuation.yield(result)
            continuation.finish()
        }
        return Task {
            for await result in stream { return try result.get() }
            throw ClientError(.closed, "the client was closed")
        }
    }

    /// The users of a file that is one REST page (`{"users": [...]}`), nil when its first
    /// object is a user (JSON Lines); a syntax error is left for the streaming to name.
    private static func restPage(_ reader: JSONArrayReader, _ path: String) throws(CommandFailure) -> [JSONValue]? {
        let firstObject: ArraySlice<UInt8>?
        do { firstObject = try reader.peekNext() } catch { return nil }
        guard let firstObject, let page = try? JSONValue(parsing: firstObject),
              let users = page["users"]?.arrayValue else { return nil }
        let next: ArraySlice<UInt8>??
        do { _ = try reader.next(); next = try reader.next() } catch { next = nil }
        guard next == .some(nil) else {
            throw CommandFailure(.dataError, "\(path): a page of users ({\"users\": [...]}) must be the file's only "
                                 + "value; nothing was imported")
        }
        return users  // each normalized as it is staged, as a streamed file's are
    }

    static func describe(_ error: JSONArrayReader.ReadError) -> String {
        switch error {
        case .notAnArray(let text), .truncated(let text), .unreadable(let text): text
        }
    }
}

/// A reply awaited in slices, so the waiter can look at Ctrl-C between them.
final class PendingReply: Sendable {
    private let box = Lock<Result<JSONValue?, any Error>?>(nil)

    init(_ task: Task<JSONValue?, any Error>) {
        Task { [box] in
            let result = await task.result
            box.withLock { $0 = result }
        }
    }

    /// The result if it came within `limit`, else nil.
    func wait(for limit: Duration) async -> Result<JSONValue?, any Error>? {
        if let result = box.withLock({ $0 }) { return result }
        try? await Task.sleep(for: limit)
        return box.withLock { $0 }
    }
}
