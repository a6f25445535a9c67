/* The JSON reader. It is fed lines from a peer that may be hostile: every loop is bounded by
 * the input, recursion by PJ_MAX_DEPTH, and memory by the arena's limit. It is fuzzed (fuzz/json_fuzz.c). */
#define _GNU_SOURCE
#include "json.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pj_block {
    pj_block *next;
    size_t used, size;
    max_align_t data[];
};

typedef struct parser {
    const char *p, *end;
    pj_doc *doc;
    size_t budget; /* bytes the arena may still take */
    int error;
} parser;

static void *arena_alloc(parser *ps, size_t size) {
    size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    if (size > ps->budget) {
        ps->error = -ENOMEM;
        return NULL;
    }
    pj_block *b = ps->doc->blocks;
    if (!b || b->size - b->used < size) {
        size_t want = size > 16384 ? size : 16384;
        b = malloc(sizeof(pj_block) + want);
        if (!b) {
            ps->error = -ENOMEM;
            return NULL;
        }
        b->size = want;
        b->used = 0;
        b->next = ps->doc->blocks;
        ps->doc->blocks = b;
    }
    void *out = (char *)b->data + b->used;
    b->used += size;
    ps->budget -= size;
    return out;
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static int fail(parser *ps) {
    if (!ps->error) ps->error = -EINVAL;
    return ps->error;
}

static int hex4(const char *s, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Reads a string at ps->p (on its opening quote); the decoded text is never longer than the escaped one. */
static int parse_string(parser *ps, char **out, size_t *out_len) {
    const char *s = ps->p + 1;
    const char *q = s;
    while (q < ps->end && *q != '"') {
        if (*q == '\\' && ps->end - q < 2) return fail(ps);
        q += *q == '\\' ? 2 : 1;
    }
    if (q >= ps->end) return fail(ps);
    char *dst = arena_alloc(ps, (size_t)(q - s) + 1);
    if (!dst) return ps->error;
    size_t n = 0;
    while (s < q) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20) return fail(ps);
        if (c != '\\') {
            dst[n++] = (char)c;
            s++;
            continue;
        }
        s++;
        switch (*s) {
        case '"': dst[n++] = '"'; break;
        case '\\': dst[n++] = '\\'; break;
        case '/': dst[n++] = '/'; break;
        case 'b': dst[n++] = '\b'; break;
        case 'f': dst[n++] = '\f'; break;
        case 'n': dst[n++] = '\n'; break;
        case 'r': dst[n++] = '\r'; break;
        case 't': dst[n++] = '\t'; break;
        case 'u': {
            unsigned cp, low;
            if (q - s < 5 || hex4(s + 1, &cp) < 0) return fail(ps);
            s += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (q - s < 7 || s[1] != '\\' || s[2] != 'u' || hex4(s + 3, &low) < 0 || low < 0xDC00 ||
                    low > 0xDFFF)
                    return fail(ps);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                s += 6;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(ps);
            }
            /* "\uXXXX" is 6 bytes, at most 3 of UTF-8; a pair is 12 bytes, 4 of UTF-8: the buffer suffices. */
            n += put_utf8(dst + n, cp);
            break;
        }
        default: return fail(ps);
        }
        s++;
    }
    dst[n] = '\0';
    *out = dst;
    *out_len = n;
    ps->p = q + 1;
    return 0;
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* JSON's number grammar, then strtod in the C locale: a program's setlocale() must not change what 1.5 reads. */
static int parse_number(parser *ps, pj_value *v) {
    const char *s = ps->p;
    const char *p = s;
    if (p < ps->end && *p == '-') p++;
    if (p >= ps->end) return fail(ps);
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9')
        while (p < ps->end && *p >= '0' && *p <= '9') p++;
    else return fail(ps);
    if (p < ps->end && *p == '.') {
        p++;
        if (p >= ps->end || *p < '0' || *p > '9') return fail(ps);
        while (p < ps->end && *p >= '0' && *p <= '9') p++;
    }
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < ps->end && (*p == '+' || *p == '-')) p++;
        if (p >= ps->end || *p < '0' || *p > '9') return fail(ps);
        while (p < ps->end && *p >= '0' && *p <= '9') p++;
    }
    size_t len = (size_t)(p - s);
    char stack[64];
    char *copy = len < sizeof stack ? stack : arena_alloc(ps, len + 1);
    if (!copy) return ps->error;
    memcpy(copy, s, len);
    copy[len] = '\0';
    pthread_once(&c_locale_once, make_c_locale);
    v->num = c_locale ? strtod_l(copy, NULL, c_locale) : strtod(copy, NULL);
    v->type = PJ_NUMBER;
    ps->p = p;
    return 0;
}

