/// What went wrong at the framing layer: the 4-byte big-endian length prefix and the bytes it
/// counts.
///
/// A struct around a private enum (swift-nio's `LengthPrefixError` habit), so new cases do not
/// break callers. `errorCode` says what to send the peer and `isFatal` whether the stream can
/// still be read: after an oversized header nothing later in the stream can be trusted to be a
/// frame boundary, whereas an empty frame costs only its own 4 bytes.
public struct FrameError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Base: Hashable, Sendable {
        case emptyFrame
        case frameTooLarge(length: UInt32, limit: Int)
        case truncated(expected: Int, received: Int)
        case decoderFailed
    }

    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// A length prefix of zero. The stream is still in step; the server answers
    /// `malformed_frame` and keeps the connection.
    public static let emptyFrame = FrameError(.emptyFrame)

    /// A length prefix above the configured maximum, detected from the 4-byte header alone before
    /// any body is buffered.
    public static func frameTooLarge(length: UInt32, limit: Int) -> FrameError {
        FrameError(.frameTooLarge(length: length, limit: limit))
    }

    /// The stream ended inside a frame (in its header or its body).
    public static func truncated(expected: Int, received: Int) -> FrameError {
        FrameError(.truncated(expected: expected, received: received))
    }

    /// Bytes were fed to a decoder that had already hit a fatal error.
    public static let decoderFailed = FrameError(.decoderFailed)

    /// The code to put in the `error` frame sent to the peer.
    public var errorCode: ErrorCode {
        switch base {
        case .frameTooLarge: .frameTooLarge
        default: .malformedFrame
        }
    }

    /// Whether the connection must be closed: the decoder cannot find the next frame boundary.
    public var isFatal: Bool {
        switch base {
        case .emptyFrame: false
        case .frameTooLarge, .truncated, .decoderFailed: true
        }
    }

    public var description: String {
        switch base {
        case .emptyFrame:
            "received a frame of length 0; every frame must hold a JSON object"
        case .frameTooLarge(let length, let limit):
            "frame of \(length) bytes exceeds the limit of \(limit) bytes; "
                + "the connection cannot resynchronise and is closed"
        case .truncated(let expected, let received):
            "connection ended in the middle of a frame: \(received) of \(expected) bytes received"
        case .decoderFailed:
            "the frame decoder already failed; the rest of this stream cannot be framed"
        }
    }
}
