import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A part of the daemon the event loop serves: the line socket, Varlink and OFREP (each an `EventEngine`), the
/// bus (`BusLoop`), the watched descriptors (`DescriptorWatcher`). Every method runs on the loop's thread.
protocol LoopMember: AnyObject {
    /// `events` happened on `descriptor`, one this member added (`EventLoop.Membership.add`).
    func handle(_ events: Epoll.Events, on descriptor: Int32)

    /// The doorbell rang: another thread may have posted something for this member.
    func woke()

    /// The next time `tick` has something to do (monotonic nanoseconds), nil for none.
    func nextDeadline() -> UInt64?

    /// Runs after a round in which this member handled an event or woke, or once its deadline came; `now` is the
    /// loop's one clock reading for the round (monotonic nanoseconds).
    func tick(now: UInt64)

    /// The loop cannot wait any more (`epoll_wait` failed): the member ends what it serves. The loop's thread
    /// ends after this, and nothing is called on the member again.
    func loopFailed(_ error: SystemError)

    /// A surface's readers and listeners now, for the metrics; nil for a member that is no surface.
    var surfaceGauge: SurfaceGauge? { get }
}

extension LoopMember {
    var surfaceGauge: SurfaceGauge? { nil }
}

/// One surface's clients now: its open connections and the listens among them (`pwflagsd_surface_*`).
struct SurfaceGauge: Sendable, Equatable {
    var surface: String
    var connections: Int
    var listens: Int
}

/// A member that joins the loop on the loop's thread, when handed over with `EventLoop.start(_:)`. (A generic
/// member, an `EventEngine`, cannot capture itself in the closure `perform` takes: its handler's metatype is not
/// `Sendable`.)
protocol JoiningMember: LoopMember, Sendable {
    /// Joins the loop and adds the member's descriptors; on the loop's thread.
    func joinLoop()
}

/// The daemon's one event loop: one thread and one epoll for every descriptor it waits on (the line, Varlink
/// and OFREP sockets and their connections, the bus, the signal pipe, the local file's inotify, the wall-clock
/// timer).
///
/// Each member adds its own descriptors and is called back for their events; between events the thread sleeps
/// until a descriptor is ready, the doorbell rings or a member's deadline comes (no timer of its own). Other
/// threads never touch a member: they post to it and ring `doorbell`, or hand the loop a closure (`perform`).
/// Every surface answers its reads here, on the same thread, so a `get` costs the same whichever way it came.
///
/// The state every request touches (a connection's framer and output, an engine's connection table and read
/// buffer, a framed handler's state, `memoryReturn`) is declared `@exclusivity(unchecked)`: only this thread
/// touches it, in accesses that never overlap, and Swift's run-time check of each access was a sixth of the
/// instructions a `get` costs (docs/performance.md). The compiler's static check still applies.
final class EventLoop: @unchecked Sendable {
    /// A member's hold on the loop: the descriptors it owns. Loop thread only.
    ///
    /// The loop keeps a member alive while it is a member; `leave()` lets it go.
    final class Membership {
        fileprivate var member: (any LoopMember)?
        fileprivate unowned let loop: EventLoop
        /// Set when a descriptor of this member's had an event, or the doorbell rang: `tick` is due.
        fileprivate var due = false
        fileprivate var deadline: UInt64?

        fileprivate init(_ member: any LoopMember, loop: EventLoop) {
            self.member = member
            self.loop = loop
        }

        /// Waits for `events` on `descriptor` for this member.
        func add(_ descriptor: Int32, events: Epoll.Events) throws(SystemError) {
            try loop.epoll.add(descriptor, events: events)
            loop.owners[descriptor] = self
        }

        /// Changes the events waited for on `descriptor`, one this member added.
        func modify(_ descriptor: Int32, events: Epoll.Events) throws(SystemError) {
            try loop.epoll.modify(descriptor, events: events)
        }

        /// Takes the events of `descriptor`, already in epoll (added from another thread), for this member.
        func own(_ descriptor: Int32) {
            loop.owners[descriptor] = self
        }

        /// Stops waiting on `descriptor`, one this member owns; before it is closed, so that its number, once
        /// reused, is nobody's. A descriptor another member owns now (its number reused) is left alone.
        func remove(_ descriptor: Int32) {
            guard loop.owners[descriptor] === self else { return }
            loop.epoll.remove(descriptor)
            loop.owners[descriptor] = nil
        }

        /// Forgets `descriptor` without touching epoll: a watch whose `epoll_ctl` failed.
        func disown(_ descriptor: Int32) {
            if loop.owners[descriptor] === self { loop.owners[descriptor] = nil }
        }

        /// Leaves the loop; the member's descriptors must be removed already.
        func leave() {
            member = nil
            loop.memberships.removeAll { $0 === self }
            loop.owners.removeAll { $0 === self }
        }
    }

    /// The process's loop, its thread started at the first use; nil when no epoll, eventfd or thread could be
    /// made (the daemon then does not start).
    static let shared: EventLoop? = try? EventLoop(name: "pwflagsd-loop")

