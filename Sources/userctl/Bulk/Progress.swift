import Foundation
import Glibc
import ThreadLocks

/// Progress of a long import or export, on stderr (stdout carries the result):
/// - a terminal: a bar redrawn in place at most ten times a second (count, rate, ETA when the
///   total is known), erased when the work ends;
/// - not a terminal: a plain line every `plainInterval`;
/// - `--json`: one JSON object per line, every second and at the end;
/// - `--quiet`: nothing.
final class Progress {
    enum Mode { case bar, plain, json, quiet }

    let mode: Mode
    let verb: String
    private let started = ContinuousClock.now
    private var lastShown: ContinuousClock.Instant?
    private var drewBar = false

    static let plainInterval: Duration = .seconds(3)

    /// `streamsToStdout`: the command writes its result as it goes (export, list --all); when
    /// stdout and stderr are the same terminal, a bar would be torn by the output, so none is drawn.
    init(verb: String, json: Bool, quiet: Bool, streamsToStdout: Bool = false) {
        self.verb = verb
        if quiet || (streamsToStdout && !json && isatty(1) == 1 && isatty(2) == 1) {
            mode = .quiet
        } else if json {
            mode = .json
        } else if isatty(2) == 1 {
            mode = .bar
        } else {
            mode = .plain
        }
    }

    private var elapsedSeconds: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Reports `done` users; `fraction` (0...1) when the total is known (file bytes read, or
    /// users out of a known count).
    func update(done: Int, fraction: Double?, force: Bool = false) {
        let now = ContinuousClock.now
        let interval: Duration = switch mode {
        case .bar: .milliseconds(100)
        case .plain: Self.plainInterval
        case .json: .seconds(1)
        case .quiet: .seconds(1_000_000)
        }
        if mode == .quiet { return }
        if force && lastShown == nil { return }  // the closing report only follows earlier ones
        if !force, let lastShown, now - lastShown < interval { return }
        // Short work shows nothing: the first report waits half a second (a plain line, its interval).
        if !force, lastShown == nil, now - started < (mode == .plain ? interval : .milliseconds(500)) { return }
        lastShown = now
        let seconds = max(elapsedSeconds, 0.001)
        let rate = Double(done) / seconds
        let eta: Double? = fraction.flatMap { $0 > 0.001 && $0 < 1 ? seconds * (1 - $0) / $0 : nil }
        switch mode {
        case .bar:
            let width = 24
            let filled = fraction.map { Int(($0 * Double(width)).rounded(.down)) } ?? 0
            let bar = fraction == nil ? "" : "[" + String(repeating: "#", count: min(width, filled))
                + String(repeating: ".", count: max(0, width - filled)) + "] "
                + String(format: "%3.0f%% ", min(1, fraction!) * 100)
            let users = done == 1 ? "1 user" : Self.grouped(done) + " users"
            let line = "\(verb) \(bar)\(users)  \(Self.grouped(Int(rate)))/s"
                + (eta.map { "  ETA \(Self.clock($0))" } ?? "")
            write("\r\u{1B}[2K" + line)
            drewBar = true
        case .plain:
            let percent = fraction.map { String(format: ", %.0f%%", min(1, $0) * 100) } ?? ""
            write("userctl: \(verb): \(Plural.users(done)), \(Int(rate))/s" + percent
                  + (eta.map { ", about \(Int($0.rounded(.up))) s left" } ?? "") + "\n")
        case .json:
            var fields = "\"progress\":\"\(verb)\",\"done\":\(done),\"rate\":\(Int(rate)),"
                + "\"elapsed_seconds\":\(String(format: "%.1f", seconds))"
            if let fraction { fields += ",\"fraction\":\(String(format: "%.4f", min(1, fraction)))" }
            if let eta { fields += ",\"eta_seconds\":\(String(format: "%.1f", eta))" }
            write("{\(fields)}\n")
        case .quiet:
            break
        }
    }

    /// Erases the bar (the final summary is printed by the command).
    func finish() {
        if drewBar { write("\r\u{1B}[2K") }
        drewBar = false
    }

    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }

    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }

    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        return total >= 3600 ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%d:%02d", total / 60, total % 60)
    }
}

/// Ctrl-C (and SIGTERM) during a long command: the first asks the command to stop after the
/// chunk in flight and say what was done; a second one exits at once.
enum Interruption {
    private static let count = Lock(0)

    static var requested: Bool { count.withLock { $0 > 0 } }

    /// What a second Ctrl-C says as it stops userctl at once: what becomes of the work.
    static var againMessage: String {
        get { message.withLock { $0 } }
        set { message.withLock { $0 = newValue } }
    }
    private static let message = Lock(
        "userctl: interrupted again; stopping now (what the daemon already acknowledged stays)")

    /// Installs the handlers once (later calls do nothing). The sources are made inside the
    /// lock that keeps them alive for the process.
    static func install() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    let times = count.withLock { value -> Int in
                        value += 1
                        return value
                    }
                    if times > 1 {
                        Console.err(againMessage)
                        exit(130)
                    }
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Kept alive for the process.
    private static let sources = Lock<[any DispatchSourceSignal]>([])
}
