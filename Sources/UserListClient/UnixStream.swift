import Glibc

/// A connected, blocking `AF_UNIX` stream socket. Owns its descriptor: `close()` once.
///
/// Reads happen on one thread (the client's reader); writes may come from any thread and are
/// serialized by the caller. `shutdown()` may be called from any thread to wake a blocked read.
struct UnixStream: Sendable {
    let fd: Int32

    /// Connects to `path`; throws `.unreachable` with the errno text on failure.
    static func connect(path: String) throws(ClientError) -> UnixStream {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw ClientError(.unreachable,
                              "socket path is too long (\(bytes.count) bytes, at most \(capacity - 1)): \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError(.unreachable, "socket(): \(String(cString: strerror(errno)))") }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            if code == EACCES {
                throw ClientError(.unreachable, "cannot connect to \(path): \(SocketAccessHint.text(for: path))")
            }
            let why = notASocket(path) ?? String(cString: strerror(code)) + nobodyListening(code)
            throw ClientError(.unreachable, "cannot connect to \(path): \(why)")
        }
        return UnixStream(fd: fd)
    }

    /// A hint when no daemon listens at the path (nothing there, or a socket left by one that
    /// stopped), the usual reason: the daemon is not running.
    static func nobodyListening(_ code: Int32) -> String {
        code == ENOENT || code == ECONNREFUSED ? " (is userlistd running? systemctl start userlistd.socket)" : ""
    }

    /// "it is a regular file, not a socket" when something other than a socket is at `path`
    /// (connect(2) says only "Connection refused" for a file), else `nil`.
    static func notASocket(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: return nil
        case S_IFREG: kind = "a regular file"
        case S_IFDIR: kind = "a directory"
        case S_IFLNK: kind = "a symbolic link"
        case S_IFIFO: kind = "a named pipe"
        default: kind = "a device or other special file"
        }
        return "it is \(kind), not a socket"
    }

    /// Sets (or with `nil` clears) the receive timeout, used while waiting for the handshake.
    func setReceiveTimeout(_ duration: Duration?) {
        var tv = timeval()
        if let duration {
            let (seconds, attoseconds) = duration.components
            tv.tv_sec = Int(seconds)
            tv.tv_usec = Int(attoseconds / 1_000_000_000_000)
        }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    enum ReadResult {
        case bytes(Int)
        case endOfStream
        case timedOut
        case failed(Int32)
    }

    func read(into buffer: inout [UInt8]) -> ReadResult {
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 { return .bytes(count) }
            if count == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .timedOut
            case let code: return .failed(code)
            }
        }
    }

    /// Writes all of `bytes`; `false` if the peer is gone. Never raises SIGPIPE.
    func writeAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// The pid of the process listening on the other end (`SO_PEERCRED`: the process that
    /// called listen()), nil when the kernel does not say.
    var peerPID: Int32? {
        // struct ucred (pid, uid, gid): Glibc's module leaves it out (it needs _GNU_SOURCE).
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        let result = withUnsafeMutablePointer(to: &credentials) {
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, $0, &length)
        }
        guard result == 0, credentials.pid > 0 else { return nil }
        return credentials.pid
    }

    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    func close() { _ = Glibc.close(fd) }
}

extension UnixStream {
    /// Whether something accepts connections at `path` right now (connects and hangs up).
    static func answers(path: String) -> Bool {
        guard let stream = try? connect(path: path) else { return false }
        stream.close()
        return true
    }
}
