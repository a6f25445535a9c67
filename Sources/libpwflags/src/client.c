/* The client handle: its descriptors, the program's loop integration, and the optional thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

static const char default_socket[] = "/run/pwflagsd/pwflagsd.sock";

static int watch(int epoll_fd, int fd) {
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int pwflags_client_new(pwflags_client **ret, const char *socket_path) {
    if (!ret) return -EINVAL;
    *ret = NULL;
    if (!socket_path || !*socket_path) socket_path = secure_getenv("PWFLAGS_SOCKET");
    if (!socket_path || !*socket_path) socket_path = default_socket;
    pwflags_client *c = calloc(1, sizeof *c);
    if (!c) return -ENOMEM;
    c->sock = c->epoll_fd = c->timer_fd = c->event_fd = -1;
    c->expires_at_ms = -1;
    c->backoff_ms = PWFLAGS_BACKOFF_MIN_MS;
    c->in.max = PWFLAGS_MAX_LINE + 65536 + 1;
    c->out.max = PWFLAGS_MAX_OUTPUT;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_mutex_init(&c->snapshot_lock, NULL);
    pthread_condattr_t cattr;
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->snapshot_cond, &cattr);
    pthread_condattr_destroy(&cattr);
    int r = -ENOMEM;
    c->socket_path = strdup(socket_path);
    c->current = snapshot_new(NULL, 0);
    atomic_init(&c->published, c->current);
    if (!c->socket_path || !c->current) goto fail;
    c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    c->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->epoll_fd < 0 || c->timer_fd < 0 || c->event_fd < 0) {
        r = -errno;
        goto fail;
    }
    if ((r = watch(c->epoll_fd, c->timer_fd)) < 0 || (r = watch(c->epoll_fd, c->event_fd)) < 0) goto fail;
    /* The first attempt now, so that the first snapshot may be there by the first read; a daemon that is
     * not there yet is tried again with backoff. */
    if (connection_open(c) < 0) {
        c->reconnect_at = now_monotonic_ms() + c->backoff_ms;
        c->backoff_ms *= 2;
    }
    connection_arm_timer(c);
    *ret = c;
    return 0;
fail:
    pwflags_client_free(c);
    return r;
}

pwflags_client *pwflags_client_free(pwflags_client *client) {
    if (!client) return NULL;
    if (client->has_thread) {
        atomic_store(&client->stopping, true);
        wake(client);
        pthread_join(client->thread, NULL);
    }
    pthread_mutex_lock(&client->lock);
    connection_close(client);
    client->n_deferred = 0;
    pthread_mutex_unlock(&client->lock);
    snapshot_free(client->current);
    for (int *fd = &client->epoll_fd; fd <= &client->event_fd; fd++)
        if (*fd >= 0) close(*fd);
    pj_buf_free(&client->in);
    pj_buf_free(&client->out);
    free(client->pending);
    free(client->deferred);
    free(client->listeners);
    free(client->socket_path);
    pthread_mutex_destroy(&client->lock);
    pthread_mutex_destroy(&client->snapshot_lock);
    pthread_cond_destroy(&client->snapshot_cond);
    free(client);
    return NULL;
}

int pwflags_client_get_fd(pwflags_client *client) { return client ? client->epoll_fd : -EINVAL; }

int pwflags_client_process(pwflags_client *client) {
    if (!client) return -EINVAL;
    pthread_mutex_lock(&client->lock);
    if (client->processing) {
        pthread_mutex_unlock(&client->lock);
        return -EBUSY;
    }
    client->processing = true;
    struct epoll_event events[8];
    int ready = epoll_wait(client->epoll_fd, events, 8, 0);
    int did = connection_pump(client) || ready > 0;
    /* Completions deferred by calls that could not be sent: run here, never inside the call itself. */
    while (client->n_deferred) {
        request r = client->deferred[0];
        memmove(&client->deferred[0], &client->deferred[1], (client->n_deferred - 1) * sizeof r);
        client->n_deferred--;
        complete(client, &r, (int)r.id, NULL, NULL);
        did = 1;
    }
    connection_arm_timer(client);
    client->processing = false;
    pthread_mutex_unlock(&client->lock);
    return did;
}

int pwflags_client_wait(pwflags_client *client, uint64_t timeout_usec) {
    if (!client) return -EINVAL;
    struct pollfd p = {.fd = client->epoll_fd, .events = POLLIN};
    int timeout = timeout_usec == UINT64_MAX ? -1 : (int)(timeout_usec / 1000 > 0x7fffffff ? 0x7fffffff : timeout_usec / 1000);
    int r = poll(&p, 1, timeout);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    return r;
}

static void *run(void *arg) {
    pwflags_client *c = arg;
    while (!atomic_load(&c->stopping)) {
        if (pwflags_client_wait(c, UINT64_MAX) < 0) break;
        if (!atomic_load(&c->stopping)) pwflags_client_process(c);
    }
    return NULL;
}

int pwflags_client_start_thread(pwflags_client *client) {
    if (!client) return -EINVAL;
    pthread_mutex_lock(&client->lock);
    int r = -EBUSY;
    if (!client->has_thread) {
        r = -pthread_create(&client->thread, NULL, run, client);
        client->has_thread = r == 0;
    }
    pthread_mutex_unlock(&client->lock);
    return r;
}

int pwflags_client_wait_for_snapshot(pwflags_client *client, uint64_t timeout_usec) {
    if (!client) return -EINVAL;
    uint64_t deadline = now_monotonic_ms() + timeout_usec / 1000;
    while (!atomic_load(&client->has_snapshot)) {
        uint64_t now = now_monotonic_ms();
        if (now >= deadline) return 0;
        if (client->has_thread) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            uint64_t wait = deadline - now;
            ts.tv_sec += (time_t)(wait / 1000);
            ts.tv_nsec += (long)(wait % 1000) * 1000000;
            if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_mutex_lock(&client->snapshot_lock);
            if (!atomic_load(&client->has_snapshot)) pthread_cond_timedwait(&client->snapshot_cond, &client->snapshot_lock, &ts);
            pthread_mutex_unlock(&client->snapshot_lock);
        } else {
            int r = pwflags_client_wait(client, (deadline - now) * 1000);
            if (r < 0) return r;
            if ((r = pwflags_client_process(client)) < 0) return r;
        }
    }
    return 1;
}
