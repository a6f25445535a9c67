/* What the daemon sends: answers to our calls and flagsChanged notifications, applied to the mirror. Anything
 * that is not what the protocol promises closes the connection (the next one starts over with `listen`). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"

/* `expiresAt`: "YYYY-MM-DDTHH:MM:SS[.fff]Z" as the daemon writes it; -1 for null, absent or unreadable. */
static int64_t parse_expiry(const pj_value *v) {
    if (!v || v->type != PJ_STRING) return -1;
    struct tm tm = {0};
    int ms = 0, used = 0;
    if (sscanf(v->str, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &used) != 6)
        return -1;
    const char *rest = v->str + used;
    if (*rest == '.') {
        int scale = 100;
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, scale /= 10) ms += (*rest - '0') * scale;
    }
    if (strcmp(rest, "Z") != 0) return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    return t == (time_t)-1 ? -1 : (int64_t)t * 1000 + ms;
}

static int rpc_errno(const pj_value *error, int *status) {
    long long code = 0, st = 0;
    *status = 0;
    pj_get_int64(error, "code", &code);
    switch (code) {
    case -32000:
        if (pj_get_int64(pj_get(error, "data"), "status", &st) && st >= 0 && st < 1000000) *status = (int)st;
        return -EIO;
    case -32001: return -EPERM;
    case -32002:
    case -32003: return -ENOBUFS;
    case -32601: return -EOPNOTSUPP;
    case -32602: return -EINVAL;
    default: return -EPROTO;
    }
}

/* The flags of a listing, as one new snapshot; NULL when one is not a flag. */
static snapshot *listing_snapshot(const pj_value *flags) {
    if (!flags || flags->type != PJ_ARRAY) return NULL;
    pwflags_flag **all = malloc((flags->count ? flags->count : 1) * sizeof *all);
    if (!all) return NULL;
    size_t n = 0;
    int error = 0;
    for (const pj_value *v = flags->first; v && !error; v = v->next) {
        pwflags_flag *f = flag_from_json(v, &error);
        if (f) all[n++] = f;
    }
    if (error) {
        for (size_t i = 0; i < n; i++) pwflags_flag_unref(all[i]);
        free(all);
        return NULL;
    }
    snapshot *s = snapshot_new(all, n);
    free(all);
    return s;
}

static void set_position(pwflags_client *c, const pj_value *result, long long revision) {
    const char *epoch = pj_get_string(result, "epoch");
    c->revision = revision;
    c->have_epoch = epoch && strlen(epoch) < sizeof c->epoch;
    if (c->have_epoch) strcpy(c->epoch, epoch);
}

static void subscribed(pwflags_client *c, const pj_value *result, bool resumed_with_since) {
    long long revision;
    if (!result || result->type != PJ_OBJECT || !pj_get(result, "subscription") ||
        !pj_get_int64(result, "revision", &revision)) {
        connection_close(c);
        return;
    }
    const pj_value *unchanged = pj_get(result, "unchanged");
    if (unchanged && unchanged->type == PJ_TRUE) {
        /* Only a daemon that stands where the mirror does answers unchanged; anything else cannot be used. */
        const char *epoch = pj_get_string(result, "epoch");
        if (!resumed_with_since || !epoch || strcmp(epoch, c->epoch) != 0 || revision != c->revision) {
            connection_close(c);
            return;
        }
    } else {
        snapshot *next = listing_snapshot(pj_get(result, "flags"));
        if (!next) {
            connection_close(c);
            return;
        }
        set_position(c, result, revision);
        c->subscribed = true;
        c->expires_at_ms = parse_expiry(pj_get(result, "expiresAt"));
        mirror_publish(c, next);
    }
    c->subscribed = true;
    c->expires_at_ms = parse_expiry(pj_get(result, "expiresAt"));
    c->backoff_ms = PWFLAGS_BACKOFF_MIN_MS;
    c->status_at = now_monotonic_ms() + PWFLAGS_STATUS_INTERVAL_MS;
    atomic_store(&c->connected, 1);
}

typedef struct key_ref {
    const char *key;
    size_t len;
} key_ref;

static int compare_key_refs(const void *a, const void *b) {
    const key_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->key, y->key, n);
    return r ? r : (x->len > y->len) - (x->len < y->len);
}

