import CLinuxIO
import Glibc

/// Small helpers over the socket calls, each failing with a `SystemError` that names the path.
package enum UnixSocket {
    /// Fills a `sockaddr_un` for `path`, or throws when the path does not fit (108 bytes).
    package static func address(_ path: String) throws(SystemError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw SystemError("socket path", errno: ENAMETOOLONG, detail: "\(path) is \(bytes.count) bytes; at most \(capacity - 1)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Connects a blocking client socket to `path`.
    package static func connect(to path: String) throws(SystemError) -> Int32 {
        var address = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let error = SystemError("connect", detail: "to \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Whether a live process accepts connections on `path` right now.
    package static func isAnswering(_ path: String) -> Bool {
        guard let fd = try? connect(to: path) else { return false }
        close(fd)
        return true
    }

    /// Binds and listens on `path`: refuses when a live daemon answers there, removes a stale file.
    package static func listen(at path: String, mode: mode_t = 0o660, backlog: Int32 = 1024) throws(SystemError) -> Int32 {
        if access(path, F_OK) == 0 {
            if isAnswering(path) {
                throw SystemError("bind", errno: EADDRINUSE, detail: "\(path): another userlistd is already answering there")
            }
            unlink(path)  // stale: left by a daemon that did not exit cleanly
        }
        var address = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = SystemError("bind", detail: path)
            close(fd)
            throw error
        }
        chmod(path, mode)
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SystemError("listen", detail: path)
            close(fd)
            throw error
        }
        return fd
    }

    package static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    /// Who is on the other end (SO_PEERCRED): the kernel's word, not the client's.
    package static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var pid: UInt32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        guard ulio_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return PeerCredentials(pid: Int32(bitPattern: pid), uid: uid, gid: gid)
    }
}

/// The identity of a connected process, as the kernel reports it.
public struct PeerCredentials: Hashable, Sendable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32
}
