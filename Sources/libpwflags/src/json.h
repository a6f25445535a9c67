/* A small, bounded JSON reader and writer: what libpwflags needs of JSON, and nothing else. */
#ifndef PWFLAGS_JSON_H
#define PWFLAGS_JSON_H

#include <stdbool.h>
#include <stddef.h>

/* Nesting deeper than this is refused: the reader recurses once per level. */
#define PJ_MAX_DEPTH 64

typedef enum pj_type { PJ_NULL, PJ_FALSE, PJ_TRUE, PJ_NUMBER, PJ_STRING, PJ_ARRAY, PJ_OBJECT } pj_type;

typedef struct pj_value pj_value;
struct pj_value {
    pj_type type;
    const char *raw; /* the value's text in the parsed line (not NUL-terminated) */
    size_t raw_len;
    char *str; /* PJ_STRING: decoded, NUL-terminated; str_len counts bytes */
    size_t str_len;
    double num;         /* PJ_NUMBER */
    pj_value *first;    /* PJ_ARRAY, PJ_OBJECT: the first element or member */
    pj_value *next;     /* the next element or member of the parent */
    char *key;          /* a member's name, decoded, NUL-terminated */
    size_t key_len;
    size_t count;       /* PJ_ARRAY, PJ_OBJECT: elements or members */
};

typedef struct pj_block pj_block;
typedef struct pj_doc {
    pj_value *root;
    pj_block *blocks; /* the arena every value and string lives in */
} pj_doc;

/* Parses text[0..len) as one JSON value with only whitespace around it. 0, -EINVAL (not JSON), -ENOMEM. The
 * arena never grows past a fixed multiple of len (every value takes at least one byte of input). */
int pj_parse(pj_doc *doc, const char *text, size_t len);
void pj_free(pj_doc *doc);

/* A member of an object by name; NULL when value is no object or has no such member. */
const pj_value *pj_get(const pj_value *object, const char *name);
/* Typed member reads. */
const char *pj_get_string(const pj_value *object, const char *name);
bool pj_get_int64(const pj_value *object, const char *name, long long *out);

/* A growing output buffer with a limit: appends fail with -ENOBUFS past max. */
typedef struct pj_buf {
    char *data;
    size_t len, cap, max;
} pj_buf;

int pj_buf_append(pj_buf *buf, const char *bytes, size_t len);
int pj_buf_puts(pj_buf *buf, const char *text);
/* Appends text as a JSON string, quotes included. */
int pj_buf_string(pj_buf *buf, const char *text);
void pj_buf_free(pj_buf *buf);

#endif
