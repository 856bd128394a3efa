import Synchronization
import UserListWire
import ThreadLocks

/// Sending intents: paced (`send`, `enqueuePaced`) for commands that send many, or written at
/// once (`enqueue`) for a view that must never block.
extension UserListClient {
    /// Sends an intent and waits for its reply: the `result` on success.
    ///
    /// Throws `ClientError` with `.server(code)` when the server refuses (validation, conflict,
    /// not_found, read_only...), `.timedOut`, `.disconnected` or `.closed`.
    ///
    /// Paced: waits, if need be, so that this client's intents stay under the daemon's
    /// per-client limit (`IntentPacer`); a command that sends many never trips it.
    @discardableResult
    public func send(screen: String, action: String, args: [String: JSONValue]? = nil,
                     timeout: Duration? = nil) async throws -> JSONValue? {
        await waitForIntentSlot()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue?, any Error>) in
            write(screen: screen, action: action, args: args, timeout: timeout) { result in
                continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }

    /// As `enqueue`, after waiting for the pacer's next slot (see `send`): for a bulk command
    /// that keeps several intents in flight, in order.
    public func enqueuePaced(screen: String, action: String, args: [String: JSONValue]? = nil, timeout: Duration? = nil,
                             completion: @escaping @Sendable (Result<JSONValue?, ClientError>) -> Void) async {
        await waitForIntentSlot()
        write(screen: screen, action: action, args: args, timeout: timeout, completion: completion)
    }

    /// Writes an intent now, on the caller's thread, so intents reach the server in the order of
    /// the calls (a view sending one `set_draft_name` per keystroke relies on it); `completion`
    /// runs once, on another thread, with the reply or the failure. Not paced (a view must not
    /// block), but counted, so that paced intents leave room for it.
    public func enqueue(screen: String, action: String, args: [String: JSONValue]? = nil, timeout: Duration? = nil,
                        completion: @escaping @Sendable (Result<JSONValue?, ClientError>) -> Void) {
        _ = pacer.withLock { $0.reserve(now: .now) }
        write(screen: screen, action: action, args: args, timeout: timeout, completion: completion)
    }

    /// As `send`, with the result kept as the bytes it came in (validated, never built into
    /// values): for a bulk read that passes what it gets through, as `userctl export` does.
    public func sendForSlice(screen: String, action: String, args: [String: JSONValue]? = nil,
                             timeout: Duration? = nil) async throws -> JSONSlice? {
        await waitForIntentSlot()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONSlice?, any Error>) in
            write(screen: screen, action: action, args: args, timeout: timeout, awaiting: .slice { result in
                continuation.resume(with: result.mapError { $0 as any Error })
            })
        }
    }

    /// Writes the intent's frame and registers `completion` for its reply or failure.
    func write(screen: String, action: String, args: [String: JSONValue]?, timeout: Duration?,
               completion: @escaping @Sendable (Result<JSONValue?, ClientError>) -> Void) {
        write(screen: screen, action: action, args: args, timeout: timeout, awaiting: .value(completion))
    }

    /// Books the pacer's next slot and sleeps until it comes.
    private func waitForIntentSlot() async {
        let wait = pacer.withLock { $0.reserve(now: .now) }
        if wait > .zero { try? await Task.sleep(for: wait) }
    }
}
