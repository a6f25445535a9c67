/* Flags and the immutable snapshots of them that reads use. */
#ifndef PWFLAGS_FLAG_H
#define PWFLAGS_FLAG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "pwflags.h"

typedef enum prop_type { PROP_NULL, PROP_BOOL, PROP_NUMBER, PROP_STRING, PROP_OBJECT, PROP_ARRAY } prop_type;

typedef struct flag_prop {
    const char *name;
    prop_type type;
    bool boolean;
    double number;
    const char *text; /* PROP_STRING: the string; PROP_OBJECT, PROP_ARRAY: the JSON text */
} flag_prop;

/* Immutable once made; one allocation holds the struct, its properties and all their text. */
struct pwflags_flag {
    atomic_long refs;
    const char *key;
    size_t key_len;
    bool enabled;
    bool overridden;
    const char *rule_id;
    const char *source; /* NULL when the daemon did not say */
    const char *raw;    /* the flag's JSON text: two flags are the same when these bytes are (R9) */
    size_t raw_len;
    size_t n_props;
    flag_prop *props; /* sorted by name's bytes */
};

/* A flag from its wire object; NULL with *error set (-EINVAL: not a flag, -ENOMEM). */
pwflags_flag *flag_from_json(const pj_value *object, int *error);
bool flag_same(const pwflags_flag *a, const pwflags_flag *b);

/* An immutable set of flags: sorted by key for diffs, hashed by key for reads. */
typedef struct snapshot {
    size_t n;
    pwflags_flag **sorted;
    size_t mask; /* table size - 1 */
    pwflags_flag **table;
} snapshot;

/* Takes over the references in flags[0..n) (sorts them; of two flags with one key, which the daemon never sends,
 * one is kept). NULL on -ENOMEM, having released them. */
snapshot *snapshot_new(pwflags_flag **flags, size_t n);
void snapshot_free(snapshot *s);
pwflags_flag *snapshot_find(const snapshot *s, const char *key, size_t key_len);

/* The keys that changed (new or different in after) and those removed (in before, not after). The arrays point
 * into the snapshots' flags; free them with free(). -ENOMEM. */
int snapshot_diff(const snapshot *before, const snapshot *after, const char ***changed, size_t *n_changed,
                  const char ***removed, size_t *n_removed);

#endif
