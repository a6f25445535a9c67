/// The client library's mirror `get` (issue 6): measured once the library's mirror lands.
enum MirrorBenchmark {
    static func run(socketPath: String, quick: Bool, report: Report) {
        report.add("client library mirror get", "single thread", .nan, "ns", target: "≤ 100", met: false)
        report.add("client library mirror get", "2 threads", .nan, "ns")
    }
}
