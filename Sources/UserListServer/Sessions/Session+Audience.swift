import UserListPresentation

/// A session's seat in a shared view (`ListAudience`): taken by the loop's feed after a change
/// the session followed the shared way, given up at the first touch of anything else.
extension Session {
    /// Takes a seat in `audience`, whose state this session's list shows, if nothing but
    /// changes would reach it there: it runs, shows only its list, is in step with every
    /// client and waits for nothing (the feed asks right after `followShared` succeeded).
    func takeSeat(in audience: ListAudience) -> Bool {
        guard let sentList = sharedListState, case .running = phase, !loadingFirstPage, heldReplies.isEmpty, !flushScheduled,
              pendingEvents.isEmpty, writesInFlight.isEmpty, published == nil,
              storedNavigator.screens.count == 1, case .list(let list) = storedNavigator.screens[0],
              SharedListOutcomes.isSameValue(sentList, audience.state), SharedListOutcomes.isSameValue(list.state, audience.state),
              storedClients.values.allSatisfy({ !$0.awaitingSnapshot })
        else { return false }
        let streams = storedClients.values.map { ListAudience.Stream(client: $0.client, epoch: $0.epoch, seq: $0.seq) }
        seat = audience.seat(self, streams: streams)
        changes.feed(for: loop).unfollow(self)
        return true
    }

    /// Takes back, from the audience it sits in, the state its list reached there and its
    /// clients' sequence numbers, and follows changes on its own again. Called before any read
    /// of `sent`, `clients` or `navigator`; nothing when it has no seat.
    func settle() {
        guard let seat else { return }
        self.seat = nil
        let (state, streams) = seat.audience.leave(seat)
        if storedNavigator.screens.count == 1, case .list(let list) = storedNavigator.screens[0], !list.catchUp(to: state) {
            // Not reachable by the audience's rules; if it were, the next flush sends the
            // clients the difference from what they hold to what the list shows.
            logger.error("A session's list could not take its shared view's state", ["USERLISTD_SESSION": id])
        }
        storedSent = NavigationState(screens: [.list(state)])
        for stream in streams {
            storedClients[ObjectIdentifier(stream.client)]?.seq = stream.seq
        }
        changes.feed(for: loop).follow(self)
    }
}

extension Session {
    /// The list state its clients hold, when it shows nothing but its list (unsettled: the
    /// feed asks sessions that just followed a change).
    var sharedListState: UserListState? {
        guard seat == nil, let sentState = storedSent, sentState.screens.count == 1,
              case .list(let list) = sentState.screens[0] else { return nil }
        return list
    }
}
