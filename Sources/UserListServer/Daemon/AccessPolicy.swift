import Glibc
import ThreadLocks

/// Who may write: root (uid 0, always), the daemon's own user (a per-user daemon serves its
/// owner), and members of the admin group. Everyone else gets read-only sessions.
///
/// Asked on every write intent (`canWrite(uid:)`), so a change takes effect without a restart:
/// - group membership is looked up with `getpwuid_r` and `getgrouplist(3)` (reentrant, primary
///   and supplementary groups alike), never while holding a lock, and cached per uid for
///   `cachePeriod` (5 s): removing someone from the group takes effect within that period;
/// - `reload(adminGroup:)` (SIGHUP) switches the group and forgets the cache at once.
package final class AccessPolicy: Sendable {
    /// How the policy learns whether `uid` is in the group named `group` (injectable for tests).
    package typealias MembershipLookup = @Sendable (_ uid: UInt32, _ group: String) -> Bool

    private struct Cached {
        let group: String
        let allowed: Bool
        let expires: ContinuousClock.Instant
    }

    private struct State {
        var adminGroup: String
        var cache: [UInt32: Cached] = [:]
    }

    package let ownUID: UInt32
    package let cachePeriod: Duration
    private let state: Lock<State>
    private let now: @Sendable () -> ContinuousClock.Instant
    private let isMember: MembershipLookup
    /// Entries kept at most; past it the cache starts over (a lookup is cheap, memory is not).
    private static let maximumCachedUIDs = 4096

    package init(adminGroup: String, ownUID: UInt32 = getuid(), cachePeriod: Duration = .seconds(5),
                 now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
                 isMember: @escaping MembershipLookup = { GroupMembership.isMember(uid: $0, of: $1) }) {
        self.ownUID = ownUID
        self.cachePeriod = cachePeriod
        self.state = Lock(State(adminGroup: adminGroup))
        self.now = now
        self.isMember = isMember
        Self.groupInForce.withLock { $0 = adminGroup }
    }

    /// The admin group in force now.
    package var adminGroup: String { state.withLock { $0.adminGroup } }

    /// Whether `uid` may write at this moment.
    package func canWrite(uid: UInt32) -> Bool {
        if uid == 0 || uid == ownUID { return true }
        let instant = now()
        let (group, cached) = state.withLock { ($0.adminGroup, $0.cache[uid]) }
        if let cached, cached.group == group, cached.expires > instant { return cached.allowed }
        let allowed = isMember(uid, group)  // may ask NSS (files, LDAP...): outside the lock
        state.withLock { state in
            guard state.adminGroup == group else { return }  // reloaded meanwhile: do not cache
            if state.cache.count >= Self.maximumCachedUIDs { state.cache.removeAll(keepingCapacity: true) }
            state.cache[uid] = Cached(group: group, allowed: allowed, expires: instant + cachePeriod)
        }
        return allowed
    }

    /// SIGHUP: the configured admin group may have changed, and memberships with it.
    package func reload(adminGroup: String) {
        state.withLock { state in
            state.adminGroup = adminGroup
            state.cache.removeAll()
        }
        Self.groupInForce.withLock { $0 = adminGroup }
    }

    /// The admin group of the daemon's policy, for the words of a refusal (`refusal`): a session
    /// sees only its `canWrite`. One daemon per process has one policy; tests that make several
    /// read the last one made.
    private static let groupInForce = Lock("userlistd")  // the default `admin-group`

    /// What a read-only session is told when `action` would write: the action in a person's
    /// words (not the intent's name), the group that may write, and how to join it.
    package static func refusal(action: String, uid: UInt32) -> String {
        let group = groupInForce.withLock { $0 }
        let who = GroupMembership.user(uid)?.name ?? "uid \(uid)"
        return "This session is read-only: \(words(for: action)) needs root or membership of the group '\(group)'. "
            + "Ask an admin: usermod -aG \(group) \(who) (it takes effect within seconds, no new login needed)."
    }

    /// "renaming a user" for `rename_user`: what a write intent does, as a person says it.
    static func words(for action: String) -> String {
        switch action {
        case "rename_user": "renaming a user"
        case "add_user", "add": "adding a user"
        case "remove_user", "remove": "removing a user"
        case "save": "saving a user"
        case "revert": "undoing a change"
        case "import_users", "import_begin", "import_commit", "import_abort": "importing users"
        default: "changing users"
        }
    }
}

/// Reentrant lookups in the user and group databases.
package enum GroupMembership {
    /// Whether `uid`'s primary or supplementary groups include `group`. Unknown users and
    /// unknown groups are not members.
    package static func isMember(uid: UInt32, of group: String) -> Bool {
        guard let gid = groupID(named: group), let (name, primary) = user(uid) else { return false }
        if primary == gid { return true }
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            var found = count
            if getgrouplist(name, primary, &groups, &found) >= 0 {
                return groups.prefix(Int(found)).contains(gid)
            }
            guard found > count, count < 65_536 else { return false }
            count = found
        }
    }

    /// The gid of the group called `name` (getgrnam_r), or nil when there is none.
    package static func groupID(named name: String) -> gid_t? {
        var size = max(1024, Int(sysconf(Int32(_SC_GETGR_R_SIZE_MAX))))
        while size <= 1 << 22 {
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: size)
            let rc = getgrnam_r(name, &entry, &buffer, size, &result)
            if rc == ERANGE { size *= 4; continue }
            guard rc == 0, result != nil else { return nil }
            return entry.gr_gid
        }
        return nil
    }

    /// The login name and primary gid of `uid` (getpwuid_r), or nil when there is none.
    package static func user(_ uid: UInt32) -> (name: String, gid: gid_t)? {
        var size = max(1024, Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))))
        while size <= 1 << 22 {
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: size)
            let rc = getpwuid_r(uid, &entry, &buffer, size, &result)
            if rc == ERANGE { size *= 4; continue }
            guard rc == 0, result != nil, let name = entry.pw_name else { return nil }
            return (String(cString: name), entry.pw_gid)
        }
        return nil
    }
}

extension GroupMembership {
    /// The gid for the `socket-group` setting (nil: none set), or an error naming the group.
    package static func socketGroup(_ name: String?) throws(SystemError) -> gid_t? {
        guard let name else { return nil }
        guard let gid = groupID(named: name) else {
            throw SystemError("getgrnam", errno: ENOENT,
                              detail: "socket-group '\(name)': no such group; create it or change the setting")
        }
        return gid
    }
}
