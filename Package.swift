// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PurchaseLedger",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PurchaseLedger", targets: ["PurchaseLedger"]),
        .library(name: "Postgres", targets: ["Postgres"]),
        .library(name: "LedgerJSON", targets: ["LedgerJSON"]),
        .executable(name: "ledger", targets: ["ledger"]),
        .executable(name: "ledger-bench", targets: ["ledger-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Logger: what an operator must see (retries, reconnects, the rebuild's swap attempts).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Deque: the pool's FIFO of waiting callers.
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // SHA-256, P-256 ECDSA (Crypto); X.509 parsing and chain policy (X509); DER and PEM (SwiftASN1).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // `swift package generate-documentation --target PurchaseLedger` (the DocC catalog; CI builds it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
            dependencies: ["CLibPQ", .product(name: "DequeModule", package: "swift-collections")]
        ),
        // Strict RFC 8259 JSON: a parser that keeps numbers as written (exact decimals), U+0000 and
        // nesting limits, and a streaming writer. No dependencies; nothing ledger-specific.
        .target(name: "LedgerJSON"),
        // Turns Schema/ (migrations and definitions) into Swift source at build time, so the binary carries its schema.
        .executableTarget(name: "EmbedSchema", path: "Sources/EmbedSchema"),
        .plugin(
            name: "SchemaPlugin",
            capability: .buildTool(),
            dependencies: ["EmbedSchema"]
        ),
        // The domain: commands, events, projections, queries, migrations, store notifications.
        .target(
            name: "PurchaseLedger",
            dependencies: [
                "Postgres", "LedgerJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            plugins: ["SchemaPlugin"]
        ),
        // Realistic ledger traffic from a fixed seed, for `ledger demo`, the benchmark and tests.
        .target(name: "LedgerDemo", dependencies: ["PurchaseLedger", "LedgerJSON"]),
        // The contract's printed forms, for the command (and a server): ingest's result lines, the
        // queries' JSON, analytics reports as CSV and JSON.
        .target(name: "LedgerOutput", dependencies: ["PurchaseLedger", "Postgres", "LedgerJSON"]),
        // The command: argument parsing and output formatting only.
        .executableTarget(
            name: "ledger",
            dependencies: [
                "PurchaseLedger", "LedgerJSON", "LedgerDemo", "LedgerOutput",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Test helpers: a fresh migrated database per test, fixtures. Used by tests only.
        .target(
            name: "LedgerTestSupport",
            dependencies: [
                "PurchaseLedger", "Postgres", "LedgerJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/LedgerTestSupport"
        ),
        // The benchmark: every path beside the same server's own baseline (not a timed test).
        .executableTarget(
            name: "ledger-bench",
            dependencies: [
                "PurchaseLedger", "Postgres", "LedgerJSON", "LedgerDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres"]),
        .testTarget(name: "LedgerJSONTests", dependencies: ["LedgerJSON"]),
        // Fixtures/LegacySchema: the first releases' migrations, as released, for the adoption tests.
        .testTarget(name: "PurchaseLedgerTests", dependencies: ["PurchaseLedger", "Postgres", "LedgerJSON", "LedgerDemo", "LedgerOutput", "LedgerTestSupport",
                                                                .product(name: "Logging", package: "swift-log")],
                    exclude: ["Fixtures"]),
        // Runs the built `ledger` executable as operators and scenarios do.
        .testTarget(name: "LedgerCLITests", dependencies: ["ledger", "PurchaseLedger", "Postgres", "LedgerDemo", "LedgerTestSupport"]),
        // Races, crashes, hostile input, least privilege and secrets, each proven by a test.
        .testTarget(name: "ReliabilityTests", dependencies: ["ledger", "PurchaseLedger", "Postgres", "LedgerJSON", "LedgerDemo", "LedgerTestSupport"]),
    ]
)
