import UserListPresentation
import UserListWire

/// The loop's shared views (`ListAudience`): after its sessions have followed a change, each
/// audience takes it once for all its members, and the sessions that followed it the shared
/// way take seats.
///
/// An audience takes a change only if each member would have computed it alike with no other
/// effect: one change at a time, an outcome recorded by a list in the audience's state that
/// cut no rows, no row added (an add can cut a list back to its loaded rows, which moves its
/// cursor), no move to another page or search (the session journal records those), a patch
/// that fits in a frame. Any other change dissolves the audience: every member settles and
/// follows the change on its own, as every session did before audiences.
extension LoopChangeFeed {
    /// At most this many shared views a loop; sessions showing other lists follow on their own.
    static let audienceLimit = 8

    func advanceAudiences(through delivery: ChangeBroadcaster.Delivery, memo: ChangeMemo, joining: inout [Session]) {
        for audience in audiences.value where !advance(audience, through: delivery, memo: memo) {
            dissolve(audience, applying: (delivery, memo), joining: &joining)
        }
        audiences.value.removeAll { $0.isEmpty }
    }

    /// Settles every member of every audience, which then follow changes on their own.
    func dissolveAudiences() {
        var none: [Session] = []
        for audience in audiences.value { dissolve(audience, applying: nil, joining: &none) }
        audiences.value.removeAll()
    }

    /// Seats the sessions that followed the change just applied the shared way, each in the
    /// audience showing its list (a new one if there is room).
    func seat(_ joining: [Session]) {
        for session in joining {
            session.assumeIsolated { session in
                guard let state = session.sharedListState else { return }
                if let audience = audiences.value.first(where: { SharedListOutcomes.isSameValue($0.state, state) }) {
                    _ = session.takeSeat(in: audience)
                } else if audiences.value.count < Self.audienceLimit {
                    let audience = ListAudience(showing: state, on: loop)
                    if session.takeSeat(in: audience) { audiences.value.append(audience) }
                }
            }
        }
    }

    /// Takes `delivery` for every member of `audience`; false when it must be dissolved.
    private func advance(_ audience: ListAudience, through delivery: ChangeBroadcaster.Delivery, memo: ChangeMemo) -> Bool {
        guard let event = delivery.eventFrame else { return false }
        let before = audience.state
        var outcome = memo.lists.uncutOutcome(from: before, markingStale: true)
        if outcome == nil {
            // No session outside the audience shows its list: one member leaves it and computes
            // the change, for the others to take.
            guard let leader = audience.members().first else { return true }  // nobody left to follow it
            leader.assumeIsolated { leader in
                leader.settle()
                leader.apply([delivery], memos: [memo])
            }
            outcome = memo.lists.uncutOutcome(from: before, markingStale: true)
        }
        guard let after = outcome, after.users.count <= before.users.count,
              !SessionJournal.restoreChanged(fromList: before, toList: after)
        else { return false }
        let operations = memo.patches.operations(fromList: before, toList: after)
        guard ListAudience.fits(operations) else { return false }
        audience.advance(to: after, operations: operations, event: OutgoingFrame(event), encoder: encoder)
        return true
    }

    /// Settles every member of `audience`; with `applying`, each then follows that change (the
    /// one the audience could not take), and those that followed it the shared way join again.
    private func dissolve(_ audience: ListAudience, applying change: (ChangeBroadcaster.Delivery, ChangeMemo)?,
                          joining: inout [Session]) {
        for member in audience.members() {
            let shared = member.assumeIsolated { member -> Bool in
                member.settle()
                guard let (delivery, memo) = change else { return false }
                return member.apply([delivery], memos: [memo])
            }
            if shared { joining.append(member) }
        }
    }
}
