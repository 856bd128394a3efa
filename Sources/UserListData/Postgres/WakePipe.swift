import Glibc

/// A pipe a listening thread watches beside its connection (`PGConnection.waitForNotifications`)
/// and in its pauses (`sleep`), so another thread can wake it: something to send, or stop.
/// Both ends are non-blocking and close-on-exec; a wake is one byte, and any number of wakes
/// before the thread looks read as one.
final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Waits `duration`, or less when woken; either way the wakes so far are used up.
    func sleep(_ duration: Duration) {
        var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(duration.components.seconds * 1000
                                 + duration.components.attoseconds / 1_000_000_000_000_000)
        _ = poll(&descriptor, 1, milliseconds)
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}
