import Glibc

/// A value guarded by a `pthread_mutex_t`: the lock every target uses instead of
/// `Synchronization.Mutex`.
///
/// Why not `Mutex`: on Linux it waits on a futex directly, which ThreadSanitizer does not see, so
/// two threads updating a value under a `Mutex` are reported as a race and `make tsan` could not
/// tell a real race from noise. ThreadSanitizer intercepts `pthread_mutex_lock`, so every report
/// left is a real one. Same shape as `Mutex`: the value is reached only inside `withLock`.
///
/// Uncontended, a lock and an unlock cost about what `Mutex`'s do (no system call).
public final class Lock<Value: ~Copyable>: @unchecked Sendable {
    // Invariant (why @unchecked is sound): `value` is read and written only between
    // pthread_mutex_lock and pthread_mutex_unlock of `mutex`, in `withLock`, and `withLock`'s
    // body receives it as `sending`, so no reference into it escapes the lock's region.
    // Inlinable, so that callers in other modules get `withLock` specialized for their value
    // (unspecialized, each call looked up generic metadata: seen in the fan-out's profile).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    public init(_ initial: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
        value = .allocate(capacity: 1)
        value.initialize(to: initial)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value while holding the lock. Never call into another component that
    /// may take a lock of its own from `body` (ARCHITECTURE.md lists the locks and their order).
    @inlinable
    public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
