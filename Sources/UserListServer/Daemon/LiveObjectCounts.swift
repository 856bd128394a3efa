import Synchronization
import ThreadLocks

/// How many connection objects of one daemon are alive, counted in their initializers and
/// deinitializers: after every client has gone, both return to zero, or something holds them.
/// A leak test reads these (and awaits them through `onChange`); `status` could too.
package final class LiveObjectCounts: Sendable {
    package let connections = LiveCount()
    package let handlers = LiveCount()

    package init() {}

    /// Test-facing: `handler` runs after every change of either count from now on.
    package func onChange(_ handler: @escaping @Sendable () -> Void) {
        connections.onChange(handler)
        handlers.onChange(handler)
    }
}

/// One count of live objects: an `Atomic<Int>` (same calls) that can tell a test it changed, so
/// the test awaits "back to zero" instead of polling it. Unobserved, a change costs one load more.
package final class LiveCount: Sendable {
    private let value = Atomic<Int>(0)
    private let isObserved = Atomic<Bool>(false)
    private let observer = Lock<(@Sendable () -> Void)?>(nil)

    package init() {}

    // `ordering` keeps `Atomic`'s calls; every caller counts relaxed, as the counts order nothing.
    package func add(_ delta: Int, ordering: AtomicUpdateOrdering) {
        value.add(delta, ordering: .relaxed)
        changed()
    }

    package func subtract(_ delta: Int, ordering: AtomicUpdateOrdering) {
        value.subtract(delta, ordering: .relaxed)
        changed()
    }

    package func load(ordering: AtomicLoadOrdering) -> Int { value.load(ordering: .relaxed) }

    /// Test-facing: `handler` runs after every change from now on, on the changing thread.
    package func onChange(_ handler: @escaping @Sendable () -> Void) {
        observer.withLock { $0 = handler }
        isObserved.store(true, ordering: .releasing)
    }

    private func changed() {
        guard isObserved.load(ordering: .acquiring) else { return }
        observer.withLock { $0 }?()
    }
}
