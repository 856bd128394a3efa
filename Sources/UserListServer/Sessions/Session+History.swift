import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// History and undo: the history screen's intents, and the session's `history` and `revert`
/// (`userctl history`, `userctl revert`), which read and write past every screen.
extension Session {
    func perform(_ intent: HistoryIntent) throws(IntentError) -> Outcome {
        guard let history = navigator.topHistory else {
            throw IntentError(.unknownScreen, "No history screen is open; open a user, then its history (detail 'open_history').")
        }
        switch intent {
        case .onAppear: return Self.outcome(of: history.onAppear())
        case .refresh: return Self.outcome(of: history.refresh())
        case .didDisplayRow(let index):
            guard history.state.entries.indices.contains(index) else {
                throw IntentError(.invalidArgs, "Row \(index) is not on screen; the history has \(history.state.entries.count) rows.")
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
        guard let load = navigator.openHistory() else { return .failed(.unknownScreen, "No detail screen is open; open a user first.") }
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
                    limit: request.limit))
                return .success(.object([
                    "entries": .array(page.entries.map(StateDocument.entry)),
                    "next": page.next.map { .int($0) } ?? .null,
                ]))
            } catch {
                return .failure(IntentError(error))
            }
        }
    }

    /// `revert` (session): undo `entry` as a one-shot command.
    func revertCommand(_ entry: Int64) -> Outcome {
        guard let revert = useCases.via(.command).revert else {
            return .failed(.unavailable, "This daemon's store keeps no history, so nothing can be undone.")
        }
        return self.revert(entry) { _ in
            do throws(UserError) {
                return .success(try await revert.execute(entry: entry))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Runs an undo as this session's own write of the entry's user: its change reaches this
    /// session's screens (without a `changed` event) before the reply, like any save here.
    private func revert(_ entry: Int64, _ body: @escaping @Sendable (isolated Session) async -> Result<User?, UserError>) -> Outcome {
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
                    let change: UserChange = if let user { found.kind == .removed ? .added(user) : .saved(user) } else { .removed(id: found.userID) }
                    return (["entry": .int(entry), "user": user.map(StateDocument.user) ?? .null], change)
                }
            }
        }
    }
}
