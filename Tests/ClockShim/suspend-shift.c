// An LD_PRELOAD shim that moves CLOCK_BOOTTIME forward under a running process, as a suspend does (the boot clock
// counts the time the device slept; the monotonic clock does not), so that a test can let a time rule's duration
// pass (a session timeout in the background) without waiting for it.
//
// PWFLAGS_SUSPEND_SHIFT_FILE names a file of 8 bytes: a signed 64-bit count of nanoseconds added to every
// CLOCK_BOOTTIME reading. A timerfd on CLOCK_BOOTTIME armed with TFD_TIMER_ABSTIME is armed on the kernel's clock
// (the shift taken off), so a timer armed after a move fires when the shifted clock reaches its deadline; one
// armed before a move fires at its real time, later than a real resume would fire it (no test here relies on
// either). Compiled by the tests that use it at test time (cc -shared -fPIC).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "shift-file.h"

#define MAX_TIMERS 256

static volatile int64_t *shift;
// The clock of each timerfd, by descriptor (timerfd_create tells it; -1: not a boot-clock timer).
static volatile int timerClock[MAX_TIMERS];

static int (*realClockGettime)(clockid_t, struct timespec *);
static int (*realTimerfdCreate)(int, int);
static int (*realTimerfdSettime)(int, int, const struct itimerspec *, struct itimerspec *);

static int64_t currentShift(void) { return shift ? *shift : 0; }

static void addNanoseconds(struct timespec *time, int64_t nanoseconds) {
    int64_t total = (int64_t)time->tv_nsec + nanoseconds % 1000000000;
    time->tv_sec += nanoseconds / 1000000000 + total / 1000000000;
    total %= 1000000000;
    if (total < 0) {
        total += 1000000000;
        time->tv_sec -= 1;
    }
    time->tv_nsec = total;
}

int clock_gettime(clockid_t clock, struct timespec *now) {
    int result = realClockGettime(clock, now);
    if (result == 0 && clock == CLOCK_BOOTTIME) addNanoseconds(now, currentShift());
    return result;
}

int timerfd_create(int clock, int flags) {
    int fd = realTimerfdCreate(clock, flags);
    if (fd >= 0 && fd < MAX_TIMERS) timerClock[fd] = clock;
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    if ((flags & TFD_TIMER_ABSTIME) && fd >= 0 && fd < MAX_TIMERS && timerClock[fd] == CLOCK_BOOTTIME
        && (value->it_value.tv_sec != 0 || value->it_value.tv_nsec != 0)) {
        // The caller read the shifted clock: the kernel's timer is on the real one.
        struct itimerspec real = *value;
        addNanoseconds(&real.it_value, -currentShift());
        if (real.it_value.tv_sec < 0 || (real.it_value.tv_sec == 0 && real.it_value.tv_nsec == 0)) {
            real.it_value.tv_sec = 0;
            real.it_value.tv_nsec = 1;
        }
        return realTimerfdSettime(fd, flags, &real, old);
    }
    return realTimerfdSettime(fd, flags, value, old);
}

__attribute__((constructor)) static void start(void) {
    realClockGettime = dlsym(RTLD_NEXT, "clock_gettime");
    realTimerfdCreate = dlsym(RTLD_NEXT, "timerfd_create");
    realTimerfdSettime = dlsym(RTLD_NEXT, "timerfd_settime");
    for (int fd = 0; fd < MAX_TIMERS; fd++) timerClock[fd] = -1;
    shift = mapShiftFile("PWFLAGS_SUSPEND_SHIFT_FILE");
}
