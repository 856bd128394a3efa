import UserListDomain

extension Daemon {
    /// With a store several daemons share (the store gave a relay): the board's presence goes
    /// to the others and theirs comes in, and every `presence-interval` this daemon says again
    /// what it holds and drops the others' people not heard of for three intervals (a daemon
    /// that died). Started after the sessions, so it stops before them: the others hear `gone`
    /// while this daemon's sessions still stand, and nothing after it.
    func sharePresence(_ board: PresenceBoard, config: DaemonConfig, services: ServiceStack) {
        guard let relay = store.presence else { return }
        board.share(through: relay, daemon: SessionAuthor.daemonName(socketPath: config.socketPath))
        services.started("presence sharing") { await board.stopSharing() }
        let interval = Duration.milliseconds(Int64(config.presenceIntervalSeconds * 1000))
        services.task("presence renewal") {
            while (try? await Task.sleep(for: interval)) != nil {
                board.renew(expiring: interval * 3)
            }
        }
    }
}
