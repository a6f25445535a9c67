#ifndef PWFLAGSD_CLINUX_SHIM_H
#define PWFLAGSD_CLINUX_SHIM_H
// Linux interfaces the Glibc module leaves out: epoll, eventfd, inotify, timerfd, prctl, malloc_trim.
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>

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
#endif
