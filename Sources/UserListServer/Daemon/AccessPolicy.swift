import Glibc

/// Who may write: root, the daemon's own user (a per-user daemon serves its owner), and members
/// of the admin group. Everyone else gets read-only sessions.
package struct AccessPolicy: Sendable {
    package let adminGroup: String
    package let ownUID: UInt32

    package init(adminGroup: String, ownUID: UInt32 = getuid()) {
        self.adminGroup = adminGroup
        self.ownUID = ownUID
    }

    package func canWrite(uid: UInt32) -> Bool {
        if uid == 0 || uid == ownUID { return true }
        guard let group = getgrnam(adminGroup) else { return false }
        let gid = group.pointee.gr_gid
        guard let user = getpwuid(uid) else { return false }
        if user.pointee.pw_gid == gid { return true }
        let name = String(cString: user.pointee.pw_name)
        var member = group.pointee.gr_mem
        while let entry = member?.pointee {
            if String(cString: entry) == name { return true }
            member = member?.advanced(by: 1)
        }
        return false
    }
}
