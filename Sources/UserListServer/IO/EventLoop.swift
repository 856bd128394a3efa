import CLinuxIO
import Glibc
import Synchronization
import ThreadLocks

/// Something the event loop watches: told when its descriptor can be read or written.
package protocol EventLoopHandler: AnyObject, Sendable {
    /// Called on the loop thread. Must not block. `scratch` is the loop's read buffer, reused
    /// for every read (valid only during the call).
    func readable(scratch: UnsafeMutableRawBufferPointer)
    /// Called on the loop thread when a write that would have blocked can go on.
    func writable()
    /// The peer hung up or the descriptor failed.
    func hangup()
}

/// One descriptor's place in the loop: the number and the generation it was registered under.
///
/// Descriptor numbers are reused as soon as one is closed. Events carry the generation too, so an
/// event queued for a closed connection is dropped instead of reaching a newer connection that
/// got the same number.
package struct LoopRegistration: Hashable, Sendable {
    package let fd: Int32
    package let generation: UInt32

    var token: UInt64 { UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd)) }

    init(token: UInt64) {
        fd = Int32(bitPattern: UInt32(truncatingIfNeeded: token))
        generation = UInt32(truncatingIfNeeded: token >> 32)
    }

    init(fd: Int32, generation: UInt32) {
        self.fd = fd
        self.generation = generation
    }
}

