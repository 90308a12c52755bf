// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PurchaseLedger",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PurchaseLedger", targets: ["PurchaseLedger"]),
        .library(name: "Postgres", targets: ["Postgres"]),
        .library(name: "LedgerServer", targets: ["LedgerServer"]),
        .library(name: "LedgerJSON", targets: ["LedgerJSON"]),
        .library(name: "StoreAPIs", targets: ["StoreAPIs"]),
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
        // `ledger serve`: the HTTP server, its lifecycle, logs and Prometheus metrics.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The store clients' HTTP: pooled connections, timeouts, TLS to the real hosts.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // ByteBuffer and HTTPHeaders: the types of async-http-client's own API.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
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
        // Turns files into Swift source at build time, so the binary carries them: Schema/
        // (migrations and definitions) for the library, the OpenAPI document and the console's
        // page for the server.
        .executableTarget(name: "EmbedFiles", path: "Sources/EmbedFiles"),
        .plugin(
            name: "SchemaPlugin",
            capability: .buildTool(),
            dependencies: ["EmbedFiles"]
        ),
        .plugin(
            name: "ServerFilesPlugin",
            capability: .buildTool(),
            dependencies: ["EmbedFiles"]
        ),
        // The domain: commands, events, projections, queries, migrations, store notifications.
        .target(
            name: "PurchaseLedger",
            dependencies: [
                "Postgres", "LedgerJSON", "StoreAPIs",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            plugins: ["SchemaPlugin"]
        ),
        // The HTTP face (`ledger serve`): routes mapping HTTP to library calls, API keys, Google's
        // OIDC push tokens, request logs, limits and metrics. No rules of its own.
        .target(
            name: "LedgerServer",
            dependencies: [
                "PurchaseLedger", "Postgres", "LedgerJSON", "LedgerOutput",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            exclude: ["openapi.json", "Console"],
            plugins: ["ServerFilesPlugin"]
        ),
        // The clients of the Play Developer API and the App Store Server API: their credentials
        // (a service-account token, an ES256 JWT), typed answers and typed errors. A leaf: it knows
        // nothing of the ledger.
        .target(
            name: "StoreAPIs",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Realistic ledger traffic from a fixed seed, for `ledger demo`, the benchmark and tests.
        .target(name: "LedgerDemo", dependencies: ["PurchaseLedger", "LedgerJSON"]),
        // The contract's printed forms, for the command and the server: ingest's result lines, the
        // queries' JSON, analytics reports as CSV and JSON, and their charts as SVG.
        .target(name: "LedgerOutput", dependencies: ["PurchaseLedger", "Postgres", "LedgerJSON"]),
        // The command: argument parsing and output formatting only.
        .executableTarget(
            name: "ledger",
            dependencies: [
                "PurchaseLedger", "LedgerJSON", "LedgerDemo", "LedgerOutput", "LedgerServer", "StoreAPIs",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Test helpers: a fresh migrated database per test, fixtures. Used by tests only.
        .target(
            name: "LedgerTestSupport",
            dependencies: [
                "PurchaseLedger", "Postgres", "LedgerJSON", "StoreAPIs",
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
                // The webhooks' measure: a fast receiver on loopback.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres"]),
        .testTarget(name: "LedgerJSONTests", dependencies: ["LedgerJSON"]),
        // The store clients over real loopback HTTP against the shared fake of both stores.
        .testTarget(name: "StoreAPIsTests", dependencies: [
            "StoreAPIs", "LedgerTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ]),
        // The ledger asking the stores (jobs, reconciliations) against the fake and a real database.
        .testTarget(name: "StoreJobsTests", dependencies: ["PurchaseLedger", "StoreAPIs", "Postgres", "LedgerJSON", "LedgerTestSupport"]),
        // Fixtures/LegacySchema: the first releases' migrations, as released, for the adoption tests.
        .testTarget(name: "PurchaseLedgerTests", dependencies: ["PurchaseLedger", "Postgres", "LedgerJSON", "LedgerDemo", "LedgerOutput", "LedgerTestSupport",
                                                                .product(name: "Logging", package: "swift-log")],
                    exclude: ["Fixtures"]),
        // Runs the built `ledger` executable as operators and scenarios do.
        .testTarget(name: "LedgerCLITests", dependencies: ["ledger", "PurchaseLedger", "Postgres", "LedgerDemo", "LedgerTestSupport"]),
        // `ledger serve` over real loopback HTTP against a real database.
        .testTarget(name: "LedgerServerTests", dependencies: [
            "ledger", "LedgerServer", "PurchaseLedger", "Postgres", "LedgerJSON", "LedgerTestSupport",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ]),
        // Races, crashes, hostile input, least privilege and secrets, each proven by a test.
        .testTarget(name: "ReliabilityTests", dependencies: ["ledger", "PurchaseLedger", "Postgres", "LedgerJSON", "LedgerDemo", "LedgerTestSupport"]),
    ]
)
