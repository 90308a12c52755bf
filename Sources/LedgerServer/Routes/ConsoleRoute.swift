import Crypto
import HTTPTypes
import Hummingbird

/// `GET /console/` and its assets: the console for support and analysts (README "Console"), a page,
/// a style sheet and a script kept in `Sources/LedgerServer/Console/` and embedded in the build.
/// No key needed: the page holds no data. Its script asks the `/v1` routes with the reader key the
/// person types, kept in the tab's `sessionStorage` and sent only in `Authorization`.
///
/// Every answer forbids what the page does not need (`Content-Security-Policy`: its own origin,
/// no inline script, no framing) and is revalidated before reuse (`Cache-Control: no-cache` with
/// an `ETag`), so a new build's console replaces the old at once. `/console` redirects to
/// `/console/`; an unknown file is 404 `NOT_FOUND`.
enum ConsoleRoute {
    /// A file as served: its bytes, content type and entity tag.
    struct File: Sendable {
        let text: String
        let contentType: String
        let etag: String
    }

    /// The embedded files by name (`index.html`, `console.css`, `console.js`).
    static let files: [String: File] = Dictionary(uniqueKeysWithValues: EmbeddedConsole.files.map { path, text in
        let digest = SHA256.hash(data: Array(text.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        return (path, File(text: text, contentType: contentType(path), etag: "\"\(digest)\""))
    })

    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        .cacheControl: "no-cache",
    ]

    static func add(to router: Router<LedgerRequestContext>) {
        // The router matches `/console` and `/console/` alike; the page's links are absolute, and
        // the bare name is sent on to the canonical one.
        router.get("/console") { request, _ in
            guard request.uri.path.hasSuffix("/") else {
                return Response(status: .permanentRedirect, headers: [.location: "/console/", .cacheControl: "no-cache"])
            }
            return try answer("index.html", request)
        }
        router.get("/console/{file}") { request, context in
            try answer(try context.parameters.require("file"), request)
        }
    }

    private static func answer(_ name: String, _ request: Request) throws -> Response {
        guard let file = files[name] else { throw APIError(.notFound, "NOT_FOUND", "no console file \(name)") }
        var headers = securityHeaders
        headers[.eTag] = file.etag
        if request.headers[.ifNoneMatch] == file.etag {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: file.text)))
    }

    private static func contentType(_ path: String) -> String {
        if path.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if path.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if path.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        return "text/plain; charset=utf-8"
    }
}
