import FlagsCore
import Synchronization
import UnixIO

/// Published flags with a per-thread copy of the reference, so that `get` takes no lock and writes no shared
/// memory: a reader compares one version counter (which changes only when the flags do) and looks up its own
/// copy. Under contention a shared lock or reference count costs several hundred nanoseconds per read; this
/// costs a thread-local load and an atomic load.
final class ThreadReadCache: @unchecked Sendable {
    // @unchecked: `published` is under its lock, `version` is atomic, `caches` is under its lock, and each
    // `Slot` is touched only by its own thread (and by deinit, when no thread can be reading any more).

    /// One thread's copy.
    final class Slot: @unchecked Sendable {
        var version = -1
        var flags: [FlagKey: FlagBox] = [:]
    }

    private let published = Locked([FlagKey: FlagBox]())
    private let version = Atomic<Int>(0)
    private let threadSlot = ThreadLocalReference<Slot>()
    /// Every thread's slot, so that deinit can let go of their copies.
    private let slots = Locked([Slot]())

    init() {}

    deinit {
        // No thread reads any more (nothing holds this object): drop the copies the slots keep alive.
        for slot in slots.withLock({ $0 }) { slot.flags = [:] }
    }

    /// Makes `flags` what every thread reads from now on.
    func publish(_ flags: [FlagKey: Flag]) {
        let boxes = flags.mapValues(FlagBox.init)
        published.withLock { $0 = boxes }
        version.add(1, ordering: .releasing)
        // Slots of threads that have exited are only referenced here: forget them.
        slots.withLock { slots in
            slots.removeAll { slot in
                var candidate = slot
                return isKnownUniquelyReferenced(&candidate)
            }
        }
    }

    /// The flag `key` as last published. Keys are byte-exact (`FlagKey`), as in the daemon (R2): a `String` key
    /// would make canonically equivalent keys ("caf\u{E9}", "cafe\u{301}") one flag.
    func flag(_ key: FlagKey) -> FlagBox? {
        // Loaded before the copy is read: the copy is at least as new as the version it is filed under.
        let current = version.load(ordering: .acquiring)
        // The thread's own reference keeps the slot alive, so it is borrowed without a retain.
        return currentSlot()._withUnsafeGuaranteedRef { slot in
            if slot.version != current {
                slot.flags = published.withLock { $0 }
                slot.version = current
            }
            return slot.flags[key]
        }
    }

    private func currentSlot() -> Unmanaged<Slot> {
        if let current = threadSlot.current() { return current }
        let new = Slot()
        slots.withLock { $0.append(new) }
        return threadSlot.set(new)
    }
}
