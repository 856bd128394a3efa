import UserListDomain

/// The use cases the screens need, built once by the composition root. ViewModels see these,
/// never a repository.
public struct UserUseCases: Sendable {
    public var fetchPage: FetchUserPageUseCase
    public var fetchUser: FetchUserUseCase
    public var update: UpdateUserUseCase
    public var add: AddUserUseCase
    public var remove: RemoveUserUseCase
    public var importUsers: ImportUsersUseCase
    public var stagedImport: StagedImportUseCase
    public var findByIDPrefix: FindUsersByIDPrefixUseCase
    /// Reading history; nil when the store keeps none (the HTTP source).
    public var history: FetchHistoryUseCase?
    /// Undo; nil when the store keeps no history.
    public var revert: RevertHistoryEntryUseCase?

    /// Who the writes are recorded as (nil: the store's plain writes).
    public private(set) var author: ChangeAuthor?

    private let repository: any UserRepository
    private let historyRepository: (any UserHistoryRepository)?

    /// `daemon`: this daemon's name in the history (`ChangeAuthor.daemon`), so changes other
    /// daemons on the same store made read as theirs.
    public init(repository: any UserRepository, history: (any UserHistoryRepository)? = nil, daemon: String? = nil) {
        self.repository = repository
        self.historyRepository = history
        fetchPage = FetchUserPageUseCase(repository: repository)
        fetchUser = FetchUserUseCase(repository: repository)
        update = UpdateUserUseCase(repository: repository)
        add = AddUserUseCase(repository: repository)
        remove = RemoveUserUseCase(repository: repository)
        importUsers = ImportUsersUseCase(repository: repository)
        stagedImport = StagedImportUseCase(repository: repository)
        findByIDPrefix = FindUsersByIDPrefixUseCase(repository: repository)
        self.history = history.map { FetchHistoryUseCase(repository: $0, seenFrom: daemon) }
        revert = history.map { RevertHistoryEntryUseCase(history: $0, users: repository, author: .unattributed) }
    }

    /// The same use cases with every write recorded as `author`'s: a session builds its screens
    /// from these, so whatever its screens save says who saved it.
    public func authored(by author: ChangeAuthor) -> UserUseCases {
        var copy = self
        copy.author = author
        copy.update = UpdateUserUseCase(repository: repository, author: author)
        copy.add = AddUserUseCase(repository: repository, author: author)
        copy.remove = RemoveUserUseCase(repository: repository, author: author)
        copy.importUsers = ImportUsersUseCase(repository: repository, author: author)
        copy.stagedImport = StagedImportUseCase(repository: repository, author: author)
        copy.revert = historyRepository.map {
            RevertHistoryEntryUseCase(history: $0, users: repository, author: author)
        }
        return copy
    }

    /// The same author arriving another way (a session's one-shot commands are `.command`).
    public func via(_ via: ChangeVia) -> UserUseCases {
        author.map { authored(by: $0.via(via)) } ?? self
    }
}
