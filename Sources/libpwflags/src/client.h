/* The client's state, shared by the files of the library. */
#ifndef PWFLAGS_CLIENT_H
#define PWFLAGS_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "flag.h"
#include "json.h"
#include "pwflags.h"

/* Bounds against a hostile or broken peer (docs/c-library.md, "Bounds"). */
#define PWFLAGS_MAX_LINE (16u * 1024 * 1024) /* a longer line closes the connection */
#define PWFLAGS_MAX_OUTPUT (1u * 1024 * 1024) /* unsent requests; past it calls fail with -ENOBUFS */
#define PWFLAGS_MAX_PENDING 1024              /* requests awaiting an answer */
#define PWFLAGS_MAX_LISTENERS 1024
#define PWFLAGS_BACKOFF_MIN_MS 50
#define PWFLAGS_BACKOFF_MAX_MS 2000
#define PWFLAGS_STATUS_INTERVAL_MS 60000

typedef enum request_kind {
    REQ_LISTEN,
    REQ_REFRESH,
    REQ_IMPRESSION,
    REQ_DONE,
    REQ_STATUS,
    REQ_EXPIRY /* the library's own status call, for expiresAt */
} request_kind;

typedef struct request {
    long long id;
    request_kind kind;
    void (*callback)(void);
    void *userdata;
    unsigned generation; /* the subscription it was sent on */
} request;

typedef struct listener {
    int handle;
    pwflags_update_fn callback;
    void *userdata;
} listener;

struct pwflags_client {
    pthread_mutex_t lock; /* recursive: callbacks run under it and may call the library */
    char *socket_path;
    int epoll_fd, sock, timer_fd, event_fd;

    /* Read side, lock-free: the published snapshot and the two reader counters that guard its release. */
    _Atomic(snapshot *) published;
    atomic_uint reader_phase;
    atomic_long readers[2];
    atomic_int has_snapshot, connected;

    /* The mirror's position, under lock. */
    snapshot *current;
    long long revision;
    char epoch[64];
    bool have_epoch, subscribed;
    unsigned generation;
    int64_t expires_at_ms; /* wall clock; -1: never */

    /* The connection. */
    pj_buf in, out;
    size_t out_sent;
    bool writing;
    long long next_id;
    request *pending;
    size_t n_pending;
    request *deferred; /* completions to run in the next process(), with their error in id */
    size_t n_deferred;
    uint64_t backoff_ms, reconnect_at, status_at; /* monotonic ms */

    listener *listeners;
    size_t n_listeners;
    int next_handle;
    int dispatching;
    bool processing;

    pthread_t thread;
    bool has_thread;
    atomic_bool stopping;
    pthread_mutex_t snapshot_lock;
    pthread_cond_t snapshot_cond;
};

uint64_t now_monotonic_ms(void);
int64_t now_wall_ms(void);

/* connection.c */
int connection_open(pwflags_client *c);
void connection_close(pwflags_client *c);
int connection_send(pwflags_client *c, request_kind kind, const char *method, const char *params,
                    void (*callback)(void), void *userdata);
int connection_pump(pwflags_client *c);
void connection_defer(pwflags_client *c, request_kind kind, void (*callback)(void), void *userdata, int error);
void connection_arm_timer(pwflags_client *c);
void wake(pwflags_client *c);

/* messages.c */
void message_handle(pwflags_client *c, const char *line, size_t len);
void complete(pwflags_client *c, const request *r, int error, const pj_value *result, const pj_value *rpc_error);

/* mirror.c */
void mirror_publish(pwflags_client *c, snapshot *next);
void mirror_expire_if_due(pwflags_client *c);
snapshot *mirror_read_lock(pwflags_client *c, unsigned *phase);
void mirror_read_unlock(pwflags_client *c, unsigned phase);

#endif