static int literal(parser *ps, const char *word, pj_type type, pj_value *v) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return fail(ps);
    ps->p += n;
    v->type = type;
    return 0;
}

static int parse_value(parser *ps, pj_value *v, int depth);

static int parse_container(parser *ps, pj_value *v, int depth, bool object) {
    if (depth >= PJ_MAX_DEPTH) return fail(ps);
    char close = object ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    pj_value **tail = &v->first;
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 0;
    }
    for (;;) {
        pj_value *child = arena_alloc(ps, sizeof *child);
        if (!child) return ps->error;
        memset(child, 0, sizeof *child);
        if (object) {
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"') return fail(ps);
            if (parse_string(ps, &child->key, &child->key_len) < 0) return ps->error;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') return fail(ps);
            ps->p++;
        }
        if (parse_value(ps, child, depth + 1) < 0) return ps->error;
        *tail = child;
        tail = &child->next;
        v->count++;
        skip_ws(ps);
        if (ps->p >= ps->end) return fail(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p != close) return fail(ps);
        ps->p++;
        return 0;
    }
}

static int parse_value(parser *ps, pj_value *v, int depth) {
    skip_ws(ps);
    if (ps->p >= ps->end) return fail(ps);
    v->raw = ps->p;
    int r;
    switch (*ps->p) {
    case '{':
        v->type = PJ_OBJECT;
        r = parse_container(ps, v, depth, true);
        break;
    case '[':
        v->type = PJ_ARRAY;
        r = parse_container(ps, v, depth, false);
        break;
    case '"':
        v->type = PJ_STRING;
        r = parse_string(ps, &v->str, &v->str_len);
        break;
    case 't': r = literal(ps, "true", PJ_TRUE, v); break;
    case 'f': r = literal(ps, "false", PJ_FALSE, v); break;
    case 'n': r = literal(ps, "null", PJ_NULL, v); break;
    default: r = parse_number(ps, v); break;
    }
    if (r < 0) return r;
    v->raw_len = (size_t)(ps->p - v->raw);
    return 0;
}

int pj_parse(pj_doc *doc, const char *text, size_t len) {
    doc->root = NULL;
    doc->blocks = NULL;
    if (len > SIZE_MAX / 8) return -ENOMEM;
    /* Each value costs one pj_value and its text at most once more: 8x the input plus one block bounds it. */
    parser ps = {.p = text, .end = text + len, .doc = doc, .budget = len * 8 + 65536, .error = 0};
    pj_value *root = arena_alloc(&ps, sizeof *root);
    if (!root) return ps.error;
    memset(root, 0, sizeof *root);
    if (parse_value(&ps, root, 0) < 0) {
        pj_free(doc);
        return ps.error;
    }
    skip_ws(&ps);
    if (ps.p != ps.end) {
        pj_free(doc);
        return -EINVAL;
    }
    doc->root = root;
    return 0;
}

void pj_free(pj_doc *doc) {
    pj_block *b = doc->blocks;
    while (b) {
        pj_block *next = b->next;
        free(b);
        b = next;
    }
    doc->blocks = NULL;
    doc->root = NULL;
}

const pj_value *pj_get(const pj_value *object, const char *name) {
    if (!object || object->type != PJ_OBJECT) return NULL;
    size_t n = strlen(name);
    for (const pj_value *m = object->first; m; m = m->next)
        if (m->key_len == n && memcmp(m->key, name, n) == 0) return m;
    return NULL;
}

const char *pj_get_string(const pj_value *object, const char *name) {
    const pj_value *v = pj_get(object, name);
    return v && v->type == PJ_STRING ? v->str : NULL;
}

bool pj_get_int64(const pj_value *object, const char *name, long long *out) {
    const pj_value *v = pj_get(object, name);
    if (!v || v->type != PJ_NUMBER || v->num != v->num || v->num < -9.0e18 || v->num > 9.0e18) return false;
    if ((double)(long long)v->num != v->num) return false;
    *out = (long long)v->num;
    return true;
}
