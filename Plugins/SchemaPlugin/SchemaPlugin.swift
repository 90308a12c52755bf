import Foundation
import PackagePlugin

/// Embeds the package's top-level `Schema/` into the target as Swift source (`EmbeddedSchema`):
/// the versioned migrations (`Schema/migrations/*.sql`), the definitions
/// (`Schema/definitions/**/*.sql`) and the field rules (`Schema/definitions/rules/*.json`), so
/// the built `ledger` carries its schema and the library reads the same rules as the database.
@main
struct SchemaPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let schema = context.package.directoryURL.appending(path: "Schema")
        let enumerator = FileManager.default.enumerator(at: schema, includingPropertiesForKeys: nil)
        let files = (enumerator?.allObjects as? [URL] ?? [])
            .filter { ["sql", "json"].contains($0.pathExtension) }
            .sorted { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSchema.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) schema files from Schema/",
                executable: try context.tool(named: "EmbedFiles").url,
                arguments: ["EmbeddedSchema", output.path, schema.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
