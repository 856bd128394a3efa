import Glibc

/// The directory the daemon's own socket lives in, checked before the socket is made there.
///
/// A predictable directory such as `/tmp/userlistd-<uid>` can be created first by another local
/// user, who then sees (or swaps) every socket put in it. So, with `lstat` and never following a
/// symlink at a predictable path:
/// - a missing directory is created by us, mode 0700 (0755 for root's `/run/userlistd`, whose
///   socket the admin group must reach), and checked again after creation (a racing creator loses);
/// - the per-user fallback (`DaemonConfig.fallbackRuntimeDirectory`) must be a real directory,
///   owned by us, mode exactly 0700;
/// - any other existing directory (`$XDG_RUNTIME_DIR`, `--socket /some/dir/…`) must be owned by
///   us or root, and writable by no one else unless it is sticky like `/tmp`; a symlink to it is
///   followed only when root or we own the link.
/// On any doubt the daemon refuses to start, saying what is wrong and how to fix it.
package enum RuntimeDirectory {
    /// Makes sure the parent directory of `socketPath` exists and is safe to listen in.
    package static func prepare(forSocket socketPath: String, uid: uid_t = geteuid(),
                                fallback: String? = nil) throws(SystemError) {
        let directory = parent(of: socketPath)
        guard !directory.isEmpty, directory != "/" else { return }
        let fallback = fallback ?? DaemonConfig.fallbackRuntimeDirectory(uid: uid)
        var status = stat()
        var created = false
        if lstat(directory, &status) != 0 {
            guard errno == ENOENT else { throw SystemError("lstat", detail: directory) }
            try makeDirectories(directory, uid: uid)
            created = true
            guard lstat(directory, &status) == 0 else { throw SystemError("lstat", detail: directory) }
        }
        if directory == fallback || created {
            try checkPrivate(directory, status, uid: uid, exactMode: directory == fallback)
        } else {
            try checkTrusted(directory, status, uid: uid)
        }
    }

    /// `mkdir -p`, each missing component mode 0700 (umask 0077 applies too), the last one
    /// 0755 when root makes it so the socket's group can reach the socket.
    private static func makeDirectories(_ directory: String, uid: uid_t) throws(SystemError) {
        let above = parent(of: directory)
        if !above.isEmpty, above != "/", access(above, F_OK) != 0 {
            try makeDirectories(above, uid: uid)
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw SystemError("mkdir", detail: "\(directory): cannot create the socket's directory")
        }
        if uid == 0 {
            var status = stat()
            if lstat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == 0 {
                chmod(directory, 0o755)
            }
        }
    }

    private static func checkPrivate(_ directory: String, _ status: stat, uid: uid_t,
                                     exactMode: Bool) throws(SystemError) {
        let fix = "Remove it (as its owner or root), or set XDG_RUNTIME_DIR or --socket to a directory of your own"
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw SystemError("lstat", errno: ENOTDIR,
                              detail: "\(directory): it is \(UnixSocket.kind(of: status.st_mode)), not a directory; "
                + "userlistd does not follow links at predictable paths. \(fix)")
        }
        guard status.st_uid == uid else {
            throw SystemError("lstat", errno: EPERM,
                              detail: "\(directory) belongs to uid \(status.st_uid), not to this user (uid \(uid)): "
                + "another user may be waiting for this daemon's clients there. \(fix)")
        }
        let mode = status.st_mode & 0o7777
        let allowed: Bool = exactMode ? mode == 0o700 : mode & 0o022 == 0
        guard allowed else {
            throw SystemError("lstat", errno: EPERM,
                              detail: "\(directory) has mode \(octal(mode)); it must be 0700 (yours alone). "
                + "Run: chmod 700 \(directory)")
        }
    }

    private static func checkTrusted(_ directory: String, _ linkStatus: stat, uid: uid_t) throws(SystemError) {
        var status = linkStatus
        if linkStatus.st_mode & S_IFMT == S_IFLNK {
            guard linkStatus.st_uid == uid || linkStatus.st_uid == 0 else {
                throw SystemError("lstat", errno: EPERM,
                                  detail: "\(directory) is a symbolic link owned by uid \(linkStatus.st_uid): "
                    + "userlistd follows only links that root or this user made. Remove it, or choose another --socket")
            }
            guard stat(directory, &status) == 0 else { throw SystemError("stat", detail: directory) }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw SystemError("stat", errno: ENOTDIR,
                              detail: "\(directory) is not a directory; choose another --socket")
        }
        guard status.st_uid == uid || status.st_uid == 0 else {
            throw SystemError("stat", errno: EPERM,
                              detail: "\(directory) belongs to uid \(status.st_uid), "
                + "neither root nor this user (uid \(uid)): "
                + "its owner could replace the socket. Put the socket in a directory of your own (--socket)")
        }
        let mode = status.st_mode & 0o7777
        guard mode & 0o022 == 0 || mode & mode_t(S_ISVTX) != 0 else {
            throw SystemError("stat", errno: EPERM,
                              detail: "\(directory) has mode \(octal(mode)): "
                + "others may write there and replace the socket. "
                + "Run: chmod go-w \(directory), or choose another --socket")
        }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        let head = String(path[..<slash])
        return head.isEmpty ? "/" : head
    }

    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
