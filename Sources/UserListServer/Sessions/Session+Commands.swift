import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The session's one-shot writes (`userctl add`, `set`, `remove`, `import`): each is recorded as
/// made by a command, waits for its own change to come back (`write`), and replies with what
/// was stored.
extension Session {
    func importUsers(_ users: [User]) -> Outcome {
        let useCases = useCases.via(.command)
        return .pending { session in
            await session.write { _ in
                do throws(UserError) {
                    let count = try await useCases.importUsers.execute(users)
                    return .success((["imported": .int(Int64(count))], nil))
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// Changes the fields `edit` names; with `expectedVersion`, only if the stored user is still
    /// at it (a conflict then says who saved first, and what).
    func setUser(_ id: UUID, _ edit: UserEdit, expectedVersion: Int?) -> Outcome {
        let useCases = useCases.via(.command)
        return .pending { session in
            let result = await session.write { _ in
                do throws(UserError) {
                    var user = try await useCases.fetchUser.execute(id: id)
                    if let expectedVersion { user.version = expectedVersion }
                    let (saved, changed) = try await useCases.update.set(edit, over: user,
                                                                         retrying: expectedVersion == nil)
                    return .success((StateDocument.saved(saved, unchanged: !changed), changed ? .saved(saved) : nil))
                } catch {
                    return .failure(error)
                }
            }
            return await session.tellingWhoSavedFirst(result, id: id, expectedVersion: expectedVersion)
        }
    }

    func addUser(_ new: NewUser) -> Outcome {
        let useCases = useCases.via(.command)
        return .pending { session in
            await session.write { _ in
                do throws(UserError) {
                    let user = try await useCases.add.execute(new)
                    return .success((StateDocument.user(user), .added(user)))
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    func removeUser(_ id: UUID) -> Outcome {
        let useCases = useCases.via(.command)
        return .pending { session in
            await session.write { _ in
                do throws(UserError) {
                    try await useCases.remove.execute(id: id)
                    return .success((nil, .removed(id: id)))
                } catch {
                    return .failure(error)
                }
            }
        }
    }
}
