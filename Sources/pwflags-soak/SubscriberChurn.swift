import Foundation
import PWFlagsTestKit
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Opens and closes subscribers at random over the run, keeping between a minimum and a maximum open: raw
/// subscribers of every key, raw subscribers of a few keys (some of them reading slowly), library mirrors.
final class SubscriberChurn: Sendable {
    private let socketPath: String
    private let universe: [String]
    private let bounds: ClosedRange<Int>
    private let tally: Tally
    private let seed: UInt64
    /// Held while a subscriber is opened or closed, so that a measurement can pause the churn.
    private let gate = NSLock()
    private let live = Locked<[any SoakSubscriber]>([])
    private let everyone = Locked<[any SoakSubscriber]>([])
    private let created = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(socketPath: String, universe: [String], bounds: ClosedRange<Int>, tally: Tally, seed: UInt64) {
        self.socketPath = socketPath
        self.universe = universe
        self.bounds = bounds
        self.tally = tally
        self.seed = seed
    }

    /// The subscribers open now.
    var liveSubscribers: [any SoakSubscriber] {
        live.withLock { $0 }
    }

    /// Every subscriber opened, closed ones included.
    var allSubscribers: [any SoakSubscriber] {
        everyone.withLock { $0 }
    }

    /// Opens one subscriber of each kind, a slow one among them, then starts the churn thread.
    func start() {
        var random = SeededGenerator(seed: seed)
        openRaw(keys: nil, slow: false, random: &random)
        openRaw(keys: nil, slow: true, random: &random)
        openRaw(keys: randomKeys(random: &random), slow: false, random: &random)
        openRaw(keys: randomKeys(random: &random), slow: true, random: &random)
        openLibrary()
        openLibrary()
        let churnSeed = random.next()
        let thread = Thread { [self] in
            run(random: SeededGenerator(seed: churnSeed))
            finished.signal()
        }
        thread.name = "soak-churn"
        thread.start()
    }

    /// Stops opening and closing; the subscribers open stay open.
    func stop() {
        stopping.store(true, ordering: .releasing)
        _ = finished.wait(timeout: .now() + .seconds(30))
    }

    /// Runs `body` while no subscriber is being opened or closed.
    func paused<Result>(_ body: () throws -> Result) rethrows -> Result {
        gate.lock()
        defer { gate.unlock() }
        return try body()
    }

    /// Closes every subscriber still open.
    func closeAll() {
        let open = live.withLock { live in
            defer { live = [] }
            return live
        }
        for subscriber in open { close(subscriber) }
    }

    private func run(random: SeededGenerator) {
        var random = random
        while !stopping.load(ordering: .acquiring) {
            let until = MonotonicClock.nanoseconds() + UInt64(Int.random(in: 500...2000, using: &random)) * 1_000_000
            while MonotonicClock.nanoseconds() < until, !stopping.load(ordering: .acquiring) { usleep(20_000) }
            guard !stopping.load(ordering: .acquiring) else { return }
            paused {
                let count = live.withLock { $0.count }
                let opening = count < bounds.lowerBound || (count < bounds.upperBound && Bool.random(using: &random))
                if opening {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<4: openRaw(keys: nil, slow: Int.random(in: 0..<3, using: &random) == 0, random: &random)
                    case 4..<7:
                        let keys = randomKeys(random: &random)
                        openRaw(keys: keys, slow: Int.random(in: 0..<3, using: &random) == 0, random: &random)
                    default: openLibrary()
                    }
                } else {
                    let victim = live.withLock { live -> (any SoakSubscriber)? in
                        guard !live.isEmpty else { return nil }
                        return live.remove(at: Int.random(in: 0..<live.count, using: &random))
                    }
                    if let victim { close(victim) }
                }
            }
        }
    }

    /// One to twelve keys of the universe, present in the file or not (yet).
    private func randomKeys(random: inout SeededGenerator) -> [String] {
        Array(universe.shuffled(using: &random).prefix(Int.random(in: 1...12, using: &random)))
    }

    private func nextName(_ kind: String) -> String {
        "\(kind)-\(created.wrappingAdd(1, ordering: .relaxed).newValue)"
    }

    private func openRaw(keys: [String]?, slow: Bool, random: inout SeededGenerator) {
        let kind = (keys == nil ? "all" : "keyed") + (slow ? "-slow" : "")
        let subscriber = RawSubscriber(
            name: nextName(kind), keys: keys, slow: slow, socketPath: socketPath, tally: tally,
            seed: random.next())
        tally.update { $0.rawOpened += 1 }
        everyone.withLock { $0.append(subscriber) }
        guard subscriber.open() else { return }
        live.withLock { $0.append(subscriber) }
    }

    private func openLibrary() {
        let subscriber = LibrarySubscriber(name: nextName("library"), socketPath: socketPath)
        tally.update { $0.libraryOpened += 1 }
        everyone.withLock { $0.append(subscriber) }
        live.withLock { $0.append(subscriber) }
        if !subscriber.waitForSnapshot() {
            tally.fail(.subscriber, "\(subscriber.name): no first snapshot within 15 s")
        }
    }

    private func close(_ subscriber: any SoakSubscriber) {
        subscriber.close()
        tally.update { counts in
            if subscriber is LibrarySubscriber { counts.libraryClosed += 1 } else { counts.rawClosed += 1 }
        }
    }
}
