/// Lets one bulk write (an import chunk) at a time into the writer's queue, in arrival order.
///
/// The writer's queue is first come, first served. A client streaming an import keeps several
/// chunks in flight, and each took its place in the queue, so another client's save waited
/// behind all of them (p99 142-278 ms at 100,000 users). With the gate, a save waits for at
/// most the one chunk being written.
actor BulkWriteGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()  // the turn passes on: `busy` stays true
        }
    }
}
