/* Snapshots: the immutable flag sets that reads look keys up in, and the diff that tells listeners (R9). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flag.h"

static int compare_keys(const pwflags_flag *a, const pwflags_flag *b) {
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, n);
    if (c) return c;
    return a->key_len < b->key_len ? -1 : a->key_len > b->key_len;
}

/* By key, compared by its bytes (R2). */
static int compare_entries(const void *a, const void *b) {
    const pwflags_flag *const *x = a, *const *y = b;
    return compare_keys(*x, *y);
}

static uint64_t hash_key(const char *key, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
    return h;
}

snapshot *snapshot_new(pwflags_flag **flags, size_t n) {
    snapshot *s = calloc(1, sizeof *s);
    size_t size = 8;
    while (size < n * 2) size *= 2;
    if (s) {
        s->sorted = malloc((n ? n : 1) * sizeof *s->sorted);
        s->table = calloc(size, sizeof *s->table);
    }
    if (!s || !s->sorted || !s->table) {
        for (size_t i = 0; i < n; i++) pwflags_flag_unref(flags[i]);
        if (s) {
            free(s->sorted);
            free(s->table);
            free(s);
        }
        return NULL;
    }
    if (n) qsort(flags, n, sizeof *flags, compare_entries);
    for (size_t i = 0; i < n; i++) {
        if (s->n && compare_keys(s->sorted[s->n - 1], flags[i]) == 0) {
            pwflags_flag_unref(s->sorted[s->n - 1]);
            s->n--;
        }
        s->sorted[s->n++] = flags[i];
    }
    s->mask = size - 1;
    for (size_t i = 0; i < s->n; i++) {
        size_t at = (size_t)hash_key(s->sorted[i]->key, s->sorted[i]->key_len) & s->mask;
        while (s->table[at]) at = (at + 1) & s->mask;
        s->table[at] = s->sorted[i];
    }
    return s;
}

void snapshot_free(snapshot *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) pwflags_flag_unref(s->sorted[i]);
    free(s->sorted);
    free(s->table);
    free(s);
}

pwflags_flag *snapshot_find(const snapshot *s, const char *key, size_t key_len) {
    if (!s || !s->n) return NULL;
    size_t at = (size_t)hash_key(key, key_len) & s->mask;
    for (pwflags_flag *f; (f = s->table[at]); at = (at + 1) & s->mask)
        if (f->key_len == key_len && memcmp(f->key, key, key_len) == 0) return f;
    return NULL;
}

int snapshot_diff(const snapshot *before, const snapshot *after, const char ***changed, size_t *n_changed,
                  const char ***removed, size_t *n_removed) {
    size_t nb = before ? before->n : 0, na = after ? after->n : 0;
    *changed = malloc((na ? na : 1) * sizeof **changed);
    *removed = malloc((nb ? nb : 1) * sizeof **removed);
    *n_changed = *n_removed = 0;
    if (!*changed || !*removed) {
        free(*changed);
        free(*removed);
        *changed = *removed = NULL;
        return -ENOMEM;
    }
    size_t i = 0, j = 0;
    while (i < nb || j < na) {
        int c = i == nb ? 1 : j == na ? -1 : compare_keys(before->sorted[i], after->sorted[j]);
        if (c < 0) {
            (*removed)[(*n_removed)++] = before->sorted[i++]->key;
        } else if (c > 0) {
            (*changed)[(*n_changed)++] = after->sorted[j++]->key;
        } else {
            if (!flag_same(before->sorted[i], after->sorted[j])) (*changed)[(*n_changed)++] = after->sorted[j]->key;
            i++;
            j++;
        }
    }
    return 0;
}
