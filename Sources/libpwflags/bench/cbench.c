/* The C library's figures for pwflags-bench, beside the Swift library's:
 *   cbench read SOCKET READS      CPU ns of one get + one string property read + unref ("read_ns X")
 *   cbench fanout SOCKET CLIENTS  opens CLIENTS clients, prints "ready", then "heard NS" (CLOCK_MONOTONIC) once
 *                                 every client heard the next change
 * It reads flag_7 and flag_8 with a string property "color" (the bench daemon's flags). */
#define _GNU_SOURCE
#include <poll.h>
#include <pwflags.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

static long long ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int bench_read(const char *socket_path, long reads) {
    pwflags_client *c;
    if (pwflags_client_new(&c, socket_path) < 0 || pwflags_client_wait_for_snapshot(c, 10000000) != 1) return 1;
    long found = 0;
    long long start = ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < reads; i++) {
        pwflags_flag *f;
        pwflags_client_get(c, i & 1 ? "flag_8" : "flag_7", &f);
        found += pwflags_flag_get_string(f, "color", NULL) != NULL;
        pwflags_flag_unref(f);
    }
    long long spent = ns(CLOCK_THREAD_CPUTIME_ID) - start;
    printf("read_ns %.1f found %ld\n", (double)spent / (double)reads, found);
    pwflags_client_free(c);
    return found == reads ? 0 : 1;
}

static int heard;

static void updated(pwflags_client *c, const char *const *changed, size_t n_changed, const char *const *removed,
                    size_t n_removed, void *userdata) {
    (void)c, (void)changed, (void)n_changed, (void)removed, (void)n_removed;
    int *seen = userdata;
    if (!*seen) {
        *seen = 1;
        heard++;
    }
}

static int bench_fanout(const char *socket_path, int n) {
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    pwflags_client **clients = calloc((size_t)n, sizeof *clients);
    int *seen = calloc((size_t)n, sizeof *seen);
    int loop = epoll_create1(0);
    for (int i = 0; i < n; i++) {
        if (pwflags_client_new(&clients[i], socket_path) < 0) return 1;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(loop, EPOLL_CTL_ADD, pwflags_client_get_fd(clients[i]), &ev);
    }
    long long deadline = ns(CLOCK_MONOTONIC) + 60000000000LL;
    int ready = 0;
    struct epoll_event events[64];
    while (ready < n && ns(CLOCK_MONOTONIC) < deadline) {
        int k = epoll_wait(loop, events, 64, 1000);
        for (int e = 0; e < k; e++) pwflags_client_process(clients[events[e].data.u32]);
        ready = 0;
        for (int i = 0; i < n; i++) ready += pwflags_client_has_snapshot(clients[i]);
    }
    if (ready < n) return 1;
    for (int i = 0; i < n; i++) pwflags_client_add_listener(clients[i], updated, &seen[i]);
    printf("ready\n");
    fflush(stdout);
    deadline = ns(CLOCK_MONOTONIC) + 60000000000LL;
    while (heard < n && ns(CLOCK_MONOTONIC) < deadline) {
        int k = epoll_wait(loop, events, 64, 1000);
        for (int e = 0; e < k; e++) pwflags_client_process(clients[events[e].data.u32]);
    }
    printf("heard %lld\n", ns(CLOCK_MONOTONIC));
    for (int i = 0; i < n; i++) pwflags_client_free(clients[i]);
    free(clients);
    free(seen);
    return heard == n ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "read") == 0) return bench_read(argv[2], atol(argv[3]));
    if (argc == 4 && strcmp(argv[1], "fanout") == 0) return bench_fanout(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: cbench read SOCKET READS | fanout SOCKET CLIENTS\n");
    return 2;
}
