#ifndef PWFLAGSD_CLINUX_SHIM_H
#define PWFLAGSD_CLINUX_SHIM_H
// Linux interfaces the Glibc module leaves out: epoll, eventfd, inotify, timerfd, prctl, malloc_trim, CPU
// affinity; and the Swift runtime's enqueue hooks, at the end.
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

// prctl(2) is variadic, which Swift cannot call.
static inline int pwflagsd_prctl_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

static inline int pwflagsd_prctl_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

static inline int pwflagsd_prctl_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

// sched_getaffinity(2) and sched_setaffinity(2) of one thread, on a mask of 1024 CPUs, as system calls: glibc
// declares its wrappers only under _GNU_SOURCE. The get returns the mask's size in bytes, the set 0; -1 on error.
static inline long pwflagsd_sched_getaffinity(pid_t thread, unsigned long mask[16]) {
    return syscall(SYS_sched_getaffinity, thread, 16 * sizeof(unsigned long), mask);
}

static inline long pwflagsd_sched_setaffinity(pid_t thread, const unsigned long mask[16]) {
    return syscall(SYS_sched_setaffinity, thread, 16 * sizeof(unsigned long), mask);
}

// The Swift runtime's enqueue hooks, through which the daemon's pool becomes the default executor when it is built
// with a Swift older than 6.3 (Sources/Executors/ProcessExecutors+Hooks.swift). Each holds null (the runtime's own
// executor) or a function of the Swift calling convention that takes the job and the runtime's own implementation
// (the delay's and the deadline's hooks take the delay or the deadline first). Declared here, not looked up with
// dlsym: the symbols of a statically linked runtime are not in the dynamic symbol table. Written once, before the
// first task starts.
extern void *swift_task_enqueueGlobal_hook __attribute__((swift_attr("nonisolated(unsafe)")));
extern void *swift_task_enqueueGlobalWithDelay_hook __attribute__((swift_attr("nonisolated(unsafe)")));
extern void *swift_task_enqueueGlobalWithDeadline_hook __attribute__((swift_attr("nonisolated(unsafe)")));

// libdispatch's main queue as CoreFoundation's run loop drains it, without dispatch_main(): before Swift 6.3 the
// main actor's executor is that queue, and the daemon's main thread drains it (Sources/Executors/MainQueueDrain.swift).
// The handle is an eventfd that libdispatch writes when it queues a job; the callback runs the queued jobs on the
// calling thread.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);
#endif
