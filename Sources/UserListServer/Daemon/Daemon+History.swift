import UserListDomain
import UserListPresentation

extension Daemon.Store {
    /// The use cases every session starts from, before its own author is added: writes are
    /// journaled once each (`JournaledUserRepository`), history is read as this daemon sees it.
    func useCases(_ config: DaemonConfig, logger: Logger) -> UserUseCases {
        UserUseCases(repository: JournaledUserRepository(base: repository, logger: logger), history: history,
                     daemon: SessionAuthor.daemonName(socketPath: config.socketPath))
    }
}
