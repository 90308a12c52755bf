import Hummingbird

/// `GET /openapi.json`: the OpenAPI 3.1 document of every route, kept in the repository as
/// `Sources/LedgerServer/openapi.json` and embedded in the build. No key needed.
enum OpenAPIRoute {
    /// The document's text, as kept in the repository.
    static let document: String = EmbeddedOpenAPI.files[0].text

    static func add(to router: Router<LedgerRequestContext>) {
        router.get("/openapi.json") { _, _ in Response.json(document) }
    }
}
