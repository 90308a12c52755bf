import Foundation
import PackagePlugin

/// Embeds the package's top-level `Schema/*.sql` migrations into the target as Swift source,
/// so the built `ledger` carries its schema and never looks for files in the current directory.
@main
struct SchemaPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let schema = context.package.directoryURL.appending(path: "Schema")
        let files = try FileManager.default.contentsOfDirectory(at: schema, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSchema.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) migrations from Schema/",
                executable: try context.tool(named: "EmbedSchema").url,
                arguments: [output.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