/// One thread, one epoll set: every socket's readiness is waited for here, so 10,000 idle
/// connections cost no threads. Handlers do the little work a read needs (decode frames) and hand
/// messages to session actors; replies are written by whoever has them, without hopping back here.
///
/// Descriptors are registered, read and closed on this thread only (`closeOnLoop`), so a read can
/// never meet a descriptor that another thread closed, and every close happens exactly once.
package final class EventLoop: Sendable {
    /// The watched descriptors' handlers: the loop's own, touched on its thread only (or before
    /// it starts, when no other thread reads them), so finding an event's handler takes no lock.
    private final class Registry: @unchecked Sendable {
        // Invariant (why @unchecked is sound): used only through `EventLoop.registry(_:)`, which
        // checks that the caller is the loop (`isLoopThread`).
        var handlers: [Int32: (generation: UInt32, handler: any EventLoopHandler)] = [:]
        var nextGeneration: UInt32 = 0
    }

    private let epollFD: Int32
    private let registryStorage = Registry()
    /// How many descriptors are watched, for readers off the loop (status, tests).
    private let watchedCount = Atomic<Int>(0)
    /// Work other threads asked to run on the loop thread, in order.
    private let jobs: LoopJobs
    /// Work to run on the loop thread once a delay has passed (`execute(after:_:)`).
    private let timers = Lock(LoopTimers())
    private let stopped = Atomic<Bool>(false)

    package init() throws(SystemError) {
        jobs = try LoopJobs()
        epollFD = epoll_create1(ULIO_EPOLL_CLOEXEC)
        guard epollFD >= 0 else { throw SystemError("epoll_create1") }
        guard ulio_epoll_ctl_token(epollFD, EPOLL_CTL_ADD, jobs.wakeFD, ULIO_EPOLLIN, Self.wakeToken) == 0 else {
            throw SystemError("epoll_ctl")
        }
    }

    deinit {
        close(epollFD)
    }

    /// The eventfd's token: a generation no registration ever gets.
    private static let wakeToken = UInt64(UInt32.max) << 32

    /// The registry, to the loop only (a use off it stops the daemon rather than racing).
    private func registry<Result>(_ body: (Registry) -> Result) -> Result {
        precondition(isLoopThread, "the event loop's registry used off its thread")
        return body(registryStorage)
    }

    /// Starts watching `fd` for reads (level-triggered: a handler reads what it can). On the
    /// loop, or before it starts.
    package func register(_ fd: Int32, handler: any EventLoopHandler) throws(SystemError) -> LoopRegistration {
        let registration = registry { registry -> LoopRegistration in
            registry.nextGeneration = registry.nextGeneration &+ 1
            if registry.nextGeneration == UInt32.max { registry.nextGeneration = 0 }
            if registry.handlers.updateValue((registry.nextGeneration, handler), forKey: fd) == nil {
                watchedCount.add(1, ordering: .relaxed)
            }
            return LoopRegistration(fd: fd, generation: registry.nextGeneration)
        }
        guard ulio_epoll_ctl_token(epollFD, EPOLL_CTL_ADD, fd, ULIO_EPOLLIN | ULIO_EPOLLRDHUP,
                                   registration.token) == 0 else {
            let error = SystemError("epoll_ctl(ADD)", detail: "fd \(fd)")
            forget(registration)
            throw error
        }
        return registration
    }

    /// Sets what epoll reports for a live registration: writability only while a write is
    /// pending (else epoll spins), reads unless the handler paused them. On the loop, which
    /// also closes descriptors, so the registration is still live.
    package func setInterest(_ registration: LoopRegistration, write: Bool, read: Bool) {
        precondition(isLoopThread, "epoll interest changed off the event loop")
        var mask = ULIO_EPOLLRDHUP
        if read { mask |= ULIO_EPOLLIN }
        if write { mask |= ULIO_EPOLLOUT }
        _ = ulio_epoll_ctl_token(epollFD, EPOLL_CTL_MOD, registration.fd, mask, registration.token)
    }

    /// Stops watching, closes the descriptor, then runs `then`: on the loop thread, exactly when
    /// no read of this descriptor can be under way. Called from the loop thread it runs at once.
    package func closeOnLoop(_ registration: LoopRegistration, then: @escaping @Sendable () -> Void = {}) {
        execute { [self] in
            _ = ulio_epoll_ctl_token(epollFD, EPOLL_CTL_DEL, registration.fd, 0, 0)
            forget(registration)
            Glibc.close(registration.fd)
            then()
        }
    }

    /// Stops watching a descriptor the caller keeps (the listening socket at shutdown).
    package func deregister(_ registration: LoopRegistration) {
        execute { [self] in
            // A stale registration (its number since reused) must not unhook the new one.
            if forget(registration) { _ = ulio_epoll_ctl_token(epollFD, EPOLL_CTL_DEL, registration.fd, 0, 0) }
        }
    }

    /// Drops the handler if `registration` is still the current one for its number.
    @discardableResult
    private func forget(_ registration: LoopRegistration) -> Bool {
        registry { registry in
            guard registry.handlers[registration.fd]?.generation == registration.generation else { return false }
            registry.handlers.removeValue(forKey: registration.fd)
            watchedCount.subtract(1, ordering: .relaxed)
            return true
        }
    }

    /// Whether the caller runs on the loop thread (or drains its jobs after it exited), or the
    /// loop has not started (then no other thread runs its work: `execute` runs jobs at once).
    package var isLoopThread: Bool { jobs.isLoopThread || !jobs.started.load(ordering: .acquiring) }

    /// Whether the caller is the thread running the loop's jobs now (the loop's, or after it
    /// exited the one draining them); unlike `isLoopThread`, false before the loop starts.
    var runsJobsOnThisThread: Bool { jobs.isLoopThread }

    /// Whether jobs wait for the loop's next turn (what was handed to it before now).
    var hasQueuedJobs: Bool { jobs.hasQueued }

    /// Runs `job` on the loop thread: now when called there (or before the loop started, when
    /// no other thread can be reading), else at its next wake-up.
    package func execute(_ job: @escaping @Sendable () -> Void) {
        if isLoopThread {
            job()
            return
        }
        schedule(job)
    }

    /// Runs `job` on the loop thread once `delay` has passed: at the loop's first turn after it,
    /// which `epoll_wait`'s timeout brings about (the loop keeps the deadlines; no task sleeps).
    /// A loop that has exited keeps no time: its timers, due or not, run as it exits, and one set
    /// later runs at once (on the caller's thread, as any job queued after the exit).
    package func execute(after delay: Duration, _ job: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = delay.components
        let due = MonotonicClock.nanoseconds() + max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let earliest = timers.withLock { timers -> Bool? in
            timers.closed ? nil : timers.insert(due: due, job)
        }
        switch earliest {
        case nil: execute(job)
        case true? where !isLoopThread: jobs.wake()  // asleep until a later deadline, or none
        default: break  // on the loop, the next epoll_wait counts with it
        }
    }

    /// How many timers are set (tests).
    package var timerCount: Int { timers.withLock { $0.count } }

    /// Runs the loop on a new thread until `stop()`.
    package func start(name: String = "userlistd-io") {
        jobs.started.store(true, ordering: .releasing)
        let thread = LoopThread(loop: self, name: name)
        thread.start()
    }

    /// Runs `job` on the loop thread at its next turn, never at once (`execute` runs a job
    /// called from the loop thread immediately). Once the loop has exited, jobs still run one at
    /// a time, in order (see `LoopJobs`).
    func schedule(_ job: @escaping @Sendable () -> Void) {
        jobs.schedule(job)
    }

    package func stop() {
        stopped.store(true, ordering: .releasing)
        jobs.wake()
    }

    fileprivate func run() {
        jobs.loopThreadStarted()
        // Whatever ends the loop, its last jobs run, then its timers (due or not) and what they
        // queue, and later ones on their callers' threads.
        defer {
            jobs.runQueued()
            for job in timers.withLock({ timers in
                timers.closed = true
                return timers.takeAll()
            }) { job() }
            jobs.loopThreadExiting()
        }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { scratch.deallocate() }
        var tokens = [UInt64](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        while !stopped.load(ordering: .acquiring) {
            let timeout = timers.withLock { $0.timeoutMilliseconds(now: MonotonicClock.nanoseconds) }
            let count = ulio_epoll_wait_tokens(epollFD, &tokens, &events, 256, timeout)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in 0..<Int(count) {
                if tokens[index] == Self.wakeToken {
                    var value: UInt64 = 0
                    _ = read(jobs.wakeFD, &value, 8)
                    continue
                }
                let registration = LoopRegistration(token: tokens[index])
                // A handler closed earlier in this batch (and its number maybe reused) is skipped.
                guard let handler = handlerIfCurrent(registration) else { continue }
                let flags = events[index]
                if flags & ULIO_EPOLLOUT != 0 { handler.writable() }
                if flags & ULIO_EPOLLIN != 0, handlerIfCurrent(registration) != nil {
                    handler.readable(scratch: scratch)
                }
                if flags & (ULIO_EPOLLHUP | ULIO_EPOLLERR) != 0, handlerIfCurrent(registration) != nil {
                    handler.hangup()
                }
            }
            for job in timers.withLock({ $0.takeDue(now: MonotonicClock.nanoseconds) }) { job() }
            jobs.runQueued()
        }
    }

    private func handlerIfCurrent(_ registration: LoopRegistration) -> (any EventLoopHandler)? {
        registry { registry in
            guard let entry = registry.handlers[registration.fd], entry.generation == registration.generation else {
                return nil
            }
            return entry.handler
        }
    }

    /// How many descriptors are watched now (tests and status).
    package var registeredCount: Int { watchedCount.load(ordering: .relaxed) }
}

/// A plain pthread for the loop: it blocks in epoll_wait and must not occupy a cooperative
/// pool thread (there are only as many as cores).
private final class LoopThread: Sendable {
    let loop: EventLoop
    /// Shown by `ps -L`, `top -H` and perf (at most 15 bytes).
    let name: String
    init(loop: EventLoop, name: String) {
        self.loop = loop
        self.name = name
    }

    func start() {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<LoopThread>.fromOpaque(raw!).takeRetainedValue()
            ulio_set_thread_name(me.name)
            me.loop.run()
            return nil
        }, box.toOpaque())
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }
}
