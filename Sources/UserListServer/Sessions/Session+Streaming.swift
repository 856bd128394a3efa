import UserListDomain
import UserListPresentation
import UserListWire
import ThreadLocks

/// Streaming a session's state: its screens start, follow changes, and after each change
/// every client in step gets one patch and the events that describe it.
extension Session {
    func startIfNeeded() {
        guard let start = mode.start() else { return }
        if let saved = start.restoring {
            navigator = Navigator(restoring: saved.state, listWindow: saved.listWindow, useCases: useCases)
        } else {
            let load = navigator.list.onAppear()
            Task {
                _ = await load.value
                self.firstLoadFinished()
            }
        }
        navigator.onStateChange = { [unowned self] in self.stateChanged() }
        navigator.onEvent = { [unowned self] event in self.forward(event) }
        changes.feed(for: loop).follow(self)
        startPresence()
        sent = navigator.state
        // Later, `sendChanges` and `publishPresence` keep them.
        let state = navigator.state
        activity.withLock { ($0.screens, $0.open) = (state.screens.count, Self.openUser(in: state)) }
    }

    /// Its owner ended it (the registry dropped it): its loop stops applying changes to it, so
    /// it ends as soon as nothing else holds it.
    package nonisolated func stopFollowingChanges() {
        changes.feed(for: loop).forget(self)
    }

    /// Changes committed anywhere, as many as its loop queued since the last batch (called by
    /// `LoopChangeFeed` on this session's loop): every screen follows them, then each client
    /// gets one patch and the `changed` events together, in one write (an import's thousands of
    /// changes become a few patches, not thousands). `memos`: one per delivery, shared with the
    /// loop's other sessions.
    func apply(_ batch: [ChangeBroadcaster.Delivery], memos: [ChangeMemo]) {
        let before = mode.begin(.applyingChanges)
        for (delivery, memo) in zip(batch, memos) {
            let own = isOwnChange(delivery)
            let known = memo.lists.step(for: navigator.list, markingStale: !own)
            if let computed = navigator.apply(delivery.change, madeHere: own, replaying: known,
                                              announcing: false) { memo.lists.record(computed) }
            guard !own else { continue }
            // Announced with the frame the broadcaster encoded once for every session.
            if let frame = delivery.eventFrame { pendingEvents.append(frame) }
            if case .resync = delivery.change { announceReload() }  // an import, say: see Session+ReloadEvent
        }
        mode.end(returningTo: before)
        flush(sharing: batch.count == 1 ? memos[0].patches : nil)
    }

    /// Coalesces the several changes one completion can make into one patch. An intent's own
    /// changes are flushed by `handle` itself.
    func stateChanged() {
        guard mode.scheduleFlush() else { return }
        Task { self.flushScheduledChanges() }
    }

    func flushScheduledChanges() {
        mode.scheduledFlushRuns()
        flush()
    }

    /// Diffs and sends one patch to every client that is in step, followed by the events that
    /// describe the new state.
    ///
    /// `sharing`: the patches other sessions serialized for the change just applied; a session
    /// that showed and now shows the same list as one of them sends the same bytes.
    package func flush(sharing patches: SharedPatches? = nil) {
        guard mode.isRunning else { return }  // nothing started, or nothing more to send
        let current = navigator.state
        publishPresence(current, shown: !clients.isEmpty)
        sendChanges(current, sharing: patches)
    }

    /// The diff from `sent` to `current` (the screens' state), with presence, to every client
    /// in step, and the events waiting (`flush` without its checks: also the last patch of a
    /// hand-over).
    func sendChanges(_ current: NavigationState, sharing patches: SharedPatches? = nil) {
        let previous = sent
        var serializedOps: [UInt8] = []
        var restoreChanged = true
        if let previous {
            if let shared = patches?.outcome(from: previous, to: current) {
                serializedOps = shared.serializedOperations
                restoreChanged = shared.restoreChanged
            } else {
                serializedOps = StateDiff.serializedOps(from: previous, to: current)
                restoreChanged = SessionJournal.restoreChanged(from: previous, to: current)
                patches?.record(from: previous, to: current, .init(serializedOperations: serializedOps,
                                                                    restoreChanged: restoreChanged))
            }
            serializedOps = appendingPresenceOps(to: serializedOps, from: previous, to: current)
        }
        sent = current
        let events = pendingEvents
        pendingEvents.removeAll()
        let changed = !serializedOps.isEmpty
        guard changed || !events.isEmpty else { return }
        if changed {
            if current.screens.count != previous?.screens.count {  // a following list's patch changes no count
                activity.withLock { $0.screens = current.screens.count }
            }
            // Handed over, written off this path; a list merely following others' saves is not
            // worth a hand-over (a restore reloads the rows anyway).
            if let journal, restoreChanged {
                journal.record(key: key, id: id, state: current, client: clientName)
            }
        }
        send(patch: serializedOps, events: events.map(OutgoingFrame.init))
    }

    /// Sends every client in step the patch of `serializedOps` (none when empty) with its next
    /// sequence number, then `events`, in one write.
    func send(patch serializedOps: [UInt8], events: [OutgoingFrame]) {
        // Walked by index and changed in place: iterating a copy and storing each client back
        // would copy the table for every session of a fan-out.
        var index = clients.startIndex
        while index != clients.endIndex {
            defer { clients.formIndex(after: &index) }
            var frames: [(frame: OutgoingFrame, droppable: Bool)] = []
            frames.reserveCapacity(1 + events.count)
            if !serializedOps.isEmpty && !clients.values[index].awaitingSnapshot {
                clients.values[index].seq += 1
                let attached = clients.values[index]
                do {
                    frames.append((try frameEncoder.patchFrame(epoch: attached.epoch, seq: attached.seq,
                                                               serializedOperations: serializedOps), true))
                } catch {
                    // The client's state is now behind: tell it; its resync brings it back.
                    reportUnsendable("patch", error, to: attached.client)
                    clients.values[index].awaitingSnapshot = true
                }
            }
            for frame in events { frames.append((frame, false)) }  // events are never dropped (§7)
            if !frames.isEmpty { clients.values[index].client.sendFrames(frames) }
        }
    }

    private func forward(_ event: NavigatorEvent) {
        let message: ServerMessage.Event
        switch event {
        case .list(.userSelected(let id)):
            message = .init(screen: "list", name: "user_selected", payload: ["id": .string(UUIDText.lowercase(id))])
        case .detail(.didSave(let user)):
            message = .init(screen: "detail", name: "did_save", payload: ["user": StateDocument.user(user)])
        case .history(let event):
            message = StateDocument.event(event)
        case .changed(let change):
            guard let changed = ChangeBroadcaster.event(for: change) else { return }  // a resync: the patch says it all
            message = changed
        }
        // Sent with the next patch, after it: the event describes the state the patch brings.
        do {
            pendingEvents.append(try frameEncoder.encode(ServerMessage.event(message)))
        } catch {
            for attached in clients.values { reportUnsendable("event \(message.name)", error, to: attached.client) }
        }
        stateChanged()
    }

    /// A frame that could not be encoded (over the 16 MiB limit): logged, and the client told
    /// with an `internal` error rather than left waiting for something that never comes.
    private func reportUnsendable(_ what: String, _ error: any Error, to client: any SessionClient) {
        logger.error("A \(what) frame could not be encoded: \(error)", ["USERLISTD_SESSION": id])
        let message = "The daemon could not send a \(what) (it is over the frame size limit); "
            + "resync to get the current state."
        client.send(.error(.init(code: .internal, message: message)), droppable: false)
    }
}
