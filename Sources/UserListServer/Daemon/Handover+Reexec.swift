import Glibc

extension Handover {
    /// Replaces this process with a new image of the binary (same pid), the descriptors at 3, 4, …
    /// as LISTEN_FDS with their names. Returns only if exec failed.
    static func reexec(_ descriptors: [(name: String, fd: Int32)], logger: Logger) {
        let placement = DescriptorPlacement(descriptors.map(\.fd))
        // Descriptors already in place stay; only theirs lose FD_CLOEXEC.
        for fd in placement.staying { _ = fcntl(fd, F_SETFD, 0) }
        // A copy made by dup2 has no FD_CLOEXEC, so it survives the exec; the original is
        // marked to close there (a descriptor adopted from LISTEN_FDS may not be).
        for (from, to) in placement.moves {
            dup2(from, to)
            _ = fcntl(from, F_SETFD, FD_CLOEXEC)
        }
        let names = placement.order.map { descriptors[$0].name }
        setenv("LISTEN_FDS", String(descriptors.count), 1)
        setenv("LISTEN_PID", String(getpid()), 1)
        setenv("LISTEN_FDNAMES", names.joined(separator: ":"), 1)
        let arguments = CommandLine.arguments
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv("/proc/self/exe", &argv)
        logger.error("Cannot re-execute /proc/self/exe: \(String(cString: strerror(errno))); clients will reconnect")
        argv.forEach { free($0) }
    }
}

/// Where each handed descriptor goes for LISTEN_FDS (3, 4, … with no gap), moving as few as
/// it can and never above the highest one in use.
///
/// The obvious way, every descriptor moved out of the way above them all and then down, grows
/// the process's descriptor table twice on a big restart, and in a process with threads each
/// growth waits for an RCU grace period: 8 ms of a thousand clients' wait, measured. Here a
/// descriptor already in the range keeps its number, and each other one is copied into a
/// number of the range that no handed descriptor holds (whatever held it was not handed on,
/// and closes at the exec anyway).
struct DescriptorPlacement {
    /// Handed descriptors already where they will be.
    var staying: [Int32] = []
    /// Copies to make, in any order: no `to` is a handed descriptor.
    var moves: [(from: Int32, to: Int32)] = []
    /// For each number from `first` on, the index (in the list given) of the descriptor it holds.
    var order: [Int] = []

    init(_ fds: [Int32], first: Int32 = 3) {
        let range = first..<(first + Int32(fds.count))
        var slots = [Int?](repeating: nil, count: fds.count)
        var outside: [Int] = []
        for (index, fd) in fds.enumerated() {
            if range.contains(fd), slots[Int(fd - first)] == nil {
                slots[Int(fd - first)] = index
                staying.append(fd)
            } else {
                outside.append(index)
            }
        }
        var next = 0
        for index in outside {
            while slots[next] != nil { next += 1 }
            slots[next] = index
            moves.append((fds[index], first + Int32(next)))
        }
        order = slots.map { $0! }
    }
}
