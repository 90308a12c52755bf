import Foundation

/// Builds request URLs from a base URL and path segments, each segment percent-encoded.
enum StorePath {
    /// RFC 3986's unreserved characters: all that a segment or a form value keeps as it is.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// `base` (trailing slashes dropped) + `path` + `?query`, the query's names and values encoded.
    static func url(base: String, path: String, query: [(String, String)] = []) -> String {
        var url = base
        while url.hasSuffix("/") { url.removeLast() }
        url += path
        if !query.isEmpty {
            url += "?" + query.map { segment($0.0) + "=" + segment($0.1) }.joined(separator: "&")
        }
        return url
    }
}
