import CLinuxIO
import Glibc
import Synchronization

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

/// One thread, one epoll set: every socket's readiness is waited for here, so 10,000 idle
/// connections cost no threads. Handlers do the little work a read needs (decode frames) and hand
/// messages to session actors; replies are written by whoever has them, without hopping back here.
package final class EventLoop: Sendable {
    private let epollFD: Int32
    private let wakeFD: Int32
    // Invariant: mutated under its own lock; the loop thread reads it to find handlers.
    private let handlers = Mutex<[Int32: any EventLoopHandler]>([:])
    private let stopped = Atomic<Bool>(false)

    package init() throws(SystemError) {
        epollFD = epoll_create1(ULIO_EPOLL_CLOEXEC)
        guard epollFD >= 0 else { throw SystemError("epoll_create1") }
        wakeFD = eventfd(0, ULIO_EFD_CLOEXEC | ULIO_EFD_NONBLOCK)
        guard wakeFD >= 0 else { throw SystemError("eventfd") }
        guard ulio_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, ULIO_EPOLLIN) == 0 else {
            throw SystemError("epoll_ctl")
        }
    }

    deinit {
        close(epollFD)
        close(wakeFD)
    }

    /// Starts watching `fd` for reads (edge-triggered is not used: a handler reads what it can).
    package func register(_ fd: Int32, handler: any EventLoopHandler) throws(SystemError) {
        handlers.withLock { $0[fd] = handler }
        guard ulio_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, ULIO_EPOLLIN | ULIO_EPOLLRDHUP) == 0 else {
            handlers.withLock { _ = $0.removeValue(forKey: fd) }
            throw SystemError("epoll_ctl(ADD)", detail: "fd \(fd)")
        }
    }

    /// Adds or removes interest in writability (only while a write is pending, else epoll spins).
    package func setWriteInterest(_ fd: Int32, _ wanted: Bool, reading: Bool = true) {
        var mask = ULIO_EPOLLRDHUP
        if reading { mask |= ULIO_EPOLLIN }
        if wanted { mask |= ULIO_EPOLLOUT }
        _ = ulio_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, mask)
    }

    /// Stops watching `fd`. The caller closes it afterwards.
    package func deregister(_ fd: Int32) {
        _ = ulio_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0)
        handlers.withLock { _ = $0.removeValue(forKey: fd) }
    }

    /// Runs the loop on a new thread until `stop()`.
    package func start(name: String = "userlistd-io") {
        let thread = LoopThread(loop: self)
        thread.start(name: name)
    }

    package func stop() {
        stopped.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    fileprivate func run() {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { scratch.deallocate() }
        var fds = [Int32](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        while !stopped.load(ordering: .acquiring) {
            let count = ulio_epoll_wait(epollFD, &fds, &events, 256, -1)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in 0..<Int(count) {
                let fd = fds[index]
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                    continue
                }
                guard let handler = handlers.withLock({ $0[fd] }) else { continue }
                let flags = events[index]
                if flags & ULIO_EPOLLOUT != 0 { handler.writable() }
                if flags & ULIO_EPOLLIN != 0 { handler.readable(scratch: scratch) }
                if flags & (ULIO_EPOLLHUP | ULIO_EPOLLERR) != 0 { handler.hangup() }
            }
        }
    }
}

/// A plain pthread for the loop: it blocks in epoll_wait and must not occupy a cooperative
/// pool thread (there are only as many as cores).
private final class LoopThread: Sendable {
    let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }

    func start(name: String) {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<LoopThread>.fromOpaque(raw!).takeRetainedValue()
            me.loop.run()
            return nil
        }, box.toOpaque())
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }
}
