import Foundation

/// A `jsonb` (or `json`) value, kept as the JSON text it was serialized to.
public struct JSONB: Sendable, Hashable, PostgresEncodable, PostgresDecodable {
    /// The serialized JSON, for example `{"a": 1}`.
    public var text: String

    /// Wraps already-serialized JSON text; the server validates it.
    public init(text: String) { self.text = text }

    /// Wraps already-serialized JSON text; the server validates it.
    public init(_ text: String) { self.text = text }

    /// Serializes a value with `JSONEncoder`.
    public init(encoding value: some Encodable, using encoder: JSONEncoder = JSONEncoder()) throws {
        self.text = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Deserializes the text with `JSONDecoder`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    /// Binds the JSON text (text format); write `$1::jsonb` where the type is not inferred.
    public func postgresValue() throws -> PostgresValue {
        guard !text.utf8.contains(0) else { throw PostgresError.nul(in: "a JSONB parameter") }
        return .text(text)
    }

    /// Reads the server's `jsonb` / `json` text output.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) {
        self.text = String(decoding: postgresText, as: UTF8.self)
    }
}
