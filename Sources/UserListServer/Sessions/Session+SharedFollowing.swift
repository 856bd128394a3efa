import UserListPresentation
import UserListWire

/// The fan-out's common case, kept short: most sessions of a loop show nothing but the list's
/// first page, are in step with their clients and wait for nothing, and another session on the
/// loop has already computed the change for a list in the same state (`ChangeMemo`). Such a
/// session takes the recorded outcome and the recorded patch, and its clients get the patch and
/// the broadcaster's `changed` event. It sends exactly what the general path (`apply`, then
/// `flush`) would, without walking the screens, their callbacks and a full diff. Such a session
/// is then offered a seat in the loop's shared view for its list (`ListAudience`).
extension Session {
    /// Applies `delivery` this way if it can; false when the general path must (the session
    /// shows more than the list, has something pending, made the change, or no outcome is
    /// recorded for its list yet: it then computes and records one for the others).
    func followShared(_ delivery: ChangeBroadcaster.Delivery, memo: ChangeMemo) -> Bool {
        guard case .running = phase, !handlingIntent, !flushScheduled, pendingEvents.isEmpty, writesInFlight.isEmpty,
              let event = delivery.eventFrame,
              published == nil, presence.patchIsEmpty(fromPresent: presentSent),
              let sentState = sent, sentState.screens.count == 1, case .list(let sentList) = sentState.screens[0],
              navigator.screens.count == 1, case .list(let list) = navigator.screens[0],
              SharedListOutcomes.isSameValue(sentList, list.state),
              let after = list.adoptSharedOutcome(markingStale: true, from: memo.lists)
        else { return false }
        let ops = memo.patches.operations(fromList: sentList, toList: after)
        let now = NavigationState(screens: [.list(after)])
        sent = now
        if !ops.isEmpty, let journal, SessionJournal.restoreChanged(fromList: sentList, toList: after) {
            journal.record(key: key, id: id, state: now)
        }
        send(patch: ops, events: [OutgoingFrame(event)])
        return true
    }
}
