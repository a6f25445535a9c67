/* pwflags_flag: one flag, immutable and reference-counted, with its typed property reads. */
#include "flag.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct packer {
    char *next, *end;
} packer;

static const char *pack(packer *p, const char *bytes, size_t len) {
    char *out = p->next;
    memcpy(out, bytes, len);
    out[len] = '\0';
    p->next += len + 1;
    return out;
}

static int compare_props(const void *a, const void *b) {
    return strcmp(((const flag_prop *)a)->name, ((const flag_prop *)b)->name);
}

pwflags_flag *flag_from_json(const pj_value *object, int *error) {
    *error = -EINVAL;
    const pj_value *key = pj_get(object, "key");
    const pj_value *enabled = pj_get(object, "enabled");
    const pj_value *rule = pj_get(object, "ruleId");
    const pj_value *props = pj_get(object, "properties");
    const pj_value *source = pj_get(object, "source");
    if (!key || key->type != PJ_STRING || !enabled || (enabled->type != PJ_TRUE && enabled->type != PJ_FALSE))
        return NULL;
    if (rule && rule->type != PJ_STRING) return NULL;
    if (props && props->type != PJ_OBJECT && props->type != PJ_NULL) return NULL;
    if (source && source->type != PJ_STRING) source = NULL;
    size_t n_props = props && props->type == PJ_OBJECT ? props->count : 0;
    /* Every string is at most as long as its JSON text: the raw lengths bound the allocation. */
    size_t text = object->raw_len + 1 + key->str_len + 1 + (rule ? rule->str_len : 0) + 1 +
                  (source ? source->str_len : 0) + 1;
    for (const pj_value *m = n_props ? props->first : NULL; m; m = m->next)
        text += m->key_len + 1 + m->raw_len + 1;
    size_t size = sizeof(pwflags_flag) + n_props * sizeof(flag_prop) + text;
    pwflags_flag *f = malloc(size);
    if (!f) {
        *error = -ENOMEM;
        return NULL;
    }
    packer p = {(char *)(f + 1) + n_props * sizeof(flag_prop), (char *)f + size};
    atomic_init(&f->refs, 1);
    f->key = pack(&p, key->str, key->str_len);
    f->key_len = key->str_len;
    f->enabled = enabled->type == PJ_TRUE;
    f->rule_id = pack(&p, rule ? rule->str : "", rule ? rule->str_len : 0);
    f->source = source ? pack(&p, source->str, source->str_len) : NULL;
    f->overridden = source && strcmp(source->str, "override") == 0;
    f->raw = pack(&p, object->raw, object->raw_len);
    f->raw_len = object->raw_len;
    f->n_props = n_props;
    f->props = (flag_prop *)(f + 1);
    size_t i = 0;
    for (const pj_value *m = n_props ? props->first : NULL; m; m = m->next, i++) {
        flag_prop *fp = &f->props[i];
        memset(fp, 0, sizeof *fp);
        fp->name = pack(&p, m->key, m->key_len);
        switch (m->type) {
        case PJ_TRUE:
        case PJ_FALSE:
            fp->type = PROP_BOOL;
            fp->boolean = m->type == PJ_TRUE;
            break;
        case PJ_NUMBER:
            fp->type = PROP_NUMBER;
            fp->number = m->num;
            break;
        case PJ_STRING:
            fp->type = PROP_STRING;
            fp->text = pack(&p, m->str, m->str_len);
            break;
        case PJ_OBJECT:
        case PJ_ARRAY:
            fp->type = m->type == PJ_OBJECT ? PROP_OBJECT : PROP_ARRAY;
            fp->text = pack(&p, m->raw, m->raw_len);
            break;
        default: fp->type = PROP_NULL; break;
        }
    }
    qsort(f->props, n_props, sizeof(flag_prop), compare_props);
    *error = 0;
    return f;
}

bool flag_same(const pwflags_flag *a, const pwflags_flag *b) {
    return a->raw_len == b->raw_len && memcmp(a->raw, b->raw, a->raw_len) == 0;
}

static const flag_prop *find_prop(const pwflags_flag *f, const char *name) {
    if (!f || !name) return NULL;
    size_t lo = 0, hi = f->n_props;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, f->props[mid].name);
        if (c == 0) return &f->props[mid];
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return NULL;
}

pwflags_flag *pwflags_flag_ref(pwflags_flag *flag) {
    if (flag) atomic_fetch_add_explicit(&flag->refs, 1, memory_order_relaxed);
    return flag;
}

pwflags_flag *pwflags_flag_unref(pwflags_flag *flag) {
    if (flag && atomic_fetch_sub_explicit(&flag->refs, 1, memory_order_acq_rel) == 1) free(flag);
    return NULL;
}

const char *pwflags_flag_get_key(const pwflags_flag *flag) { return flag ? flag->key : NULL; }
int pwflags_flag_is_enabled(const pwflags_flag *flag) { return flag ? flag->enabled : -EINVAL; }
const char *pwflags_flag_get_rule_id(const pwflags_flag *flag) { return flag ? flag->rule_id : NULL; }
const char *pwflags_flag_get_source(const pwflags_flag *flag) { return flag ? flag->source : NULL; }

const char *pwflags_flag_get_string(const pwflags_flag *flag, const char *name, const char *default_value) {
    const flag_prop *p = find_prop(flag, name);
    return p && p->type == PROP_STRING ? p->text : default_value;
}

double pwflags_flag_get_number(const pwflags_flag *flag, const char *name, double default_value) {
    const flag_prop *p = find_prop(flag, name);
    return p && p->type == PROP_NUMBER ? p->number : default_value;
}

int pwflags_flag_get_bool(const pwflags_flag *flag, const char *name, int default_value) {
    const flag_prop *p = find_prop(flag, name);
    return p && p->type == PROP_BOOL ? p->boolean : default_value;
}

const char *pwflags_flag_get_json_object(const pwflags_flag *flag, const char *name) {
    const flag_prop *p = find_prop(flag, name);
    return p && p->type == PROP_OBJECT ? p->text : NULL;
}

const char *pwflags_flag_get_json_array(const pwflags_flag *flag, const char *name) {
    const flag_prop *p = find_prop(flag, name);
    return p && p->type == PROP_ARRAY ? p->text : NULL;
}