    /// Thread-safe for adding and removing descriptors (`epoll_ctl`); waited on by the loop's thread only.
    let epoll: Epoll
    /// Rings the loop from any thread: every member's `woke` runs, and what was handed to `perform`.
    let doorbell: Doorbell
    private let wake: EventFD
    private let posted = Locked<[@Sendable () -> Void]>([])

    // Loop thread only.
    /// Hands memory back after a burst, whichever member's work freed it: the one place the daemon trims
    /// (unchecked at run time, as said above).
    @exclusivity(unchecked) var memoryReturn = MemoryReturn()
    /// The connections open on every listener, for `memoryReturn`.
    var openConnections = 0
    private var owners = DescriptorTable<Membership>()
    private var memberships: [Membership] = []
    private let events = Epoll.Buffer(capacity: 256)

    private init(name: String) throws(SystemError) {
        let epoll = try Epoll()
        do {
            let wake = try EventFD()
            try epoll.add(wake.descriptor, events: .input)
            self.wake = wake
        } catch {
            epoll.close()
            throw error
        }
        self.epoll = epoll
        doorbell = Doorbell(wake)
        let loop = Unmanaged.passRetained(self)
        guard DetachedThread.start(name: name, { loop.takeRetainedValue().run() }) else {
            loop.release()
            throw SystemError("pthread_create", errno: EAGAIN)
        }
    }

    /// Runs `work` on the loop's thread, after what was handed over before it; from any thread.
    /// Every surface's readers and listeners now, in the order they joined; on the loop's thread.
    func surfaceGauges() -> [SurfaceGauge] {
        memberships.compactMap { $0.member?.surfaceGauge }
    }

    func perform(_ work: @escaping @Sendable () -> Void) {
        posted.withLock { $0.append(work) }
        doorbell.ring()
    }

    /// Why the loop can no longer wait (`epoll_wait` failed), once it cannot; loop thread only.
    private(set) var failure: SystemError?

    /// Hands `member` to the loop's thread, where it joins (`JoiningMember.joinLoop`); from any thread.
    func start(_ member: any JoiningMember) {
        perform { member.joinLoop() }
    }

    /// Serves `member` from now on (loop thread only); it adds its descriptors through the membership. Nil once
    /// the loop has failed: the member then ends what it serves at once (`failure` says why).
    func join(_ member: any LoopMember) -> Membership? {
        guard failure == nil else { return nil }
        let membership = Membership(member, loop: self)
        memberships.append(membership)
        return membership
    }

    /// The loop: the members' deadlines, a wait, the events to their owners, then each due member's `tick`.
    private func run() {
        while true {
            var earliest = memoryReturn.deadline ?? .max
            for membership in memberships {
                membership.deadline = membership.member?.nextDeadline()
                if let deadline = membership.deadline { earliest = min(earliest, deadline) }
            }
            let count: Int
            do {
                count = try epoll.wait(
                    into: events, timeout: earliest == .max ? -1 : EngineClock.milliseconds(until: earliest))
            } catch {
                // Only a bad epoll set fails here: nothing can be waited on any more, so every member ends what
                // it serves, and each surface's service then ends the daemon (`ServiceGroup`).
                failure = error
                for membership in memberships { membership.member?.loopFailed(error) }
                serveFailed()
            }
            var rang = false
            var strays = false
            for index in 0..<count {
                let event = events[index]
                if event.descriptor == wake.descriptor {
                    rang = true
                } else if let owner = owners[event.descriptor], let member = owner.member {
                    owner.due = true
                    member.handle(event.events, on: event.descriptor)
                } else {
                    // Added from another thread, its owner posted before it: the posts run below, and epoll
                    // reports the descriptor again on the next wait.
                    strays = true
                }
            }
            if rang {
                wake.drain()
                runPosted()
                for membership in memberships {
                    membership.due = true
                    membership.member?.woke()
                }
            } else if strays {
                runPosted()
            }
            let now = EngineClock.now()
            for membership in memberships where membership.due || (membership.deadline ?? .max) <= now {
                membership.due = false
                membership.member?.tick(now: now)
            }
            memoryReturn.tick(now: now)
        }
    }

    /// After a failure the thread still runs what other threads hand it, so that a member that joins or a
    /// watch that is cancelled hears of the failure instead of waiting for ever. It waits on the doorbell alone.
    private func serveFailed() -> Never {
        while true {
            _ = Descriptor.waitReadable(wake.descriptor, milliseconds: -1)
            wake.drain()
            runPosted()
        }
    }

    private func runPosted() {
        let work = posted.withLock { posted in
            defer { posted.removeAll() }
            return posted
        }
        for item in work { item() }
    }
}

/// Rings the loop's eventfd from any thread.
final class Doorbell: Sendable {
    private let wake: EventFD

    init(_ wake: EventFD) { self.wake = wake }

    func ring() { wake.ring() }
}
