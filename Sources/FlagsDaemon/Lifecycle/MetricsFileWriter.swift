import FlagsCore
import FlagsProtocol
import FoundationEssentials
import UnixIO

/// Writes the metrics to `MetricsFile` every `MetricsInterval`, for node_exporter's textfile collector.
///
/// The file holds the Prometheus text format 0.0.4, the only one the collector reads, and is replaced atomically
/// (a temporary file beside it, renamed over it), so that the collector never reads half a file; the temporary
/// name does not end in `.prom`, which the collector would read. Mode 0644: the collector runs as another user.
/// The keys are read again at every round, so that a reload turns the file on, off or elsewhere; without a file
/// the writer waits for a reload instead.
final class MetricsFileWriter: Service {
    private let server: SocketServer
    private let reloader: Reloader
    private let logger: Logger
    /// The last failure logged, so that a directory that stays unwritable is logged once, not every interval.
    private let lastProblem = Locked<String?>(nil)

    init(server: SocketServer, reloader: Reloader, logger: Logger) {
        self.server = server
        self.reloader = reloader
        self.logger = logger
    }

    func run() async {
        while !Task.isCancelled {
            // Cleared before the keys are read: a reload that lands meanwhile is seen at the next wait.
            reloader.reloaded.clear()
            let configuration = await reloader.configuration
            if let path = configuration.metricsFile {
                await write(to: path)
                try? await Task.sleep(for: configuration.metricsInterval)
            } else {
                // No file: nothing to do until a reload sets one; no timer wakes the daemon meanwhile.
                await reloader.reloaded.wait()
            }
        }
    }

    /// One round: the text from the server's loop, written in place of the file.
    func write(to path: String) async {
        let text = await server.metricsText(format: .prometheus)
        let directory = PathComponents.directory(of: path)
        let name = PathComponents.name(of: path)
        do {
            try AtomicFile.write(Array(text.utf8), to: name, in: directory.isEmpty ? "/" : directory, mode: 0o644)
            if lastProblem.withLock({ $0.take() }) != nil {
                logger.notice("the metrics file is written again", ["METRICS_FILE": path])
            }
        } catch {
            let problem = String(describing: error)
            let isNew = lastProblem.withLock { last in
                defer { last = problem }
                return last != problem
            }
            if isNew {
                logger.warning("cannot write the metrics file: \(problem)", ["METRICS_FILE": path])
            }
        }
    }
}
