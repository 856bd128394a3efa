import Synchronization

/// How many connection objects of one daemon are alive, counted in their initializers and
/// deinitializers: after every client has gone, both return to zero, or something holds them.
/// A leak test reads these; `status` could too.
package final class LiveObjectCounts: Sendable {
    package let connections = Atomic<Int>(0)
    package let handlers = Atomic<Int>(0)

    package init() {}
}
