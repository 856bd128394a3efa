import Foundation
import UserListWire

/// `handover.json` through the wire's byte-level JSON (see `SessionStateJSON`): a restart's
/// clients wait while it is written and read, a thousand streams and states of it. Same shape
/// as the `Codable` conformance, which stays as the fallback reader.
extension Handover.File {
    func jsonBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 * (streams.count + 1))
        out.append(contentsOf: #"{"streams":"#.utf8)
        SessionStateJSON.writeArray(streams, into: &out) { stream, out in
            out.append(contentsOf: #"{"name":"#.utf8)
            JSONWriter.writeString(stream.name, into: &out)
            out.append(contentsOf: #","key":"#.utf8)
            SessionStateJSON.write(stream.key, into: &out)
            out.append(contentsOf: #","epoch":"#.utf8)
            JSONWriter.writeInt(Int64(stream.epoch), into: &out)
            out.append(contentsOf: #","seq":"#.utf8)
            JSONWriter.writeInt(Int64(stream.seq), into: &out)
            out.append(contentsOf: #","awaitingSnapshot":"#.utf8)
            SessionStateJSON.writeBool(stream.awaitingSnapshot, into: &out)
            out.append(contentsOf: #","unsent":"#.utf8)
            JSONWriter.writeString(stream.unsent.base64EncodedString(), into: &out)
            if let unhandled = stream.unhandled, !unhandled.isEmpty {
                out.append(contentsOf: #","unhandled":"#.utf8)
                JSONWriter.writeString(unhandled.base64EncodedString(), into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #","states":"#.utf8)
        SessionStateJSON.writeArray(states, into: &out) { held, out in
            out.append(contentsOf: #"{"key":"#.utf8)
            SessionStateJSON.write(held.key, into: &out)
            out.append(contentsOf: #","list":"#.utf8)
            JSONWriter.writeInt(Int64(held.list), into: &out)
            out.append(contentsOf: #","state":"#.utf8)
            SessionStateJSON.write(held.state, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #","lists":"#.utf8)
        SessionStateJSON.writeArray(lists, into: &out) { SessionStateJSON.write($0, into: &$1) }
        if let throughStore {
            out.append(contentsOf: #","throughStore":"#.utf8)
            SessionStateJSON.writeBool(throughStore, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// nil when `value` is not the shape written above (the caller falls back to `JSONDecoder`).
    init?(json value: JSONValue) {
        guard case .array(let streamItems)? = value["streams"], case .array(let stateItems)? = value["states"],
              case .array(let listItems)? = value["lists"] else { return nil }
        self.init()
        streams.reserveCapacity(streamItems.count)
        for item in streamItems {
            guard case .string(let name)? = item["name"], let key = item["key"].flatMap(SessionStateJSON.sessionKey),
                  let epoch = item["epoch"]?.int64Value.flatMap(Int.init(exactly:)),
                  let seq = item["seq"]?.int64Value.flatMap(Int.init(exactly:)),
                  case .bool(let awaiting)? = item["awaitingSnapshot"],
                  let unsent = item["unsent"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else { return nil }
            var unhandled: Data?
            if let text = item["unhandled"] {
                guard let decoded = text.stringValue.flatMap({ Data(base64Encoded: $0) }) else { return nil }
                unhandled = decoded
            }
            streams.append(Handover.Stream(name: name, key: key, epoch: epoch, seq: seq, awaitingSnapshot: awaiting,
                                           unsent: unsent,
                                           unhandled: unhandled))
        }
        states.reserveCapacity(stateItems.count)
        for item in stateItems {
            guard let key = item["key"].flatMap(SessionStateJSON.sessionKey),
                  let list = item["list"]?.int64Value.flatMap(Int.init(exactly:)),
                  let state = item["state"].flatMap(SessionStateJSON.navigationState) else { return nil }
            states.append(Handover.HeldState(key: key, list: list, state: state))
        }
        for item in listItems {
            guard let list = SessionStateJSON.listState(item) else { return nil }
            lists.append(list)
        }
        switch value["throughStore"] {
        case nil, .null?: throughStore = nil
        case .bool(let flag)?: throughStore = flag
        default: return nil
        }
    }
}
