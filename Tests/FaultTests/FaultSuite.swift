import Testing
import UserListTestSupport

/// Every fault test runs the real `userlistd` binary as a child process. They run one at a
/// time: several daemons and their clients at once would fight over two cores and make the
/// latency and timing assertions meaningless.
@Suite(.childProcesses, .serialized) enum Fault {}
