/* The one connection to the daemon: the `listen` subscription and every call share it (answers come in request
 * order, notifications between them). Non-blocking; driven by pwflags_client_process(). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

uint64_t now_monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int64_t now_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void wake(pwflags_client *c) {
    uint64_t one = 1;
    ssize_t r = write(c->event_fd, &one, sizeof one);
    (void)r; /* a full counter still wakes */
}

static void watch_output(pwflags_client *c, bool on) {
    if (c->sock < 0 || c->writing == on) return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.fd = c->sock};
    if (epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, c->sock, &ev) == 0) c->writing = on;
}

static int send_listen(pwflags_client *c) {
    char params[160];
    if (c->have_epoch && atomic_load(&c->has_snapshot))
        snprintf(params, sizeof params, "{\"since\":{\"epoch\":\"%s\",\"revision\":%lld}}", c->epoch, c->revision);
    else
        snprintf(params, sizeof params, "{}");
    return connection_send(c, REQ_LISTEN, "listen", params, NULL, NULL);
}

/* Connects, synchronously as a Unix socket does, and subscribes. 0, or a negative errno. */
int connection_open(pwflags_client *c) {
    if (c->sock >= 0) return 0;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = strlen(c->socket_path);
    if (len >= sizeof addr.sun_path) return -ENAMETOOLONG;
    memcpy(addr.sun_path, c->socket_path, len + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS) {
        int e = -errno;
        close(fd);
        return e;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    c->sock = fd;
    c->writing = false;
    c->generation++;
    c->in.len = c->out.len = c->out_sent = 0;
    int r = send_listen(c);
    if (r < 0) connection_close(c);
    return r;
}

/* Ends the connection: every pending call fails with -ECONNRESET, the flags stay until their age (R15), and
 * the next attempt waits the backoff. */
void connection_close(pwflags_client *c) {
    if (c->sock < 0) return;
    epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, c->sock, NULL);
    close(c->sock);
    c->sock = -1;
    c->subscribed = false;
    atomic_store(&c->connected, 0);
    c->in.len = c->out.len = c->out_sent = 0;
    for (size_t i = 0; i < c->n_pending; i++)
        if (c->pending[i].kind != REQ_LISTEN && c->pending[i].kind != REQ_EXPIRY)
            connection_defer(c, c->pending[i].kind, c->pending[i].callback, c->pending[i].userdata, -ECONNRESET);
    c->n_pending = 0;
    c->reconnect_at = now_monotonic_ms() + c->backoff_ms;
    c->backoff_ms = c->backoff_ms * 2 > PWFLAGS_BACKOFF_MAX_MS ? PWFLAGS_BACKOFF_MAX_MS : c->backoff_ms * 2;
}

void connection_defer(pwflags_client *c, request_kind kind, void (*callback)(void), void *userdata, int error) {
    if (!callback) return;
    request *grown = realloc(c->deferred, (c->n_deferred + 1) * sizeof *grown);
    if (!grown) return; /* without memory the completion is lost, never run twice */
    c->deferred = grown;
    grown[c->n_deferred++] = (request){.id = error, .kind = kind, .callback = callback, .userdata = userdata};
    wake(c);
}

static int flush(pwflags_client *c) {
    while (c->out_sent < c->out.len) {
        ssize_t n = send(c->sock, c->out.data + c->out_sent, c->out.len - c->out_sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            watch_output(c, true);
            return 0;
        }
        if (n < 0) return -errno;
        c->out_sent += (size_t)n;
    }
    c->out.len = c->out_sent = 0;
    watch_output(c, false);
    return 0;
}

int connection_send(pwflags_client *c, request_kind kind, const char *method, const char *params,
                    void (*callback)(void), void *userdata) {
    if (c->sock < 0) return -ENOTCONN;
    if (c->n_pending >= PWFLAGS_MAX_PENDING) return -ENOBUFS;
    long long id = ++c->next_id;
    char head[96];
    int n = snprintf(head, sizeof head, "{\"id\":%lld,\"method\":\"%s\",\"params\":", id, method);
    size_t before = c->out.len;
    int r = pj_buf_append(&c->out, head, (size_t)n);
    if (r == 0) r = pj_buf_puts(&c->out, params);
    if (r == 0) r = pj_buf_append(&c->out, "}\n", 2);
    if (r < 0) {
        c->out.len = before;
        return r;
    }
    request *grown = realloc(c->pending, (c->n_pending + 1) * sizeof *grown);
    if (!grown) {
        c->out.len = before;
        return -ENOMEM;
    }
    c->pending = grown;
    grown[c->n_pending++] =
        (request){.id = id, .kind = kind, .callback = callback, .userdata = userdata, .generation = c->generation};
    if (flush(c) < 0) connection_close(c);
    return 0;
}

