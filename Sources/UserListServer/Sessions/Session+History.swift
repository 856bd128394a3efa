import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// History and undo: the history screen's intents, and the session's `history` and `revert`
/// (`userctl history`, `userctl revert`), which read and write past every screen.
extension Session {
    func perform(_ intent: HistoryIntent) throws(IntentError) -> Outcome {
        guard let history = navigator.topHistory else {
            throw IntentError(.unknownScreen,
                              "No history screen is open; open a user, then its history (detail 'open_history').")
        }
        switch intent {
        case .onAppear: return Self.outcome(of: history.onAppear())
        case .refresh: return Self.outcome(of: history.refresh())
        case .didDisplayRow(let index):
            guard history.state.entries.indices.contains(index) else {
                throw IntentError(.invalidArgs,
                                  "Row \(index) is not on screen; the history has \(history.state.entries.count) rows.")
            }
            return history.didDisplayRow(at: index).map(Self.outcome(of:)) ?? .done(nil)
        case .revert(let entry):
            let userID = history.userID
            return revert(entry) { session in
                await session.navigator.topHistory?.revert(entry: entry).value ?? .failure(.notFound(id: userID))
            }
        case .dismissError:
            history.dismissError()
            return .done(nil)
        case .back:
            navigator.back()
            return .done(nil)
        }
    }

    /// `open_history` on the detail screen.
    func openHistory() -> Outcome {
        guard let load = navigator.openHistory() else {
            return .failed(.unknownScreen, "No detail screen is open; open a user first.")
        }
        return Self.outcome(of: load)
    }

    /// `history`: a page of entries, newest first, as `userctl history` prints them.
    func history(_ request: HistoryRequest) -> Outcome {
        guard let history = useCases.history else {
            return .failed(.unavailable, "This daemon's store keeps no history (the HTTP source).")
        }
        return .pending { _ in
            do throws(UserError) {
                let page = try await history.page(HistoryQuery(
                    userID: request.userID, actorUID: request.actorUID, since: request.since, before: request.before,
                    limit: request.limit, kind: request.kind, via: request.via), counting: request.count)
                var reply: [String: JSONValue] = [
                    "entries": .array(page.entries.map(StateDocument.entry)),
                    "next": page.next.map { .int($0) } ?? .null,
                ]
                if request.count { reply["more"] = .int(Int64(page.more ?? 0)) }
                return .success(.object(reply))
            } catch {
                return .failure(IntentError(error))
            }
        }
    }

    /// `revert` (session): undo `entry` as a one-shot command. An import is undone whole
    /// (`skippingChanged`: leaving the users changed since it as they are).
    func revertCommand(_ entry: Int64, skippingChanged: Bool = false) -> Outcome {
        guard let revert = useCases.via(.command).revert, let history = useCases.history else {
            return .failed(.unavailable, "This daemon's store keeps no history, so nothing can be undone.")
        }
        return .pending { session in
            let found: HistoryEntry
            do throws(UserError) {
                found = try await history.entry(entry)
            } catch {
                return .failure(IntentError(error))
            }
            guard found.kind == .imported || skippingChanged else {
                let result = await session.write { _ in
                    do throws(UserError) {
                        let user = try await revert.execute(entry: entry)
                        return .success((["entry": .int(entry), "user": user.map(StateDocument.user) ?? .null],
                                         Self.change(undoing: found, user)))
                    } catch {
                        return .failure(error)
                    }
                }
                guard let user = found.userID, let version = found.versionAfter else { return result }
                return await session.tellingWhoSavedFirst(result, id: user, expectedVersion: version,
                                                          lead: "Entry \(entry) was not undone: since it,")
            }
            // Many users: the store's one `reloaded` row reaches this session through the receipt.
            var changedSince: (ids: [UUID], count: Int)?
            var skipped: [UUID] = []
            let result = await session.write { _ in
                do throws(UserError) {
                    let undo = try await revert.undoImport(entry: entry, skippingChanged: skippingChanged)
                    skipped = undo.skipped
                    return .success((StateDocument.undo(of: entry, undo), nil))
                } catch {
                    if case .changedSinceImport(_, let ids, let count) = error { changedSince = (ids, count) }
                    return .failure(error)
                }
            }
            guard case .failure(let error) = result, let changedSince else {
                return await ImportUndoStory.tellingSkipped(skipped, in: result, session.useCases)
            }
            let told = await ImportUndoStory.changes(of: changedSince.ids, session.useCases)
            return .failure(IntentError(error.code, UserError.importNotUndone(entry, count: changedSince.count,
                                                                             users: told)))
        }
    }

    /// The change an undo of `entry` made to its user (`user`: as it left it; nil: removed).
    static func change(undoing entry: HistoryEntry, _ user: User?) -> UserChange? {
        guard let userID = entry.userID else { return nil }
        if let user { return entry.kind == .removed ? .added(user) : .saved(user) }
        return .removed(id: userID)
    }

    /// Runs an undo as this session's own write of the entry's user: its change reaches this
    /// session's screens (without a `changed` event) before the reply, like any save here.
    private func revert(_ entry: Int64, _ body: @escaping @Sendable (isolated Session) async -> Result<User?,
                        UserError>) -> Outcome {
        guard let history = useCases.history else {
            return .failed(.unavailable, "This daemon's store keeps no history, so nothing can be undone.")
        }
        return .pending { session in
            let found: HistoryEntry
            do throws(UserError) {
                found = try await history.entry(entry)
            } catch {
                return .failure(IntentError(error))
            }
            return await session.write { session in
                await body(session).map { user in
                    (["entry": .int(entry), "user": user.map(StateDocument.user) ?? .null],
                     Self.change(undoing: found, user))
                }
            }
        }
    }
}
