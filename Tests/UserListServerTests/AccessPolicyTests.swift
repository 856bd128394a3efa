import Foundation
import Glibc
import Synchronization
import Testing
@testable import UserListServer
import ThreadLocks

/// Write access follows the current group membership and configuration, within the cache period.
@Suite struct AccessPolicyTests {
    /// A group database and a clock the test controls.
    final class World: Sendable {
        let members = Lock<[String: Set<UInt32>]>([:])
        let lookups = Atomic<Int>(0)
        let clock = Lock(ContinuousClock.now)

        func advance(_ duration: Duration) { clock.withLock { $0 = $0 + duration } }

        func policy(adminGroup: String) -> AccessPolicy {
            AccessPolicy(adminGroup: adminGroup, ownUID: 4242, cachePeriod: .seconds(5),
                         now: { self.clock.withLock { $0 } },
                         isMember: { uid, group in
                             self.lookups.add(1, ordering: .relaxed)
                             return self.members.withLock { $0[group]?.contains(uid) ?? false }
                         })
        }
    }

    @Test func removingAMemberTakesEffectWithinTheCachePeriod() {
        let world = World()
        world.members.withLock { $0["admins"] = [1000] }
        let policy = world.policy(adminGroup: "admins")
        #expect(policy.canWrite(uid: 1000))
        #expect(!policy.canWrite(uid: 1001))

        world.members.withLock { $0["admins"] = [] }
        world.advance(.seconds(2))
        #expect(policy.canWrite(uid: 1000), "still cached two seconds later")
        world.advance(.seconds(4))
        #expect(!policy.canWrite(uid: 1000), "past the 5 s cache period the removal is seen")
    }

    @Test func aReloadSwitchesTheAdminGroupAtOnce() {
        let world = World()
        world.members.withLock { $0 = ["admins": [1000], "operators": [1001]] }
        let policy = world.policy(adminGroup: "admins")
        #expect(policy.canWrite(uid: 1000))
        #expect(!policy.canWrite(uid: 1001))

        policy.reload(adminGroup: "operators")
        #expect(policy.adminGroup == "operators")
        #expect(!policy.canWrite(uid: 1000), "no cache period after a reload")
        #expect(policy.canWrite(uid: 1001))
    }

    @Test func rootAndTheDaemonsOwnUserAlwaysWriteWithoutALookup() {
        let world = World()
        let policy = world.policy(adminGroup: "nobody-is-in-this-group")
        #expect(policy.canWrite(uid: 0))
        #expect(policy.canWrite(uid: 4242))
        #expect(world.lookups.load(ordering: .relaxed) == 0)
    }

    @Test func membershipIsCachedBriefly() {
        let world = World()
        world.members.withLock { $0["admins"] = [1000] }
        let policy = world.policy(adminGroup: "admins")
        for _ in 0..<100 { _ = policy.canWrite(uid: 1000) }
        #expect(world.lookups.load(ordering: .relaxed) == 1)
    }

    @Test func theSystemGroupDatabaseIsReadReentrantly() {
        // root's primary group is root; nobody is not in it; unknown names are nobody's.
        #expect(GroupMembership.isMember(uid: 0, of: "root"))
        #expect(GroupMembership.groupID(named: "root") == 0)
        #expect(GroupMembership.groupID(named: "no-such-group-\(UUID().uuidString.prefix(8))") == nil)
        if let nobody = getpwnam("nobody")?.pointee.pw_uid {
            #expect(!GroupMembership.isMember(uid: nobody, of: "root"))
        }
        #expect(!GroupMembership.isMember(uid: 0, of: "no-such-group"))
        #expect(GroupMembership.user(UInt32.max - 7) == nil)
    }
}
