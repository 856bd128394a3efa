/// Why a JSON Patch could not be applied. For a client this always means the same thing: its copy
/// of the state has drifted, so it sends `resync` and waits for a snapshot.
public struct PatchError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The path (or `from`) names a location that does not exist.
        case pathNotFound
        /// An array index that is not a number, has leading zeros, or is out of range.
        case invalidArrayIndex
        /// A path goes through a value that is neither an object nor an array.
        case notAContainer
        /// A `test` operation found a different value.
        case testFailed
        /// A `move` whose `from` is an ancestor of its `path`.
        case moveIntoOwnChild
    }

    public let reason: Reason
    /// Position of the failing operation in the patch.
    public let operationIndex: Int
    /// The pointer that could not be resolved or tested.
    public let pointer: JSONPointer

    public var description: String {
        let what: String
        switch reason {
        case .pathNotFound: what = "no value at \"\(pointer)\""
        case .invalidArrayIndex: what = "invalid array index in \"\(pointer)\""
        case .notAContainer: what = "\"\(pointer)\" goes through a value that is not an object or array"
        case .testFailed: what = "test failed at \"\(pointer)\""
        case .moveIntoOwnChild: what = "cannot move a value into its own child \"\(pointer)\""
        }
        return "patch operation \(operationIndex) failed: \(what)"
    }
}
