import Foundation
import Glibc

/// The directory that holds this user's own daemon socket, made safe before userctl connects to
/// anything in it or starts a daemon there.
///
/// `$XDG_RUNTIME_DIR` when set (systemd-logind makes it 0700 and the user's own); otherwise
/// `/tmp/userlistd-$UID`, a predictable name in a world-writable directory that another local
/// user could create first. So the directory is created with `mkdir(2)` mode 0700 (which never
/// follows a symlink at its last component) and then checked with `lstat(2)`: it must be a real
/// directory (not a symlink), owned by this user, with no access for group or others. Anything
/// else is refused with what is wrong and how to fix it; userctl never connects there.
struct RuntimeDirectory {
    let path: String
    /// Whether the path came from `$XDG_RUNTIME_DIR` (the fix for a bad fallback is to set it).
    let fromEnvironment: Bool

    static func forUser(environment: [String: String], uid: uid_t) -> RuntimeDirectory {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return RuntimeDirectory(path: runtime, fromEnvironment: true)
        }
        return RuntimeDirectory(path: "/tmp/userlistd-\(uid)", fromEnvironment: false)
    }

    /// Creates the directory when missing (0700), then checks it; throws a failure that says
    /// what is wrong and how to fix it.
    func prepare(uid: uid_t, create: Bool) throws(CommandFailure) {
        if create, fromEnvironment, !exists {
            throw CommandFailure(.unavailable, "XDG_RUNTIME_DIR is \(path), which does not exist; userctl does not "
                                 + "create it. Fix: unset XDG_RUNTIME_DIR, or create it (mkdir -m 700 \(path)), "
                                 + "or pass --socket PATH")
        }
        if create, !fromEnvironment {
            let previous = umask(0o077)
            let made = mkdir(path, 0o700)
            let code = errno
            umask(previous)
            if made != 0 && code != EEXIST {
                throw CommandFailure(.unavailable, "cannot create \(path): \(String(cString: strerror(code))); \(fix)")
            }
        }
        try check(uid: uid)
    }

    /// Checks the directory; a missing one passes (there is nothing in it to connect to).
    func check(uid: uid_t) throws(CommandFailure) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw CommandFailure(.unavailable, "cannot inspect \(path): \(String(cString: strerror(code))); \(fix)")
        }
        let kind = info.st_mode & S_IFMT
        if kind == S_IFLNK {
            throw CommandFailure(.unavailable, "\(path) is a symbolic link, so someone else may control where it "
                                 + "leads; userctl will not use it. \(removeAdvice)")
        }
        guard kind == S_IFDIR else {
            throw CommandFailure(.unavailable, "\(path) is not a directory; userctl will not use it. \(removeAdvice)")
        }
        guard info.st_uid == uid else {
            throw CommandFailure(.unavailable, "\(path) belongs to \(Self.userName(info.st_uid)), not to you "
                                 + "(uid \(uid)): another user could read what you send or pose as your daemon, "
                                 + "so userctl will not use it. \(removeAdvice)")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw CommandFailure(.unavailable, "\(path) has mode \(String(mode, radix: 8)), so other users can reach "
                                 + "it; it must be 700. Fix: chmod 700 \(path)")
        }
    }

    var exists: Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private var fix: String {
        fromEnvironment ? "check XDG_RUNTIME_DIR (\(path))"
            : "set XDG_RUNTIME_DIR to a private directory, or pass --socket PATH"
    }

    private var removeAdvice: String {
        fromEnvironment
            ? "Fix: point XDG_RUNTIME_DIR at a directory of your own with mode 700."
            : "Fix: have it removed (by its owner or root: rm -r \(path)) and run userctl again, or set "
                + "XDG_RUNTIME_DIR to a private directory."
    }

    static func userName(_ uid: uid_t) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        if getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let result, let name = result.pointee.pw_name {
            return "uid \(uid) (\(String(cString: name)))"
        }
        return "uid \(uid)"
    }
}
