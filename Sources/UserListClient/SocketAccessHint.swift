import Glibc

/// Why a connection to the daemon's socket was refused with EACCES, said the way an operator
/// fixes it: which group the socket (or a directory on the way to it) lets in, and how to join.
/// connect(2) says only "Permission denied".
enum SocketAccessHint {
    static func text(for path: String) -> String {
        let me = userName(getuid()) ?? "uid \(getuid())"
        var info = stat()
        guard stat(path, &info) == 0 else {
            // A directory on the way is closed to us: name the first one we cannot search.
            if let closed = closedDirectory(on: path), stat(closed, &info) == 0 {
                return "permission denied: the directory \(closed) is closed to you (\(owners(info)))"
                    + joinHint(info, me)
            }
            return "permission denied"
        }
        return "permission denied: the socket is \(owners(info))" + joinHint(info, me)
    }

    /// "owned by root, group userlistd, mode 0660".
    static func owners(_ info: stat) -> String {
        let owner = userName(info.st_uid) ?? "uid \(info.st_uid)"
        let group = groupName(info.st_gid) ?? "gid \(info.st_gid)"
        return "owned by \(owner), group \(group), mode 0\(String(info.st_mode & 0o777, radix: 8))"
    }

    /// How to get in: join the group when the group may connect (or search), else who decides.
    static func joinHint(_ info: stat, _ me: String) -> String {
        let groupBit: mode_t = info.st_mode & S_IFMT == S_IFDIR ? 0o010 : 0o020  // search a directory, write a socket
        let groupMayEnter = info.st_mode & groupBit != 0
        guard groupMayEnter, let group = groupName(info.st_gid), info.st_gid != 0 else {
            return "; only its owner may use it: use a daemon meant for you ('userctl --help' says where userctl "
                + "looks), or ask an admin to open it to a group (socket-group and socket-mode 0660 in userlistd.conf)"
        }
        return "; members of the group '\(group)' may connect. Ask an admin: usermod -aG \(group) \(me) "
            + "(then log in again, or run: newgrp \(group))"
    }

    /// The first directory above `path` that this process cannot search, if any.
    static func closedDirectory(on path: String) -> String? {
        var prefix = ""
        for part in path.split(separator: "/").dropLast() {
            prefix += "/" + part
            if access(prefix, X_OK) != 0 { return prefix }
        }
        return nil
    }

    static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name
        else { return nil }
        return String(cString: name)
    }

    static func groupName(_ gid: gid_t) -> String? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getgrgid_r(gid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.gr_name
        else { return nil }
        return String(cString: name)
    }
}
