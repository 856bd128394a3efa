import Foundation
import UserListClient
import UserListWire

/// `userctl import FILE`: the file is read as a stream (`JSONArrayReader`) and sent in chunks
/// of at most `chunkUsers` users and `chunkBytes` bytes, each one `import_users` intent that
/// the daemon commits in its own short transaction. Up to `window` chunks are in flight. Small
/// chunks, because another client's save waits for the chunk being written (PROTOCOL.md §4.3).
///
/// Resumable, not atomic: an interruption (Ctrl-C, a killed daemon or client, an invalid entry)
/// leaves the chunks acknowledged so far committed and the rest not; running the same import
/// again finishes it, because an import is an upsert by id that skips identical users.
enum BulkImport {
    static let chunkUsers = 250
    static let chunkBytes = 768 * 1024
    static let window = 8
    static let replyTimeout: Duration = .seconds(120)

    struct Tally {
        /// Users the daemon acknowledged (committed), in file order from the first.
        var acknowledged = 0
        /// Of those, how many it wrote (new or changed; identical users are skipped).
        var written = 0
    }

    private struct Chunk {
        let firstEntry: Int
        let count: Int
        /// Where its last user ends in the file: the fraction done once it is acknowledged.
        let endOffset: Int
        let reply: Task<JSONValue?, any Error>
    }

    static func run(_ context: CommandContext) async throws {
        let path = context.invocation.positionals[0]
        if path != "-", !FileManager.default.fileExists(atPath: path) { throw CommandFailure(.noInput, "no such file: \(path)") }
        let reader: JSONArrayReader
        do { reader = try JSONArrayReader(path: path) } catch { throw CommandFailure(.noInput, describe(error)) }
        // A REST page ({"users": [...]}) is small by nature: read it whole, as before.
        let first: UInt8?
        do { first = try reader.peekFirst() } catch { throw CommandFailure(.noInput, describe(error)) }
        if first == UInt8(ascii: "{") {
            let users = try ImportFile.read(path)
            let result = try await context.client.send(screen: "session", action: "import_users", args: ["users": .array(users)])
            report(Tally(acknowledged: users.count, written: result?["imported"]?.int64Value.map(Int.init) ?? users.count), path, context)
            return
        }

        Interruption.install()
        let progress = Progress(verb: "import", json: context.json, quiet: context.invocation.flags.contains("quiet"))
        var tally = Tally()
        var inFlight: [Chunk] = []
        var batch: [JSONValue] = []
        var batchBytes = 0
        var batchEnd = 0
        var entries = 0

        func settle(_ chunk: Chunk) async throws {
            do {
                let result = try await chunk.reply.value
                tally.acknowledged += chunk.count
                tally.written += result?["imported"]?.int64Value.map(Int.init) ?? chunk.count
            } catch {
                progress.finish()
                let range = "entries \(chunk.firstEntry) to \(chunk.firstEntry + chunk.count - 1)"
                let status = summary(tally, path)
                if let error = error as? ClientError {
                    throw CommandFailure(ExitCode.for(error), "the chunk of \(range) was not imported: \(error.message)\n\(status)")
                }
                throw CommandFailure(.software, "the chunk of \(range) was not imported: \(error)\n\(status)")
            }
            // The bytes of the acknowledged users, not of what was read: the reader runs up to
            // `window` chunks ahead, and the percentage must not run ahead of the count.
            progress.update(done: tally.acknowledged, fraction: reader.size.map { Double(chunk.endOffset) / Double(max(1, $0)) })
        }

        func send() async throws {
            guard !batch.isEmpty else { return }
            let chunk = Chunk(firstEntry: entries - batch.count + 1, count: batch.count, endOffset: batchEnd,
                              reply: await enqueue(context.client, ["users": .array(batch)]))
            batch.removeAll(keepingCapacity: true)
            batchBytes = 0
            inFlight.append(chunk)
            if inFlight.count >= window { try await settle(inFlight.removeFirst()) }
        }

        do {
            while !Interruption.requested {
                let element: ArraySlice<UInt8>?
                do { element = try reader.next() } catch { throw CommandFailure(.dataError, "\(path): \(describe(error)) (after entry \(entries))") }
                guard let element else { break }
                entries += 1
                let value: JSONValue
                do { value = try JSONValue(parsing: element) } catch {
                    throw CommandFailure(.dataError, "\(path): entry \(entries) is not JSON: \(error)")
                }
                let user = try ImportFile.normalizeOne(value, entry: entries, source: path)
                let size = user.description.utf8.count + 1
                if !batch.isEmpty && (batch.count == chunkUsers || batchBytes + size > chunkBytes) {
                    entries -= 1  // the entry read belongs to the next chunk
                    try await send()
                    entries += 1
                }
                batch.append(user)
                batchBytes += size
                batchEnd = reader.bytesRead
            }
            if !Interruption.requested { try await send() }
            while !inFlight.isEmpty { try await settle(inFlight.removeFirst()) }
        } catch let failure as CommandFailure {
            // Let what is in flight finish, so the report says exactly what was committed.
            var later = 0
            for chunk in inFlight where (try? await chunk.reply.value) != nil { later += chunk.count }
            progress.finish()
            guard later > 0 else { throw failure }
            throw CommandFailure(failure.code, failure.message + "; \(Plural.users(later)) of the chunks sent after it \(later == 1 ? "was" : "were") imported too")
        }
        progress.update(done: tally.acknowledged, fraction: Interruption.requested ? nil : 1, force: true)
        progress.finish()
        if Interruption.requested {
            throw CommandFailure(.interrupted, "interrupted: \(summary(tally, path)), entry \(tally.acknowledged + 1) onwards were not sent")
        }
        report(tally, path, context)
    }

    static func summary(_ tally: Tally, _ path: String) -> String {
        "the first \(Plural.users(tally.acknowledged)) of \(path) \(tally.acknowledged == 1 ? "was" : "were") imported (\(tally.written) new or changed); "
            + "running the same import again finishes it (users already imported are skipped)"
    }

    private static func report(_ tally: Tally, _ path: String, _ context: CommandContext) {
        if context.json {
            print(JSONValue.object(["imported": .int(Int64(tally.written)), "read": .int(Int64(tally.acknowledged))]).description)
        } else {
            print("imported \(Plural.users(tally.written)) from \(path)" + (tally.written == tally.acknowledged ? "" : " (\(tally.acknowledged - tally.written) already up to date)"))
        }
    }

    /// Writes the intent in the pacer's next slot (so chunks reach the daemon in file order, and
    /// under its per-client limit) and returns its reply.
    private static func enqueue(_ client: UserListClient, _ args: [String: JSONValue]) async -> Task<JSONValue?, any Error> {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<JSONValue?, ClientError>.self)
        await client.enqueuePaced(screen: "session", action: "import_users", args: args, timeout: replyTimeout) { result in
            continuation.yield(result)
            continuation.finish()
        }
        return Task {
            for await result in stream { return try result.get() }
            throw ClientError(.closed, "the client was closed")
        }
    }

    static func describe(_ error: JSONArrayReader.ReadError) -> String {
        switch error {
        case .notAnArray(let text), .truncated(let text), .unreadable(let text): text
        }
    }
}
