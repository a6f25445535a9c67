#ifndef PWFLAGSD_CLINUX_SHIM_H
#define PWFLAGSD_CLINUX_SHIM_H
// Linux interfaces the Glibc module leaves out: epoll, eventfd, inotify, timerfd, prctl, malloc_trim, CPU
// affinity.
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
#endif
