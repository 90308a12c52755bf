import CLibPQ

extension ConnectionConfiguration {
    /// The settings as one `key='value'` conninfo string (a URL is expanded by `PQconninfoParse`),
    /// with `database` applied: for tools such as `pgbench` that take one conninfo argument.
    /// Contains the password when the configuration has one: do not print it.
    public func keywordConninfo() throws -> String {
        var pairs: [(String, String)] = []
        if !conninfo.isEmpty {
            guard let options = Self.options(of: conninfo) else {
                throw PostgresError(kind: .connection, message: "the connection string is not valid")
            }
            pairs = options.map { ($0.keyword, $0.value) }
        }
        if let database {
            pairs.removeAll { $0.0 == "dbname" }
            pairs.append(("dbname", database))
        }
        return Self.keywordConninfo(pairs)
    }

    /// Keyword/value pairs as one `key='value'` conninfo string, each value quoted and escaped
    /// as libpq reads it.
    static func keywordConninfo(_ pairs: [(keyword: String, value: String)]) -> String {
        pairs.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            return "\(key)='\(escaped)'"
        }.joined(separator: " ")
    }

    /// The keywords a conninfo or URL sets, with their values, in libpq's order (`PQconninfoParse`,
    /// `PQconninfoFree`); nil when libpq cannot parse it. Holds the password when there is one.
    static func options(of conninfo: String) -> [(keyword: String, value: String)]? {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &message) else {
            if let message { PQfreemem(message) }
            return nil
        }
        defer { PQconninfoFree(options) }
        return Self.options(in: options)
    }

    /// The keywords set in a libpq option array (`PQconninfoParse`, `PQconninfo`), with their
    /// values, in its order; the caller frees the array.
    static func options(in options: UnsafeMutablePointer<PQconninfoOption>) -> [(keyword: String, value: String)] {
        var found: [(keyword: String, value: String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                found.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        return found
    }
}