/* Reads what arrived and handles each whole line; a line past PWFLAGS_MAX_LINE, or the peer going away, closes
 * the connection. */
static void read_input(pwflags_client *c) {
    for (int round = 0; round < 64 && c->sock >= 0; round++) {
        if (c->in.cap - c->in.len < 65536 + 1) {
            size_t cap = c->in.cap ? c->in.cap * 2 : 65536 * 2;
            if (cap > PWFLAGS_MAX_LINE + 65536 + 1) cap = PWFLAGS_MAX_LINE + 65536 + 1;
            if (cap - c->in.len < 2) {
                connection_close(c);
                return;
            }
            char *grown = realloc(c->in.data, cap);
            if (!grown) {
                connection_close(c);
                return;
            }
            c->in.data = grown;
            c->in.cap = cap;
        }
        ssize_t n = recv(c->sock, c->in.data + c->in.len, c->in.cap - c->in.len - 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            connection_close(c);
            return;
        }
        size_t scanned = c->in.len;
        c->in.len += (size_t)n;
        size_t start = 0;
        for (size_t i = scanned; i < c->in.len && c->sock >= 0; i++) {
            if (c->in.data[i] != '\n') continue;
            message_handle(c, c->in.data + start, i - start);
            start = i + 1;
        }
        if (c->sock < 0) return;
        memmove(c->in.data, c->in.data + start, c->in.len - start);
        c->in.len -= start;
        if (c->in.len > PWFLAGS_MAX_LINE) {
            connection_close(c);
            return;
        }
    }
}

/* Does the I/O that is ready and what the clock says is due. */
int connection_pump(pwflags_client *c) {
    uint64_t drained;
    bool woke = read(c->event_fd, &drained, sizeof drained) > 0;
    woke |= read(c->timer_fd, &drained, sizeof drained) > 0;
    if (c->sock >= 0) {
        read_input(c);
        if (c->sock >= 0 && c->out.len && flush(c) < 0) connection_close(c);
    }
    uint64_t now = now_monotonic_ms();
    if (c->sock < 0 && now >= c->reconnect_at && connection_open(c) < 0)
        c->reconnect_at = now + c->backoff_ms,
        c->backoff_ms = c->backoff_ms * 2 > PWFLAGS_BACKOFF_MAX_MS ? PWFLAGS_BACKOFF_MAX_MS : c->backoff_ms * 2;
    if (c->subscribed && now >= c->status_at) {
        c->status_at = now + PWFLAGS_STATUS_INTERVAL_MS;
        connection_send(c, REQ_EXPIRY, "status", "{}", NULL, NULL);
    }
    mirror_expire_if_due(c);
    return woke;
}

/* The timer wakes the program's loop for the next reconnection, status read or expiry. */
void connection_arm_timer(pwflags_client *c) {
    uint64_t now = now_monotonic_ms();
    uint64_t due = UINT64_MAX;
    if (c->sock < 0) due = c->reconnect_at;
    if (c->subscribed && c->status_at < due) due = c->status_at;
    if (!c->subscribed && c->expires_at_ms >= 0 && c->current && c->current->n) {
        int64_t wait = c->expires_at_ms - now_wall_ms();
        uint64_t at = now + (uint64_t)(wait > 0 ? wait : 0);
        if (at < due) due = at;
    }
    struct itimerspec its = {0};
    if (due != UINT64_MAX) {
        uint64_t wait = due > now ? due - now : 1;
        its.it_value.tv_sec = (time_t)(wait / 1000);
        its.it_value.tv_nsec = (long)(wait % 1000) * 1000000;
    }
    timerfd_settime(c->timer_fd, 0, &its, NULL);
}
