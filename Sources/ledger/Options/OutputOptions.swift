import ArgumentParser

/// `--json` for programs, a table for people otherwise.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print a JSON array instead of a table.")
    var json = false
}
