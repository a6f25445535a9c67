/* libFuzzer target for the JSON reader and the flag decoder, which read what a possibly hostile peer sends.
 * Built and run for a bounded number of runs by the tests (CLibraryFuzzTests):
 *   clang-14 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc src/json.c src/json_writer.c src/flag.c fuzz/json_fuzz.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flag.h"
#include "json.h"

static void walk(const pj_value *v, int depth) {
    if (depth > PJ_MAX_DEPTH + 1) abort();
    if (v->type == PJ_OBJECT) {
        int error;
        pwflags_flag *f = flag_from_json(v, &error);
        if (f) {
            (void)pwflags_flag_get_string(f, "a", "");
            (void)pwflags_flag_get_json_object(f, "b");
            pwflags_flag_unref(f);
        }
    }
    size_t n = 0;
    for (const pj_value *c = v->first; c; c = c->next, n++) walk(c, depth + 1);
    if (n != v->count) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pj_doc doc;
    if (pj_parse(&doc, (const char *)data, size) == 0) {
        walk(doc.root, 0);
        pj_free(&doc);
    }
    pj_buf out = {.max = 1 << 20};
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = '\0';
        /* What the writer escapes, the reader reads back as the same bytes (up to the first NUL). */
        if (pj_buf_string(&out, text) == 0 && pj_parse(&doc, out.data, out.len) == 0) {
            if (doc.root->type != PJ_STRING || strcmp(doc.root->str, text) != 0) abort();
            pj_free(&doc);
        }
        free(text);
    }
    pj_buf_free(&out);
    return 0;
}
