import Foundation
import Glibc
import UserListTestSupport

/// The NOTIFY_SOCKET end for a daemon under test: a bound AF_UNIX datagram socket; `drain()`
/// collects what has arrived, without waiting; `waitForStatuses` waits for what is to come.
final class NotifyListener: @unchecked Sendable {  // Invariant: used by one test's task at a time.
    let path: String
    private let fd: Int32
    /// Every datagram received so far, in order.
    private(set) var received: [String] = []

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RealDaemonFailure("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw RealDaemonFailure("bind \(path): errno \(errno)") }
    }

    /// Reads every datagram waiting now; returns all received so far.
    @discardableResult
    func drain() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { break }
            received.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        return received
    }

    /// Blocks until `holds` is true of the `STATUS=` texts received so far, re-checked as each
    /// datagram arrives (never on a timer); false past `timeout` seconds.
    @available(*, noasync, message: "blocking: call it from a thread of its own (offPool)")
    func waitForStatuses(timeout: Double = 120, _ holds: ([String]) -> Bool) -> Bool {
        // `statuses` reads what arrived, so the check itself empties the socket.
        whenReadable(fd, timeout: timeout, until: { holds(statuses) }, drain: {})
    }

    /// The `STATUS=` texts received so far, in order.
    var statuses: [String] {
        drain().flatMap { $0.split(separator: "\n") }.filter { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst(7)) }
    }

    func close() {
        Glibc.close(fd)
        unlink(path)
    }
}

struct RealDaemonFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
