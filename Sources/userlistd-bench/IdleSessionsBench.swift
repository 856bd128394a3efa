import Glibc
import UserListWire

/// Many connected idle sessions: time to attach them all (hello → snapshot, and → first page
/// loaded) and the daemon's resident memory per session (VmRSS before and after).
enum IdleSessionsBench {
    static let section = "idle sessions"

    static func run(_ context: BenchContext) {
        let count = context.quick ? 1000 : 10_000
        print("== idle sessions (\(grouped(count)))")
        context.withDaemon(section) { daemon throws(BenchError) in
            sleepMillis(300)
            guard let before = daemon.residentKiB() else { throw BenchError("cannot read the daemon's VmRSS") }
            var held: ManySessions? = try ManySessions.open(socketPath: daemon.socketPath, count: count,
                                                            keyPrefix: "idle")
            sleepMillis(1000)
            while held!.connections.pump(timeoutMillis: 0, { _, _, _ in }) > 0 {}
            guard let after = daemon.residentKiB() else { throw BenchError("cannot read the daemon's VmRSS") }
            let descriptors = daemon.openDescriptors() ?? 0
            if held!.connections.closedCount > 0 {
                context.report.note("idle sessions: the daemon closed \(held!.connections.closedCount) connections")
            }
            let (started, lastSnapshot, lastLoaded) = (held!.started, held!.lastSnapshot, held!.lastLoaded)
            held = nil  // close the sessions' descriptors before the floor opens as many again
            _ = held
            // Both ends of the floor's connections live in this process: keep them under RLIMIT_NOFILE.
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            let floorCount = min(count, (Int(limit.rlim_cur) - 256) / 2)
            var floorText = "–", ratioText = "–"
            do throws(BenchError) {
                let floor = try AttachFloor.run(context, count: floorCount)
                let partial = floorCount < count
                floorText = "raw accept+frame \(formatNanos(floor))"
                    + (partial ? " for \(grouped(floorCount)) conns" : "")
                let scaled = Double(floor) * Double(count) / Double(floorCount)
                ratioText = fixed(Double(lastSnapshot - started) / max(1, scaled), 1) + "x"
                    + (partial ? " (floor scaled)" : "")
            } catch {
                context.report.note("idle sessions: the raw attach floor failed: \(error)")
            }
            context.report.add(section, "attach \(grouped(count)): first hello → last snapshot",
                               value: formatNanos(lastSnapshot - started), baseline: floorText, ratio: ratioText)
            context.report.add(section,
                               "attach \(grouped(count)): first hello → last first page loaded (on_appear reply)",
                               value: formatNanos(lastLoaded - started))
            let perSession = Double(after - before) * 1024 / Double(count)
            let memory = "VmRSS \(grouped(before)) → \(grouped(after)) KiB"
            context.report.add(section, "daemon RSS per idle session (\(memory), \(grouped(descriptors)) fds open)",
                               value: "\(fixed(perSession / 1024, 1)) KiB", target: "≤ 16 KiB",
                               met: perSession <= 16 * 1024)
        }
    }
}

/// The raw floor under attaching: a C-style thread accepts each connection, reads a hello-sized
/// frame and answers with one frame; the client side is the same connect-and-epoll code.
enum AttachFloor {
    static func run(_ context: BenchContext, count: Int) throws(BenchError) -> UInt64 {
        let path = context.temporaryPath("attach-floor.sock")
        let listenFD = try Sockets.bind(path, type: Sockets.stream)
        defer { close(listenFD); unlink(path) }
        let answer = Sockets.rawFrame(bodySize: 400)
        let total = count
        let server = BenchThread(name: "attach-floor") {
            var accepted: [Int32] = []
            var header = [UInt8](repeating: 0, count: 4)
            var body = [UInt8](repeating: 0, count: 4096)
            for _ in 0..<total {
                let fd = accept(listenFD, nil, nil)
                guard fd >= 0 else { break }
                accepted.append(fd)
                Sockets.setReceiveTimeout(fd, seconds: 5)
                guard header.withUnsafeMutableBytes({ Sockets.readExactly(fd, $0.baseAddress!, 4) }) else { continue }
                let length = min(body.count,
                                 Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3]))
                _ = body.withUnsafeMutableBytes { Sockets.readExactly(fd, $0.baseAddress!, length) }
                _ = try? Sockets.writeAll(fd, answer)
            }
            sleepMillis(200)
            for fd in accepted { close(fd) }
        }
        let hello = Sockets.rawFrame(bodySize: 150)
        let set = try ConnectionSet()
        var got = 0
        var last: UInt64 = 0
        let start = monotonicNanos()
        let until = deadline(seconds: 60)
        for index in 0..<count {
            let fd = try Sockets.connect(path)
            try Sockets.writeAll(fd, hello)
            try set.add(fd)
            if index % 32 == 31 { while set.pump(timeoutMillis: 0, { _, _, at in got += 1; last = at }) > 0 {} }
        }
        while got < count && monotonicNanos() < until {
            set.pump(timeoutMillis: 50) { _, _, at in got += 1; last = at }
        }
        server.join(timeout: 5)
        guard got == count else { throw BenchError("attach floor: only \(got) of \(count) answered") }
        return last - start
    }
}
