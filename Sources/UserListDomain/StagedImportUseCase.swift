import Foundation

/// An import applied all or nothing (`ImportStaging`), with every entry validated as it is
/// staged: a bad entry is refused naming its position in the file, before anything is written.
public struct StagedImportUseCase: Sendable {
    private let staging: any ImportStaging
    /// Who the import is recorded as in the history (nil: the store's plain import).
    private let author: ChangeAuthor?

    public init(repository: any UserRepository, author: ChangeAuthor? = nil) {
        staging = repository.importStaging ?? MemoryImportStaging(repository: repository)
        self.author = author
    }

    public func begin() async throws(UserError) -> ImportToken {
        try await staging.beginImport()
    }

    /// Validates `entries` and stages them; returns how many entries the import holds now.
    /// The first invalid entry fails the call (`rejectedEntry`) and stages none of this chunk.
    public func stage(_ entries: [ImportEntry], into token: ImportToken) async throws(UserError) -> Int {
        var valid: [ImportEntry] = []
        valid.reserveCapacity(entries.count)
        for entry in entries {
            var checked = entry
            do throws(UserError) {
                checked.user.name = try UserValidation.validName(entry.user.name)
                checked.user.email = try UserValidation.validEmail(entry.user.email)
                checked.user.avatarURL = try UserValidation.validAvatarURL(entry.user.avatarURL)
            } catch {
                guard case .validation(_, let message) = error else { throw error }
                throw .rejectedEntry(position: entry.position, id: entry.user.id, reason: message)
            }
            valid.append(checked)
        }
        return try await staging.stage(valid, into: token)
    }

    /// `source`: where the file came from as the person named it (the history shows it).
    public func commit(_ token: ImportToken, source: String? = nil) async throws(UserError) -> ImportSummary {
        var author = author
        if let source { author?.source = String(source.prefix(255)) }
        return try await staging.commitImport(token, by: author)
    }

    public func abort(_ token: ImportToken) async {
        await staging.abortImport(token)
    }
}
