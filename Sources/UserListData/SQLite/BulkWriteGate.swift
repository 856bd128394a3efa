import ThreadLocks

/// Lets one bulk write (an import chunk) at a time into the writer's queue, in arrival order.
///
/// The writer's queue is first come, first served. A client streaming an import keeps several
/// chunks in flight, and each took its place in the queue, so another client's save waited
/// behind all of them (p99 142-278 ms at 100,000 users). With the gate, a save waits for at
/// most the one chunk being written.
typealias BulkWriteGate = AsyncTurns
