import UserListDomain
import ThreadLocks

/// A change feed the test drives: every subscriber receives what the test sends, in order.
final class FakeChangeFeed: UserChangeFeed {
    private let subscribers = Lock<[AsyncStream<UserChange>.Continuation]>([])

    func subscribe() -> AsyncStream<UserChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: UserChange.self)
        subscribers.withLock { $0.append(continuation) }
        return stream
    }

    var subscriberCount: Int { subscribers.withLock { $0.count } }

    func send(_ change: UserChange) {
        for subscriber in subscribers.withLock({ $0 }) { subscriber.yield(change) }
    }

    func finish() {
        for subscriber in subscribers.withLock({ $0 }) { subscriber.finish() }
    }
}
