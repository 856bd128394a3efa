import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

extension Session {
    /// Reads every list this session shows again, and waits for it.
    func reloadLists() async {
        for case .list(let list) in navigator.screens { _ = await list.resync().value }
    }

    /// Runs a staged import's intent. The store stages, merges and announces the import (one
    /// reload of what every session shows, the importing one included), so nothing here waits
    /// for a delivery per user.
    func perform(_ intent: StagedImportIntent) -> Outcome {
        let useCase = useCases.stagedImport
        return .pending { session in
            do throws(UserError) {
                switch intent {
                case .begin:
                    let token = try await useCase.begin()
                    return .success(["import": .string(token.rawValue)])
                case .stage(let token, let entries):
                    let staged = try await useCase.stage(entries, into: token)
                    return .success(["staged": .int(Int64(staged))])
                case .commit(let token, let source):
                    let summary = try await useCase.commit(token, source: source)
                    // The feed's reload reaches this session too, later; reading now makes the
                    // reply follow the patch that shows the import, as for any write of its own.
                    if summary.written > 0 { await session.reloadLists() }
                    return .success(["imported": .int(Int64(summary.written)), "read": .int(Int64(summary.read))])
                case .abort(let token):
                    await useCase.abort(token)
                    return .success(["aborted": .bool(true)])
                }
            } catch {
                return .failure(IntentError(error))
            }
        }
    }
}
