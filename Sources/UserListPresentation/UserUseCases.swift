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

    public init(repository: any UserRepository) {
        fetchPage = FetchUserPageUseCase(repository: repository)
        fetchUser = FetchUserUseCase(repository: repository)
        update = UpdateUserUseCase(repository: repository)
        add = AddUserUseCase(repository: repository)
        remove = RemoveUserUseCase(repository: repository)
        importUsers = ImportUsersUseCase(repository: repository)
        stagedImport = StagedImportUseCase(repository: repository)
        findByIDPrefix = FindUsersByIDPrefixUseCase(repository: repository)
    }
}
