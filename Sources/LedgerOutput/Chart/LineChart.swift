import Foundation

/// A line chart as SVG text, written by hand: a title, a legend, and one or more panels stacked
/// vertically that share their x axis (evenly spaced periods), each with its own y axis.
public struct LineChart: Sendable {
    /// One line: a value for each x position (nil leaves a gap).
    public struct Series: Sendable {
        public var name: String
        public var color: String
        public var values: [Double?]
        /// False for categories on the x axis (products): points only, no line between them.
        public var joined: Bool

        public init(name: String, color: String, values: [Double?], joined: Bool = true) {
            (self.name, self.color, self.values, self.joined) = (name, color, values, joined)
        }
    }

    /// One plot area with its own y axis.
    public struct Panel: Sendable {
        public var title: String?
        public var yTitle: String
        public var series: [Series]

        public init(title: String?, yTitle: String, series: [Series]) {
            (self.title, self.yTitle, self.series) = (title, yTitle, series)
        }
    }

    /// The label under one x position, and its group (a year), shown on a second line under the
    /// first labelled position and wherever the group changes.
    public struct XLabel: Sendable {
        public var text: String
        public var group: String?

        public init(text: String, group: String?) {
            (self.text, self.group) = (text, group)
        }
    }

    public var title: String
    public var subtitle: String
    public var xTitle: String
    public var xLabels: [XLabel]
    public var panels: [Panel]

    public init(title: String, subtitle: String, xTitle: String, xLabels: [XLabel], panels: [Panel]) {
        (self.title, self.subtitle, self.xTitle, self.xLabels, self.panels) = (title, subtitle, xTitle, xLabels, panels)
    }

    // Layout, in SVG user units.
    let width = 960.0
    let marginLeft = 88.0
    let marginRight = 32.0
    let headerHeight = 96.0
    let panelTitleHeight = 28.0
    let panelGap = 56.0
    /// Space between the y axis and the first and last points.
    let inset = 16.0
    let footerHeight = 64.0
    static let font = "font-family=\"'DejaVu Sans', 'Helvetica Neue', Helvetica, Arial, sans-serif\""

    var plotWidth: Double { width - marginLeft - marginRight }
    /// Shorter panels when there are several.
    var plotHeight: Double { panels.count > 1 ? 200 : 280 }
    var height: Double {
        headerHeight + Double(panels.count) * (panelTitleHeight + plotHeight) + Double(max(0, panels.count - 1)) * panelGap
            + footerHeight
    }

    /// The chart as a standalone SVG document.
    public func svg() -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(fmt(width))" height="\(fmt(height))" \
            viewBox="0 0 \(fmt(width)) \(fmt(height))" \(Self.font) role="img">
            <title>\(escape(title))</title>
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(fmt(marginLeft))" y="34" font-size="20" font-weight="bold" fill="#1a1a1a">\(escape(title))</text>
            <text x="\(fmt(marginLeft))" y="58" font-size="13" fill="#555555">\(escape(subtitle))</text>

            """
        out += legend(y: 82)
        var top = headerHeight
        for (index, panel) in panels.enumerated() {
            out += render(panel, top: top, showXTitle: index == panels.count - 1)
            top += panelTitleHeight + plotHeight + panelGap
        }
        out += "</svg>\n"
        return out
    }

    /// One entry per distinct series name, in order of appearance.
    private func legend(y: Double) -> String {
        var seen: [String] = []
        var entries: [(String, String)] = []
        for series in panels.flatMap(\.series) where !seen.contains(series.name) {
            seen.append(series.name)
            entries.append((series.name, series.color))
        }
        var out = ""
        var x = marginLeft
        for (name, color) in entries {
            out += """
                <line x1="\(fmt(x))" y1="\(fmt(y - 4))" x2="\(fmt(x + 24))" y2="\(fmt(y - 4))" stroke="\(escape(color))" stroke-width="3" stroke-linecap="round"/>
                <circle cx="\(fmt(x + 12))" cy="\(fmt(y - 4))" r="3.5" fill="#ffffff" stroke="\(escape(color))" stroke-width="2"/>
                <text x="\(fmt(x + 32))" y="\(fmt(y))" font-size="13" fill="#1a1a1a">\(escape(name))</text>

