/// Why a JSON text was refused, and where.
///
/// ``offset`` counts bytes from zero; ``description`` counts them from one,
/// as a person does: an error in the first byte reads "at byte 1".
public struct JSONSyntaxError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What is wrong, without the position: `"unterminated string"`.
    public var message: String
    /// The zero-based offset of the offending byte in the input.
    public var offset: Int

    /// An error with the given message at the given zero-based byte offset.
    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// The message and the one-based byte position: `"unterminated string at byte 17"`.
    public var description: String {
        "\(message) at byte \(offset + 1)"
    }
}
