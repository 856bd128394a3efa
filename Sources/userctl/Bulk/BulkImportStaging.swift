import Foundation
import UserListClient
import UserListWire

/// Streams an import file into the daemon's staging (`import_users` under one import), counting
/// what the daemon has taken: the progress shows that count, never what was merely read.
final class Staging {
    let context: CommandContext
    let token: String
    let progress: Progress
    private var source: Entries
    /// Entries read from the file (all of them, once `sendFile` returns without Ctrl-C).
    private(set) var entries = 0
    /// Entries the daemon has staged.
    private(set) var taken = 0
    /// The users the entries read name (a user named twice counts once).
    private(set) var users = DistinctUserIDs()
    private var inFlight: [Chunk] = []

    private struct Chunk {
        let firstEntry: Int
        let count: Int
        /// Where its last user ends in the file: the fraction done once the daemon has it.
        let endOffset: Int
        let reply: Task<JSONValue?, any Error>
    }

    /// Where the entries come from: an array or JSON Lines streamed from the file, or the users
    /// of a REST page (`{"users": [...]}`), read whole.
    enum Entries {
        case stream(JSONArrayReader)
        case page(ArraySlice<JSONValue>, JSONArrayReader)
    }

    init(context: CommandContext, token: String, entries: Entries, progress: Progress) {
        self.context = context
        self.token = token
        self.source = entries
        self.progress = progress
    }

    private var reader: JSONArrayReader {
        switch source {
        case .stream(let reader), .page(_, let reader): reader
        }
    }

    /// The next entry of the file, or nil at its end.
    private func nextEntry(_ path: String) throws(CommandFailure) -> JSONValue? {
        switch source {
        case .stream(let reader):
            let element: ArraySlice<UInt8>?
            do { element = try reader.next() } catch {
                throw CommandFailure(.dataError, "\(path): \(BulkImport.describe(error)) (at entry \(entries + 1))")
            }
            guard let element else { return nil }
            do { return try JSONValue(parsing: element) } catch {
                throw CommandFailure(.dataError, "\(path): entry \(entries + 1) is not JSON: \(error)")
            }
        case .page(var users, let reader):
            guard let user = users.popFirst() else { return nil }
            source = .page(users, reader)
            return user
        }
    }

    /// Reads and stages the whole file, or stops at Ctrl-C; throws at the first bad entry, or
    /// the daemon's refusal of a chunk (which names the entry by its position in the file).
    func sendFile(_ path: String) async throws {
        var batch: [JSONValue] = []
        var batchBytes = 0
        var batchEnd = 0
        var serialized: [UInt8] = []  // one entry's JSON, only to measure it (reused: no allocation)
        while !Interruption.requested {
            guard let value = try nextEntry(path) else { break }
            let user = try ImportFile.normalizeOne(value, entry: entries + 1, source: path)
            serialized.removeAll(keepingCapacity: true)
            user.serialize(into: &serialized)
            let size = serialized.count + 1
            guard size <= BulkImport.chunkBytes else {
                // Sent, it would pass the daemon's frame limit and close the connection.
                throw CommandFailure(.dataError, "\(path): entry \(entries + 1) is \(size / 1024) KiB of JSON; an "
                                     + "entry may be at most \(BulkImport.chunkBytes / 1024) KiB (a name holds at "
                                     + "most 200 characters)")
            }
            if !batch.isEmpty && (batch.count == BulkImport.chunkUsers || batchBytes + size > BulkImport.chunkBytes) {
                try await send(&batch, end: batchEnd, path)
                batchBytes = 0
            }
            entries += 1
            users.insert(entry: user)
            batch.append(user)
            batchBytes += size
            batchEnd = reader.bytesRead
        }
        if !Interruption.requested { try await send(&batch, end: batchEnd, path) }
        while !inFlight.isEmpty { try await settle(inFlight.removeFirst(), path) }
    }

    /// Drops the import in the daemon (Ctrl-C, a bad entry): waits for the chunks in flight
    /// first, so none is staged after the abort.
    func abort() async {
        for chunk in inFlight { _ = await chunk.reply.result }
        inFlight.removeAll()
        let reply = await BulkImport.enqueue(context.client, action: "import_abort", ["import": .string(token)],
                                             timeout: .seconds(10))
        _ = await reply.result
    }

    private func send(_ batch: inout [JSONValue], end: Int, _ path: String) async throws {
        guard !batch.isEmpty else { return }
        let first = entries - batch.count + 1
        let args: [String: JSONValue] = ["import": .string(token), "first": .int(Int64(first)), "users": .array(batch)]
        inFlight.append(Chunk(firstEntry: first, count: batch.count, endOffset: end,
                              reply: await BulkImport.enqueue(context.client, action: "import_users", args)))
        batch.removeAll(keepingCapacity: true)
        if inFlight.count >= BulkImport.window { try await settle(inFlight.removeFirst(), path) }
    }

    private func settle(_ chunk: Chunk, _ path: String) async throws {
        do {
            let result = try await chunk.reply.value
            taken = max(taken, result?["staged"]?.int64Value.map(Int.init) ?? (taken + chunk.count))
        } catch let error as ClientError {
            throw CommandFailure(error, "\(path): \(error.message)")
        }
        // The bytes of the users taken, not of what was read: the reader runs up to `window`
        // chunks ahead, and the percentage must not run ahead of the count.
        progress.update(done: taken, fraction: reader.size.map { Double(chunk.endOffset) / Double(max(1, $0)) })
    }
}
