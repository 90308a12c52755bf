// The reliability and security suites (issue 7) live in this target.
