// An LD_PRELOAD shim that moves CLOCK_REALTIME under a running process, as `date -s` or NTP would, without
// touching the machine's clock (which needs CAP_SYS_TIME and would move every other process's clock too).
//
// PWFLAGS_WALL_CLOCK_SHIFT_FILE names a file of 8 bytes: a signed 64-bit count of seconds added to every
// CLOCK_REALTIME reading. When a test changes it, the shim does what the kernel does on a clock set: a timerfd
// armed with TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET becomes readable and its read fails with ECANCELED.
// Compiled by WallClockChangeTests at test time (cc -shared -fPIC).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "shift-file.h"

static volatile int64_t *shift;
static _Atomic int cancelOnSetFD = -1;
static _Atomic int pendingChange;

static int (*realClockGettime)(clockid_t, struct timespec *);
static int (*realTimerfdSettime)(int, int, const struct itimerspec *, struct itimerspec *);
static ssize_t (*realRead)(int, void *, size_t);

static int64_t currentShift(void) { return shift ? *shift : 0; }

int clock_gettime(clockid_t clock, struct timespec *now) {
    int result = realClockGettime(clock, now);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) now->tv_sec += currentShift();
    return result;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    if ((flags & TFD_TIMER_ABSTIME) && (flags & TFD_TIMER_CANCEL_ON_SET)) {
        // The caller read the shifted clock: the kernel's timer is on the real one.
        struct itimerspec real = *value;
        real.it_value.tv_sec -= currentShift();
        atomic_store(&cancelOnSetFD, fd);
        return realTimerfdSettime(fd, flags, &real, old);
    }
    return realTimerfdSettime(fd, flags, value, old);
}

ssize_t read(int fd, void *buffer, size_t count) {
    if (fd >= 0 && fd == atomic_load(&cancelOnSetFD) && atomic_exchange(&pendingChange, 0)) {
        errno = ECANCELED;
        return -1;
    }
    return realRead(fd, buffer, count);
}

// Watches the shift file: a change makes the cancel-on-set timer readable (it fires at once), and its next read
// reports ECANCELED.
static void *watch(void *unused) {
    (void)unused;
    int64_t last = currentShift();
    for (;;) {
        usleep(5000);
        int64_t now = currentShift();
        int fd = atomic_load(&cancelOnSetFD);
        if (now == last || fd < 0) continue;
        last = now;
        atomic_store(&pendingChange, 1);
        struct itimerspec soon = {.it_value = {.tv_sec = 0, .tv_nsec = 1}};
        realTimerfdSettime(fd, 0, &soon, NULL);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    realClockGettime = dlsym(RTLD_NEXT, "clock_gettime");
    realTimerfdSettime = dlsym(RTLD_NEXT, "timerfd_settime");
    realRead = dlsym(RTLD_NEXT, "read");
    shift = mapShiftFile("PWFLAGS_WALL_CLOCK_SHIFT_FILE");
    if (!shift) return;
    pthread_t thread;
    pthread_create(&thread, NULL, watch, NULL);
    pthread_detach(thread);
}
