import Foundation
import PackagePlugin

/// Embeds the target's `openapi.json` (the OpenAPI document of `ledger serve`, kept in the
/// repository beside the routes) as Swift source (`EmbeddedOpenAPI`), so the server answers
/// `GET /openapi.json` wherever its binary runs.
@main
struct OpenAPIPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "Sources/\(target.name)")
        let document = directory.appending(path: "openapi.json")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedOpenAPI.swift")
        return [
            .buildCommand(
                displayName: "Embedding the OpenAPI document of \(target.name)",
                executable: try context.tool(named: "EmbedFiles").url,
                arguments: ["EmbeddedOpenAPI", output.path, directory.path, document.path],
                inputFiles: [document],
                outputFiles: [output]
            )
        ]
    }
}
