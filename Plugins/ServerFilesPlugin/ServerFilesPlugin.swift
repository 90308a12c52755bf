import Foundation
import PackagePlugin

/// Embeds the files `ledger serve` answers with as Swift source, so the server answers them
/// wherever its binary runs: the target's `openapi.json` (the OpenAPI document, kept in the
/// repository beside the routes) as `EmbeddedOpenAPI`, and every file of its `Console/` (the
/// console's page, style sheet and script) as `EmbeddedConsole`.
@main
struct ServerFilesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "Sources/\(target.name)")
        let document = directory.appending(path: "openapi.json")
        let console = directory.appending(path: "Console")
        let pages = try FileManager.default.contentsOfDirectory(at: console, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.path < $1.path }
        return [
            try embed("EmbeddedOpenAPI", root: directory, files: [document], context: context,
                      displayName: "Embedding the OpenAPI document of \(target.name)"),
            try embed("EmbeddedConsole", root: console, files: pages, context: context,
                      displayName: "Embedding \(pages.count) console files of \(target.name)"),
        ]
    }

    /// One run of EmbedFiles: `files` (under `root`) into `<name>.swift`.
    private func embed(_ name: String, root: URL, files: [URL], context: PluginContext,
                       displayName: String) throws -> Command {
        let output = context.pluginWorkDirectoryURL.appending(path: "\(name).swift")
        return .buildCommand(displayName: displayName, executable: try context.tool(named: "EmbedFiles").url,
                             arguments: [name, output.path, root.path] + files.map(\.path),
                             inputFiles: files, outputFiles: [output])
    }
}
