/// The size limits of the protocol, in bytes of UTF-8 (never characters).
///
/// Asymmetric on purpose: clients send small intents, while the server sends whole snapshots of
/// large lists.
public enum FrameLimits {
    /// Largest frame body a client may send: 1 MiB.
    public static let clientToServer = 1 << 20
    /// Largest frame body the server may send: 16 MiB.
    public static let serverToClient = 16 << 20
    /// Bytes in the length prefix.
    public static let headerSize = 4
}
