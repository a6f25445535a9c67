// An LD_PRELOAD shim that makes a system call of the daemon fail where the kernel rarely does, so that the
// integration tests can check what the daemon does then. Test-only: compiled by ServiceFailureTests at test time
// (cc -shared -fPIC); nothing in the daemon knows about it. Each fault is off unless its variable is set:
//
// PWFLAGS_FAULT_EPOLL_SOCKET names a Unix socket path: every epoll_wait on an epoll set that watches the socket
// bound to that path fails with EINVAL, as if the set had gone bad under the loop waiting on it. Other epoll sets
// (the runtime's, libcurl's) are left alone.
//
// PWFLAGS_FAULT_PIPE=1 makes every pipe() and pipe2() fail with EMFILE, as when the process is out of
// descriptors at start.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int (*realEpollCtl)(int, int, int, struct epoll_event *);
static int (*realEpollWait)(int, struct epoll_event *, int, int);
static int (*realEpollPwait)(int, struct epoll_event *, int, int, const sigset_t *);
static int (*realPipe)(int[2]);
static int (*realPipe2)(int[2], int);

static const char *faultySocketPath;
static int failPipes;
// The epoll set that watches the socket at `faultySocketPath`; -1 until one is seen.
static _Atomic int faultyEpoll = -1;

static int isFaultySocket(int fd) {
    struct sockaddr_un address;
    socklen_t length = sizeof(address);
    memset(&address, 0, sizeof(address));
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0 || address.sun_family != AF_UNIX) return 0;
    return strncmp(address.sun_path, faultySocketPath, sizeof(address.sun_path)) == 0;
}

int epoll_ctl(int epfd, int operation, int fd, struct epoll_event *event) {
    if (faultySocketPath && operation == EPOLL_CTL_ADD && isFaultySocket(fd)) atomic_store(&faultyEpoll, epfd);
    return realEpollCtl(epfd, operation, fd, event);
}

int epoll_wait(int epfd, struct epoll_event *events, int capacity, int timeout) {
    if (epfd >= 0 && epfd == atomic_load(&faultyEpoll)) {
        errno = EINVAL;
        return -1;
    }
    return realEpollWait(epfd, events, capacity, timeout);
}

int epoll_pwait(int epfd, struct epoll_event *events, int capacity, int timeout, const sigset_t *mask) {
    if (epfd >= 0 && epfd == atomic_load(&faultyEpoll)) {
        errno = EINVAL;
        return -1;
    }
    return realEpollPwait(epfd, events, capacity, timeout, mask);
}

int pipe(int fds[2]) {
    if (failPipes) {
        errno = EMFILE;
        return -1;
    }
    return realPipe(fds);
}

int pipe2(int fds[2], int flags) {
    if (failPipes) {
        errno = EMFILE;
        return -1;
    }
    return realPipe2(fds, flags);
}

__attribute__((constructor)) static void start(void) {
    realEpollCtl = dlsym(RTLD_NEXT, "epoll_ctl");
    realEpollWait = dlsym(RTLD_NEXT, "epoll_wait");
    realEpollPwait = dlsym(RTLD_NEXT, "epoll_pwait");
    realPipe = dlsym(RTLD_NEXT, "pipe");
    realPipe2 = dlsym(RTLD_NEXT, "pipe2");
    const char *path = getenv("PWFLAGS_FAULT_EPOLL_SOCKET");
    if (path && *path) faultySocketPath = path;
    const char *pipes = getenv("PWFLAGS_FAULT_PIPE");
    failPipes = pipes && strcmp(pipes, "1") == 0;
}
