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
            throw SystemError("socket path", errno: ENAMETOOLONG,
                              detail: "\(path) is \(bytes.count) bytes; at most \(capacity - 1)")
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

    /// Binds and listens on `path`, then gives the socket `mode` (and `group`, when set).
    ///
    /// Whatever is already at `path` is looked at with `lstat` (a symlink is never followed):
    /// only a socket that nothing answers on (connect fails with ECONNREFUSED: a daemon that
    /// did not exit cleanly) is removed. A live socket, a regular file, a directory, a symlink or
    /// anything else makes it refuse, leaving the path untouched.
    package static func listen(at path: String, mode: mode_t = 0o660, group: gid_t? = nil,
                               backlog: Int32 = 1024) throws(SystemError) -> Int32 {
        try removeStaleSocket(at: path)
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
        // Sockets are created 0777 & ~umask (0700 under our umask of 0077): now widen to the
        // configured mode, and hand the group its access.
        if let group, chown(path, uid_t.max, group) != 0 {
            let error = SystemError("chown", detail: "\(path) to group \(group)")
            close(fd)
            unlink(path)
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

    /// What `listen` does before binding: removes `path` only when it is a dead socket.
    package static func removeStaleSocket(at path: String) throws(SystemError) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw SystemError("lstat", detail: path)
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SystemError("bind", errno: EEXIST,
                              detail: "\(path): there is \(kind(of: status.st_mode)) there, not a socket; "
                + "userlistd removes only a socket nobody answers on, and left it untouched. "
                + "Move it away or choose another path with --socket")
        }
        do {
            let fd = try connect(to: path)
            close(fd)
        } catch where error.errno == ECONNREFUSED {
            // Stale: left by a daemon that did not exit cleanly.
            guard unlink(path) == 0 else {
                throw SystemError("unlink",
                                  detail: "\(path): cannot remove the stale socket; "
                                    + "remove it by hand or choose another --socket")
            }
            return
        } catch {
            throw SystemError("bind", errno: error.errno,
                              detail: "\(path): a socket is there but could not be probed (\(error)); "
                + "userlistd left it untouched. Remove it by hand if no daemon uses it, or choose another --socket")
        }
        throw SystemError("bind", errno: EADDRINUSE, detail: "\(path): another userlistd is already answering there")
    }

    /// "a regular file", "a directory"... for error messages.
    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a named pipe"
        case S_IFCHR, S_IFBLK: "a device"
        default: "something"
        }
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
