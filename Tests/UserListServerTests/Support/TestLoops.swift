import UserListServer

/// Event loops for tests that make sessions without a daemon: a session's executor is a loop.
/// Started once for the whole test process and never stopped (two idle threads in epoll_wait).
enum TestLoops {
    static let group: EventLoopGroup = {
        do {
            let group = try EventLoopGroup(count: 2)
            group.start()
            return group
        } catch {
            preconditionFailure("cannot start the tests' event loops: \(error)")
        }
    }()

    static var first: EventLoop { group.first }
}
