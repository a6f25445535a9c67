/* The mirror: publishing a new snapshot to lock-free readers, telling listeners, and the reads themselves.
 *
 * Readers never lock. Each read enters one of two counters, loads the published snapshot, and leaves the
 * counter. The writer (always under the client's lock) swaps the pointer, then waits until each counter has
 * been seen empty once after the swap, switching new readers to the other counter first so that a steady
 * stream of readers cannot hold it up; only then is the old snapshot released. A read is a few atomic
 * operations and a hash lookup: no syscall, no lock, no allocation. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"

snapshot *mirror_read_lock(pwflags_client *c, unsigned *phase) {
    *phase = atomic_load(&c->reader_phase) & 1;
    atomic_fetch_add(&c->readers[*phase], 1);
    return atomic_load(&c->published);
}

void mirror_read_unlock(pwflags_client *c, unsigned phase) { atomic_fetch_sub(&c->readers[phase], 1); }

static void wait_for_readers(pwflags_client *c) {
    for (int round = 0; round < 2; round++) {
        unsigned phase = atomic_fetch_add(&c->reader_phase, 1) & 1;
        while (atomic_load(&c->readers[phase]) != 0) sched_yield();
    }
}

static void tell_listeners(pwflags_client *c, const char **changed, size_t n_changed, const char **removed,
                           size_t n_removed) {
    /* Listeners added by a listener are called from the next change on; removed ones are skipped at once. */
    size_t n = c->n_listeners;
    c->dispatching++;
    for (size_t i = 0; i < n && i < c->n_listeners; i++) {
        listener l = c->listeners[i];
        if (l.callback) l.callback(c, changed, n_changed, removed, n_removed, l.userdata);
    }
    if (--c->dispatching == 0) {
        size_t kept = 0;
        for (size_t i = 0; i < c->n_listeners; i++)
            if (c->listeners[i].callback) c->listeners[kept++] = c->listeners[i];
        c->n_listeners = kept;
    }
}

void mirror_publish(pwflags_client *c, snapshot *next) {
    snapshot *before = c->current;
    const char **changed = NULL, **removed = NULL;
    size_t n_changed = 0, n_removed = 0;
    /* Without memory for the diff the flags are still published; listeners then miss one change. */
    (void)snapshot_diff(before, next, &changed, &n_changed, &removed, &n_removed);
    c->current = next;
    atomic_store(&c->published, next);
    wait_for_readers(c);
    if (!atomic_load(&c->has_snapshot)) {
        pthread_mutex_lock(&c->snapshot_lock);
        atomic_store(&c->has_snapshot, 1);
        pthread_cond_broadcast(&c->snapshot_cond);
        pthread_mutex_unlock(&c->snapshot_lock);
    }
    /* The old snapshot's keys are the removed ones: it is released after the listeners ran. */
    if (n_changed || n_removed) tell_listeners(c, changed, n_changed, removed, n_removed);
    free(changed);
    free(removed);
    snapshot_free(before);
}

/* R15: flags past their age while the daemon cannot be asked are dropped, local overrides kept. */
void mirror_expire_if_due(pwflags_client *c) {
    if (c->subscribed || c->expires_at_ms < 0 || !c->current || now_wall_ms() < c->expires_at_ms) return;
    c->expires_at_ms = -1;
    c->have_epoch = false;
    pwflags_flag **kept = malloc((c->current->n ? c->current->n : 1) * sizeof *kept);
    if (!kept) return;
    size_t n = 0;
    for (size_t i = 0; i < c->current->n; i++)
        if (c->current->sorted[i]->overridden) kept[n++] = pwflags_flag_ref(c->current->sorted[i]);
    snapshot *next = snapshot_new(kept, n);
    free(kept);
    if (next) mirror_publish(c, next);
}

int pwflags_client_get(pwflags_client *client, const char *key, pwflags_flag **ret) {
    if (!client || !key || !ret) return -EINVAL;
    unsigned phase;
    snapshot *s = mirror_read_lock(client, &phase);
    pwflags_flag *f = pwflags_flag_ref(snapshot_find(s, key, strlen(key)));
    mirror_read_unlock(client, phase);
    *ret = f;
    return f != NULL;
}

int pwflags_client_is_enabled(pwflags_client *client, const char *key, int default_value) {
    if (!client || !key) return default_value;
    unsigned phase;
    snapshot *s = mirror_read_lock(client, &phase);
    pwflags_flag *f = snapshot_find(s, key, strlen(key));
    int enabled = f ? f->enabled : default_value;
    mirror_read_unlock(client, phase);
    return enabled;
}

int pwflags_client_has_snapshot(pwflags_client *client) { return client ? atomic_load(&client->has_snapshot) : 0; }

int pwflags_client_is_connected(pwflags_client *client) { return client ? atomic_load(&client->connected) : 0; }

int pwflags_client_add_listener(pwflags_client *client, pwflags_update_fn callback, void *userdata) {
    if (!client || !callback) return -EINVAL;
    pthread_mutex_lock(&client->lock);
    int r = -ENOBUFS;
    if (client->n_listeners < PWFLAGS_MAX_LISTENERS) {
        listener *grown = realloc(client->listeners, (client->n_listeners + 1) * sizeof *grown);
        r = -ENOMEM;
        if (grown) {
            client->listeners = grown;
            if (client->next_handle == INT32_MAX) client->next_handle = 0;
            r = ++client->next_handle;
            grown[client->n_listeners++] = (listener){r, callback, userdata};
        }
    }
    pthread_mutex_unlock(&client->lock);
    return r;
}

int pwflags_client_remove_listener(pwflags_client *client, int handle) {
    if (!client || handle <= 0) return -EINVAL;
    pthread_mutex_lock(&client->lock);
    int r = -ENOENT;
    for (size_t i = 0; i < client->n_listeners; i++) {
        if (client->listeners[i].handle != handle || !client->listeners[i].callback) continue;
        client->listeners[i].callback = NULL;
        r = 0;
        if (!client->dispatching) {
            memmove(&client->listeners[i], &client->listeners[i + 1],
                    (client->n_listeners - i - 1) * sizeof *client->listeners);
            client->n_listeners--;
        }
        break;
    }
    pthread_mutex_unlock(&client->lock);
    return r;
}
