import Foundation
import ThreadLocks

/// What the running daemon does besides serving clients: watching the store's health, the
/// retention sweeps, status and the watchdog, and SIGHUP. Each is run as a part of the daemon's
/// `ServiceStack`, which cancels it and waits for it at the stop.
extension Daemon {
    /// Each store transition once: in the journal, and in `STATUS=` at once (not rate-limited).
    func watchStoreHealth(statusLine: @escaping @Sendable () -> String) -> @Sendable () async -> Void {
        let notifier = self.notifier
        let logger = self.logger
        let store = self.store
        return {
            for await state in store.health.transitions {
                switch state {
                case .available:
                    logger.notice("The store is available again", ["USERLISTD_STORE": store.description])
                case .unavailable(let reason):
                    logger.warning("The store is unavailable; sessions are kept, writes are refused, "
                                   + "reconnecting with backoff: \(reason)",
                                   ["USERLISTD_STORE": store.description])
                }
                notifier.status(statusLine(), force: true)
            }
        }
    }

    /// Retention sweeps, rate-limited status updates, and the watchdog.
    func backgroundWork(registry: SessionRegistry, context: ServerContext, probe: Session,
                        statusLine: @escaping @Sendable () -> String) -> @Sendable () async -> Void {
        let notifier = self.notifier
        let logger = self.logger
        let watchdog = SystemdNotifier.watchdogInterval()
        return {
            var lastSweep = ContinuousClock.now
            var lastLiveness = ContinuousClock.now
            var lastWatchdog = ContinuousClock.now
            while !Task.isCancelled {
                // Reloaded settings apply from the next tick.
                let ping = context.config.pingIntervalSeconds
                let frameTimeout = context.config.frameTimeoutSeconds
                var tick = min(watchdog ?? .seconds(1), .seconds(1), .seconds(max(0.05, frameTimeout / 4)))
                if ping > 0 { tick = min(tick, .seconds(max(0.1, ping / 4))) }
                try? await Task.sleep(for: tick)
                let now = ContinuousClock.now
                // Frame deadlines every tick; liveness a quarter of the ping interval between looks.
                let livenessEvery = Duration.seconds(max(0.25, ping / 4))
                let checkPings = now - lastLiveness >= livenessEvery
                if checkPings { lastLiveness = now }
                context.checkConnections(pings: checkPings)
                if now - lastSweep >= .seconds(5) {
                    lastSweep = now
                    let dropped = registry.sweep()
                    if dropped > 0 { logger.info("Dropped \(dropped) detached sessions past their retention") }
                    notifier.status(statusLine())
                }
                if let watchdog, now - lastWatchdog >= watchdog {
                    // Only vouch for the machinery after it answered: a session actor ran a job.
                    await probe.flush()
                    lastWatchdog = now
                    notifier.watchdog()
                }
            }
        }
    }

    /// SIGHUP: RELOADING=1, the new settings that can change at run time, then READY=1.
    func reload(registry: SessionRegistry, context: ServerContext, policy: AccessPolicy, statusLine: () -> String) {
        notifier.reloading()
        if let fresh = reloadConfig() {
            config.withLock { $0 = fresh }
            logger.setLevel(fresh.logLevel)
            registry.reload(fresh)
            context.reload(fresh)
            policy.reload(adminGroup: fresh.adminGroup)
            logger.notice("Reloaded configuration", ["USERLISTD_LOG_LEVEL": fresh.logLevel.rawValue])
        } else {
            logger.warning("Reload failed; keeping the running configuration")
        }
        notifier.ready(status: statusLine())
    }
}
