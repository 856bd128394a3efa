import ThreadLocks
import UserListClient

extension UserListClient {
    /// Waits until `condition` (on this client's document or connection) holds, re-checked after
    /// each update the client publishes: a patch, an event or a connection change from the daemon,
    /// never a timer. False only past the generous deadline (a hang).
    ///
    /// Takes over `updates`: a test that calls this reads no updates of its own.
    package func sees(
        isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
    ) async -> Bool {
        await ClientPulses.pulse(for: self).until(isolation: isolation, condition)
    }
}

/// One pulse per client, beaten by a task that reads the client's `updates` until it closes (a
/// stream has one reader, and a reader that stops would end it: so one task for the client's life).
private enum ClientPulses {
    private struct Entry {
        weak var client: UserListClient?
        let pulse: Pulse
    }

    private static let entries = Lock<[ObjectIdentifier: Entry]>([:])

    static func pulse(for client: UserListClient) -> Pulse {
        let (pulse, isNew) = entries.withLock { entries -> (Pulse, Bool) in
            // A dead entry under the same identifier was another client at the same address.
            entries = entries.filter { $0.value.client != nil }
            if let entry = entries[ObjectIdentifier(client)], entry.client === client { return (entry.pulse, false) }
            let pulse = Pulse()
            entries[ObjectIdentifier(client)] = Entry(client: client, pulse: pulse)
            return (pulse, true)
        }
        if isNew {
            let updates = client.updates
            Task { for await _ in updates { pulse.beat() } }
        }
        return pulse
    }
}
