import Dispatch
import Foundation
import Glibc
import UserListClient

/// Where the TUI's inputs come from: the terminal (a reader thread decoding keys), the client's
/// updates, a tick for the spinner and highlights, and signals. All of them feed one queue
/// (`feed`), handled on the main task.
extension TUI {
    func installSignalHandlers() -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                Terminal.restore()
                exit(number == SIGINT ? 130 : 128 + number)
            }
            source.resume()
            sources.append(source)
        }
        signal(SIGWINCH, SIG_IGN)
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        let feed = self.feed
        resize.setEventHandler { feed.yield(.resized) }
        resize.resume()
        sources.append(resize)
        return sources
    }

    func startProducers() {
        let feed = self.feed
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var decoder = KeyDecoder()
            while true {
                let n = read(0, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { feed.yield(.endOfInput); return }
                let keys = decoder.decode(Array(buffer[0..<n]))
                if !keys.isEmpty { feed.yield(.keys(keys)) }
            }
        }
        reader.start()
        let client = self.client
        Task {
            for await update in client.updates { feed.yield(.update(update)) }
        }
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(120))
                feed.yield(.tick)
            }
        }
    }
}
