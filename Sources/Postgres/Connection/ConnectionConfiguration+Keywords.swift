import CLibPQ

extension ConnectionConfiguration {
    /// The settings as one `key='value'` conninfo string (a URL is expanded by `PQconninfoParse`),
    /// with `database` applied: for tools such as `pgbench` that take one conninfo argument.
    /// Contains the password when the configuration has one: do not print it.
    public func keywordConninfo() throws -> String {
        var pairs: [(String, String)] = []
        if !conninfo.isEmpty {
            var message: UnsafeMutablePointer<CChar>?
            guard let options = PQconninfoParse(conninfo, &message) else {
                if let message { PQfreemem(message) }
                throw PostgresError(kind: .connection, message: "the connection string is not valid")
            }
            defer { PQconninfoFree(options) }
            var option = options
            while let keyword = option.pointee.keyword {
                if let value = option.pointee.val {
                    pairs.append((String(cString: keyword), String(cString: value)))
                }
                option += 1
            }
        }
        if let database {
            pairs.removeAll { $0.0 == "dbname" }
            pairs.append(("dbname", database))
        }
        return pairs.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            return "\(key)='\(escaped)'"
        }.joined(separator: " ")
    }
}
