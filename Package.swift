// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PurchaseLedger",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PurchaseLedger", targets: ["PurchaseLedger"]),
        .library(name: "Postgres", targets: ["Postgres"]),
        .executable(name: "ledger", targets: ["ledger"]),
        .executable(name: "ledger-bench", targets: ["ledger-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // libpq from Debian's libpq-dev, through pkg-config.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The libpq wrapper: connections, pool, bound queries, rows, errors, pipeline, COPY.
        .target(
            name: "Postgres",
            dependencies: ["CLibPQ"]
        ),
        // Turns Schema/*.sql into Swift source at build time, so the binary carries its migrations.
        .executableTarget(name: "EmbedSchema", path: "Sources/EmbedSchema"),
        .plugin(
            name: "SchemaPlugin",
            capability: .buildTool(),
            dependencies: ["EmbedSchema"]
        ),
        // The domain: commands, events, projections, queries, migrations.
        .target(
            name: "PurchaseLedger",
            dependencies: ["Postgres"],
            plugins: ["SchemaPlugin"]
        ),
        // The command: argument parsing and output formatting only.
        .executableTarget(
            name: "ledger",
            dependencies: [
                "PurchaseLedger",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Test helpers: a fresh migrated database per test, fixtures. Used by tests only.
        .target(
            name: "LedgerTestSupport",
            dependencies: ["PurchaseLedger", "Postgres"],
            path: "Tests/LedgerTestSupport"
        ),
        // The benchmark: every path beside the same server's own baseline (not a timed test).
        .executableTarget(
            name: "ledger-bench",
            dependencies: [
                "PurchaseLedger", "Postgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres"]),
        .testTarget(name: "PurchaseLedgerTests", dependencies: ["PurchaseLedger", "Postgres", "LedgerTestSupport"]),
        // Runs the built `ledger` executable as operators and scenarios do.
        .testTarget(name: "LedgerCLITests", dependencies: ["ledger", "PurchaseLedger", "Postgres", "LedgerTestSupport"]),
        // Races, crashes, hostile input, least privilege and secrets, each proven by a test.
        .testTarget(name: "ReliabilityTests", dependencies: ["ledger", "PurchaseLedger", "Postgres", "LedgerTestSupport"]),
    ]
)
