import FlagsCore

/// One metric with its samples, as the exposition formats group them: a name, a type, a help line.
struct MetricFamily: Sendable, Equatable {
    enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// One labelled value.
    struct Sample: Sendable, Equatable {
        var labels: [(String, String)]
        var value: Double

        static func == (lhs: Sample, rhs: Sample) -> Bool {
            lhs.value == rhs.value && lhs.labels.elementsEqual(rhs.labels) { $0 == $1 }
        }
    }

    /// The name without the `_total` of a counter's samples.
    let name: String
    let kind: Kind
    let help: String
    var samples: [Sample] = []
    /// A histogram's one unlabelled series.
    var histogram: Histogram?

    static func counter(_ name: String, _ help: String, _ samples: [Sample]) -> MetricFamily {
        MetricFamily(name: name, kind: .counter, help: help, samples: samples)
    }

    static func gauge(_ name: String, _ help: String, _ value: Double?) -> MetricFamily {
        MetricFamily(name: name, kind: .gauge, help: help, samples: value.map { [Sample(labels: [], value: $0)] } ?? [])
    }
}