                """
            x += 32 + Double(name.count) * 7.5 + 28
        }
        return out
    }

    private func render(_ panel: Panel, top: Double, showXTitle: Bool) -> String {
        var out = ""
        if let title = panel.title {
            out += "<text x=\"\(fmt(marginLeft))\" y=\"\(fmt(top + 18))\" font-size=\"15\" font-weight=\"bold\" fill=\"#1a1a1a\">\(escape(title))</text>\n"
        }
        let plotTop = top + panelTitleHeight
        let plotBottom = plotTop + plotHeight
        let values = panel.series.flatMap { $0.values.compactMap { $0 } }
        let scale = NiceScale(min: min(0, values.min() ?? 0), max: max(values.max() ?? 0, 0))
        func y(_ value: Double) -> Double {
            plotBottom - (value - scale.lower) / (scale.upper - scale.lower) * plotHeight
        }
        let count = xLabels.count
        func x(_ index: Int) -> Double {
            count <= 1 ? marginLeft + plotWidth / 2
                : marginLeft + inset + (plotWidth - 2 * inset) * Double(index) / Double(count - 1)
        }

        // Horizontal grid and y tick labels.
        for tick in scale.ticks {
            let ty = y(tick)
            let isZero = abs(tick) < scale.step / 1e6
            out += "<line x1=\"\(fmt(marginLeft))\" y1=\"\(fmt(ty))\" x2=\"\(fmt(marginLeft + plotWidth))\" y2=\"\(fmt(ty))\" "
                + "stroke=\"\(isZero ? "#888888" : "#e3e3e3")\" stroke-width=\"1\"/>\n"
            out += "<text x=\"\(fmt(marginLeft - 10))\" y=\"\(fmt(ty + 4))\" font-size=\"12\" fill=\"#555555\" text-anchor=\"end\">"
                + "\(escape(scale.label(tick)))</text>\n"
        }
        // Y axis title, rotated.
        let midY = plotTop + plotHeight / 2
        out += "<text x=\"20\" y=\"\(fmt(midY))\" font-size=\"13\" fill=\"#333333\" text-anchor=\"middle\" "
            + "transform=\"rotate(-90 20 \(fmt(midY)))\">\(escape(panel.yTitle))</text>\n"

        // X ticks: as many labels as fit about 64 units apart, evenly picked.
        let fitting = max(2, Int(plotWidth / 64))
        let stride = max(1, Int((Double(count) / Double(fitting)).rounded(.up)))
        var shownGroup: String?
        for index in Swift.stride(from: 0, to: count, by: stride) {
            let tx = x(index)
            out += "<line x1=\"\(fmt(tx))\" y1=\"\(fmt(plotBottom))\" x2=\"\(fmt(tx))\" y2=\"\(fmt(plotBottom + 5))\" stroke=\"#888888\"/>\n"
            out += "<text x=\"\(fmt(tx))\" y=\"\(fmt(plotBottom + 20))\" font-size=\"12\" fill=\"#555555\" text-anchor=\"middle\">"
                + "\(escape(xLabels[index].text))</text>\n"
            if let group = xLabels[index].group, group != shownGroup {
                shownGroup = group
                out += "<text x=\"\(fmt(tx))\" y=\"\(fmt(plotBottom + 35))\" font-size=\"11\" fill=\"#777777\" text-anchor=\"middle\">"
                    + "\(escape(group))</text>\n"
            }
        }
        // The axis line along the bottom.
        out += "<line x1=\"\(fmt(marginLeft))\" y1=\"\(fmt(plotBottom))\" x2=\"\(fmt(marginLeft + plotWidth))\" y2=\"\(fmt(plotBottom))\" stroke=\"#888888\"/>\n"
        if showXTitle {
            out += "<text x=\"\(fmt(marginLeft + plotWidth / 2))\" y=\"\(fmt(plotBottom + 54))\" font-size=\"13\" fill=\"#333333\" "
                + "text-anchor=\"middle\">\(escape(xTitle))</text>\n"
        }

        // The lines, then their points when there are few enough to see.
        for series in panel.series {
            out += "<g class=\"series\" data-name=\"\(escape(series.name))\">\n"
            var run: [String] = []
            func flush() {
                if run.count > 1, series.joined {
                    out += "<polyline fill=\"none\" stroke=\"\(escape(series.color))\" stroke-width=\"2.5\" stroke-linejoin=\"round\" "
                        + "stroke-linecap=\"round\" points=\"\(run.joined(separator: " "))\"/>\n"
                }
                run = []
            }
            for (index, value) in series.values.enumerated() {
                guard let value else { flush(); continue }
                run.append("\(fmt(x(index))),\(fmt(y(value)))")
            }
            flush()
            if count <= 62 || !series.joined {
                for (index, value) in series.values.enumerated() {
                    guard let value else { continue }
                    out += "<circle cx=\"\(fmt(x(index)))\" cy=\"\(fmt(y(value)))\" r=\"\(count <= 31 ? "3.5" : "2.5")\" "
                        + "fill=\"#ffffff\" stroke=\"\(escape(series.color))\" stroke-width=\"2\"/>\n"
                }
            }
            out += "</g>\n"
        }
        return out
    }

    private func fmt(_ value: Double) -> String {
        String(format: "%.1f", locale: Locale(identifier: "en_US_POSIX"), value)
    }

    private func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 cannot hold most control characters, even escaped.
                if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r" {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
