import Foundation

/// Keeps secrets and values out of error descriptions.
enum Redaction {
    /// Joins the lines of a libpq message (which ends in a newline and indents hints with a tab) with "; ".
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }

    /// Replaces every double-quoted fragment: data exceptions (class 22) quote the offending input.
    static func quotedValues(in message: String) -> String {
        message.replacing(#/"[^"]*"/#, with: "\"…\"")
    }

    /// libpq's connection failure message without the password, whether it appears as
    /// `password=…`, as URL user info, or verbatim. The conninfo itself is never included.
    static func connectionMessage(_ raw: String, conninfo: String) -> String {
        var message = oneLine(raw)
        let secrets = passwords(in: conninfo)
        if let secrets {
            if !secrets.isEmpty { message = message.replacingOccurrences(of: conninfo, with: "<conninfo>") }
            for secret in secrets where !secret.isEmpty {
                message = message.replacingOccurrences(of: secret, with: "***")
            }
        } else {
            // An unparsable conninfo: libpq quotes the fragment it choked on, which may be the password.
            message = quotedValues(in: message)
        }
        message = message.replacing(#/(?i)password\s*=\s*('[^']*'|\S+)/#, with: "password=***")
        message = message.replacing(#/://([^:/@\s]*):[^@\s]*@/#) { "://\($0.output.1):***@" }
        return message
    }

    /// The password values a conninfo holds (`PQconninfoParse`), both as decoded and as written in a URL;
    /// nil when libpq cannot parse the conninfo.
    static func passwords(in conninfo: String) -> [String]? {
        guard let options = ConnectionConfiguration.options(of: conninfo) else { return nil }
        var found = options.filter { $0.keyword == "password" }.map(\.value)
        if let match = conninfo.firstMatch(of: #/://[^:/@\s]*:([^@\s]*)@/#) {
            found.append(String(match.output.1))
        }
        return found
    }
}
