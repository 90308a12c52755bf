/// The chart file could not be written.
struct ChartError: Error, CustomStringConvertible {
    var description: String
}
