/* The JSON writer: a growing buffer with a limit, and JSON strings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

int pj_buf_append(pj_buf *buf, const char *bytes, size_t len) {
    if (len > buf->max || buf->len > buf->max - len) return -ENOBUFS;
    if (buf->len + len + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 256;
        while (cap < buf->len + len + 1) cap *= 2;
        char *data = realloc(buf->data, cap);
        if (!data) return -ENOMEM;
        buf->data = data;
        buf->cap = cap;
    }
    memcpy(buf->data + buf->len, bytes, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
    return 0;
}

int pj_buf_puts(pj_buf *buf, const char *text) { return pj_buf_append(buf, text, strlen(text)); }

int pj_buf_string(pj_buf *buf, const char *text) {
    int r = pj_buf_append(buf, "\"", 1);
    for (const unsigned char *s = (const unsigned char *)text; r == 0 && *s; s++) {
        char esc[8];
        if (*s == '"' || *s == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*s;
            r = pj_buf_append(buf, esc, 2);
        } else if (*s < 0x20) {
            static const char hex[] = "0123456789abcdef";
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[*s >> 4];
            esc[5] = hex[*s & 15];
            r = pj_buf_append(buf, esc, 6);
        } else {
            r = pj_buf_append(buf, (const char *)s, 1);
        }
    }
    return r < 0 ? r : pj_buf_append(buf, "\"", 1);
}

void pj_buf_free(pj_buf *buf) {
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
}
