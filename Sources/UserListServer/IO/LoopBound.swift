/// A value that belongs to one event loop: only that loop's thread may read or change it.
///
/// What an actor would be for state that must be touched synchronously from the loop's
/// callbacks (a read, a write, a change feed's job) without an `await`. The owner is checked on
/// every access, in release builds too (`precondition`: an atomic load and `pthread_self`), so a
/// use off the loop stops the daemon rather than racing.
package final class LoopBound<Value>: @unchecked Sendable {
    // Invariant (why @unchecked is sound): `value` is touched only through `withValue` and
    // `value`, which check that the caller runs on `loop`'s thread.
    package let loop: EventLoop
    private var stored: Value

    package init(_ value: Value, on loop: EventLoop) {
        self.loop = loop
        self.stored = value
    }

    /// The value; on the loop's thread only.
    package var value: Value {
        get {
            precondition(loop.isLoopThread, "loop-bound state read off its event loop")
            return stored
        }
        _modify {
            precondition(loop.isLoopThread, "loop-bound state changed off its event loop")
            yield &stored
        }
    }

    /// Changes the value in place; on the loop's thread only.
    package func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        precondition(loop.isLoopThread, "loop-bound state used off its event loop")
        return try body(&stored)
    }
}
