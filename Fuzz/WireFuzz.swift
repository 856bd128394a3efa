// libFuzzer entry point for the wire layer. Built by scripts/fuzz-wire.sh together with the
// UserListWire sources into one module (no package change), so it can use internal API too.
//
// Whatever the bytes, nothing here may crash, and these must hold:
// - a parsed JSON value re-serializes to bytes that parse back to an equal value;
// - `JSONSlice` accepts exactly what the parser accepts, and its members and elements parse to
//   the parser's own;
// - a parsed message re-encodes to JSON that parses back to an equal message;
// - for two parsed values a and b, apply(diff(a, b), a) == b, also after the ops round-trip
//   through their wire form.

@_cdecl("LLVMFuzzerTestOneInput")
public func wireFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    fuzzJSON(bytes)
    fuzzSlice(bytes)
    fuzzFrames(bytes)
    fuzzDiff(bytes)
    return 0
}

private func fuzzJSON(_ bytes: [UInt8]) {
    guard let value = try? JSONValue(parsing: bytes) else { return }
    let again: JSONValue
    do { again = try JSONValue(parsing: value.serialized()) } catch {
        fatalError("serialized output does not parse: \(error)")
    }
    precondition(again == value, "round trip changed the value")

    if let message = try? ClientMessage(json: value) {
        precondition((try? ClientMessage(json: message.json)) == message, "client message round trip")
    }
    if let message = try? ServerMessage(json: value) {
        precondition((try? ServerMessage(json: message.json)) == message, "server message round trip")
    }
    // Treat the value as a patch against a small document.
    if case .array(let raw) = value {
        let ops = raw.compactMap { try? PatchOperation(json: $0) }
        let document: JSONValue = ["a": [1, 2, ["b": "c"]], "d": ["e": nil], "~/": true]
        _ = try? JSONPatch.apply(ops, to: document)
    }
    if case .string(let text) = value {
        if let pointer = JSONPointer(parsing: text) {
            precondition(JSONPointer(parsing: pointer.description) == pointer, "pointer round trip")
        }
    }
}

private func fuzzSlice(_ bytes: [UInt8]) {
    let value = try? JSONValue(parsing: bytes)
    let slice = try? JSONSlice(validating: bytes)
    precondition((value == nil) == (slice == nil), "the slice and the parser disagree on whether this is JSON")
    guard let value, let slice else { return }
    precondition((try? slice.parsed()) == value, "a slice parses to another value")
    if case .object(let object) = value, let members = try? slice.members() {
        for (key, member) in members where members.last(where: { $0.key == key })?.value.range == member.range {
            precondition((try? member.parsed()) == object[key], "a member's bytes are not its value")
        }
    } else if case .array(let array) = value, let elements = try? slice.elements() {
        precondition(elements.count == array.count, "elements miscounted")
        for (element, expected) in zip(elements, array) {
            precondition((try? element.parsed()) == expected, "an element's bytes are not its value")
        }
    } else {
        precondition((try? slice.members()) == nil && (try? slice.elements()) == nil, "a scalar has parts")
    }
}

private func fuzzFrames(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let chunk = Int(first % 13) + 1
    var decoder = FrameDecoder(maximumFrameSize: 1 << 16)
    var offset = 0
    outer: while offset < bytes.count {
        decoder.feed(bytes[offset..<min(offset + chunk, bytes.count)])
        offset += chunk
        while true {
            do {
                guard let frame = try decoder.nextFrame() else { break }
                precondition(!frame.isEmpty && frame.count <= 1 << 16)
                _ = try? ClientMessage(frame: frame)
                _ = try? ServerMessage(frame: frame)
            } catch {
                if error.isFatal { break outer }
            }
        }
    }
    _ = try? decoder.finish()
}

private func fuzzDiff(_ bytes: [UInt8]) {
    // Two documents separated by a NUL byte.
    guard let split = bytes.firstIndex(of: 0),
          let a = try? JSONValue(parsing: bytes[..<split]),
          let b = try? JSONValue(parsing: bytes[(split + 1)...])
    else { return }
    let ops = JSONPatch.diff(from: a, to: b)
    guard let applied = try? JSONPatch.apply(ops, to: a) else { fatalError("diff produced a patch that does not apply") }
    precondition(applied == b, "apply(diff(a, b), a) != b")
    let wire = ops.map { try? PatchOperation(json: JSONValue(parsing: $0.json.serialized())) }
    precondition(wire == ops.map(Optional.some), "patch operations do not round-trip")
}