/* A flagsChanged of this subscription: the mirror's flags with `changed` put in and `removed` taken out. */
static void flags_changed(pwflags_client *c, const pj_value *params) {
    long long revision;
    if (!c->subscribed || !pj_get_int64(params, "revision", &revision) || revision <= c->revision) return;
    const pj_value *changed = pj_get(params, "changed"), *removed = pj_get(params, "removed");
    snapshot *updates = listing_snapshot(changed);
    size_t n_removed = removed && removed->type == PJ_ARRAY ? removed->count : 0;
    key_ref *gone = malloc((n_removed ? n_removed : 1) * sizeof *gone);
    size_t n_old = c->current ? c->current->n : 0;
    pwflags_flag **all = malloc((n_old + (updates ? updates->n : 0) + 1) * sizeof *all);
    if (!updates || !gone || !all) {
        snapshot_free(updates);
        free(gone);
        free(all);
        connection_close(c);
        return;
    }
    size_t k = 0;
    for (const pj_value *v = n_removed ? removed->first : NULL; v; v = v->next)
        if (v->type == PJ_STRING) gone[k++] = (key_ref){v->str, v->str_len};
    qsort(gone, k, sizeof *gone, compare_key_refs);
    size_t n = 0;
    for (size_t i = 0; i < n_old; i++) {
        pwflags_flag *f = c->current->sorted[i];
        key_ref ref = {f->key, f->key_len};
        if (snapshot_find(updates, f->key, f->key_len) || bsearch(&ref, gone, k, sizeof *gone, compare_key_refs))
            continue;
        all[n++] = pwflags_flag_ref(f);
    }
    for (size_t i = 0; i < updates->n; i++) all[n++] = pwflags_flag_ref(updates->sorted[i]);
    snapshot_free(updates);
    free(gone);
    snapshot *next = snapshot_new(all, n);
    free(all);
    if (!next) {
        connection_close(c);
        return;
    }
    set_position(c, params, revision);
    c->expires_at_ms = parse_expiry(pj_get(params, "expiresAt"));
    mirror_publish(c, next);
}

/* A refresh answer came over the subscription's own connection: used when newer than the mirror, so that the
 * completion reads the refreshed flags. */
static void refreshed(pwflags_client *c, const request *r, const pj_value *result) {
    long long revision;
    if (r->generation != c->generation || !c->subscribed || !pj_get_int64(result, "revision", &revision)) return;
    connection_send(c, REQ_EXPIRY, "status", "{}", NULL, NULL);
    if (revision <= c->revision) return;
    snapshot *next = listing_snapshot(pj_get(result, "flags"));
    if (!next) return;
    set_position(c, result, revision);
    mirror_publish(c, next);
}

void complete(pwflags_client *c, const request *r, int error, const pj_value *result, const pj_value *rpc_error) {
    int status = 0;
    if (rpc_error) error = rpc_errno(rpc_error, &status);
    else if (!error && (!result || result->type != PJ_OBJECT)) error = -EPROTO;
    switch (r->kind) {
    case REQ_LISTEN: break;
    case REQ_EXPIRY:
        if (!error && r->generation == c->generation) c->expires_at_ms = parse_expiry(pj_get(result, "expiresAt"));
        break;
    case REQ_REFRESH:
        /* A success reports 200, as D-Bus's Refresh does: one status for a successful refresh everywhere. */
        if (!error) {
            refreshed(c, r, result);
            status = 200;
        }
        if (r->callback) ((pwflags_refresh_fn)r->callback)(c, error, status, r->userdata);
        break;
    case REQ_IMPRESSION: {
        const char *outcome = error ? NULL : pj_get_string(result, "outcome");
        long long st = 0;
        if (!error && !outcome) error = -EPROTO;
        if (outcome && pj_get_int64(result, "status", &st) && st >= 0 && st < 1000000) status = (int)st;
        if (r->callback) ((pwflags_impression_fn)r->callback)(c, error, outcome, status, r->userdata);
        break;
    }
    case REQ_DONE:
        if (r->callback) ((pwflags_done_fn)r->callback)(c, error, r->userdata);
        break;
    case REQ_STATUS: {
        char *text = NULL;
        if (!error) {
            text = strndup(result->raw, result->raw_len);
            if (!text) error = -ENOMEM;
            if (r->generation == c->generation) c->expires_at_ms = parse_expiry(pj_get(result, "expiresAt"));
        }
        if (r->callback) ((pwflags_status_fn)r->callback)(c, error, text, r->userdata);
        free(text);
        break;
    }
    }
}

void message_handle(pwflags_client *c, const char *line, size_t len) {
    if (len && line[len - 1] == '\r') len--;
    if (!len) return;
    pj_doc doc;
    if (pj_parse(&doc, line, len) < 0 || doc.root->type != PJ_OBJECT) {
        if (doc.root) pj_free(&doc);
        connection_close(c);
        return;
    }
    const char *method = pj_get_string(doc.root, "method");
    const pj_value *id = pj_get(doc.root, "id");
    if (method && !id) {
        if (strcmp(method, "flagsChanged") == 0) flags_changed(c, pj_get(doc.root, "params"));
        pj_free(&doc);
        return;
    }
    long long number;
    if (!id || !pj_get_int64(doc.root, "id", &number) || c->n_pending == 0 || c->pending[0].id != number) {
        /* Answers come in request order: any other answer means we no longer agree on the conversation. */
        pj_free(&doc);
        connection_close(c);
        return;
    }
    request r = c->pending[0];
    memmove(&c->pending[0], &c->pending[1], (c->n_pending - 1) * sizeof *c->pending);
    c->n_pending--;
    const pj_value *result = pj_get(doc.root, "result"), *error = pj_get(doc.root, "error");
    if (r.kind == REQ_LISTEN) {
        if (error) connection_close(c);
        else subscribed(c, result, c->have_epoch && atomic_load(&c->has_snapshot));
    } else {
        complete(c, &r, 0, result, error);
    }
    pj_free(&doc);
}
