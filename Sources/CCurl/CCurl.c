#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The functions found in libcurl.so.4 by `load`, written once under `once` and only read after it.
static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    CURLHcode (*easy_header)(CURL *handle, const char *name, size_t index, unsigned int origin, int request,
                             struct curl_header **header);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *multi);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_perform)(CURLM *multi, int *running);
    CURLMcode (*multi_poll)(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms,
                            int *ready);
    CURLMcode (*multi_wakeup)(CURLM *multi);
    CURLMsg *(*multi_info_read)(CURLM *multi, int *queued);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char error[256];

// Finds `name` in `library` into `*slot`; on failure keeps the first missing name in `error`.
static int find(void *library, const char *name, void **slot) {
    *slot = dlsym(library, name);
    if (*slot == NULL && error[0] == '\0') {
        snprintf(error, sizeof error, "libcurl.so.4 has no %s", name);
    }
    return *slot != NULL;
}

static void load(void) {
    // Never closed: libcurl and OpenSSL stay for the life of the process once a request was made.
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(error, sizeof error, "%s", reason != NULL ? reason : "libcurl.so.4 cannot be loaded");
        return;
    }
    int found = 1;
    found &= find(library, "curl_global_init", (void **)&curl.global_init);
    found &= find(library, "curl_easy_init", (void **)&curl.easy_init);
    found &= find(library, "curl_easy_cleanup", (void **)&curl.easy_cleanup);
    found &= find(library, "curl_easy_reset", (void **)&curl.easy_reset);
    found &= find(library, "curl_easy_strerror", (void **)&curl.easy_strerror);
    found &= find(library, "curl_easy_setopt", (void **)&curl.easy_setopt);
    found &= find(library, "curl_easy_getinfo", (void **)&curl.easy_getinfo);
    found &= find(library, "curl_easy_header", (void **)&curl.easy_header);
    found &= find(library, "curl_multi_init", (void **)&curl.multi_init);
    found &= find(library, "curl_multi_cleanup", (void **)&curl.multi_cleanup);
    found &= find(library, "curl_multi_add_handle", (void **)&curl.multi_add_handle);
    found &= find(library, "curl_multi_remove_handle", (void **)&curl.multi_remove_handle);
    found &= find(library, "curl_multi_perform", (void **)&curl.multi_perform);
    found &= find(library, "curl_multi_poll", (void **)&curl.multi_poll);
    found &= find(library, "curl_multi_wakeup", (void **)&curl.multi_wakeup);
    found &= find(library, "curl_multi_info_read", (void **)&curl.multi_info_read);
    found &= find(library, "curl_slist_append", (void **)&curl.slist_append);
    found &= find(library, "curl_slist_free_all", (void **)&curl.slist_free_all);
    if (!found) {
        return;
    }
    CURLcode initialised = curl.global_init(CURL_GLOBAL_DEFAULT);
    if (initialised != CURLE_OK) {
        snprintf(error, sizeof error, "curl_global_init failed: %s", curl.easy_strerror(initialised));
        return;
    }
    loaded = 1;
}

int pwflags_curl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *pwflags_curl_load_error(void) {
    pthread_once(&once, load);
    return error;
}

CURL *pwflags_curl_easy_init(void) { return curl.easy_init(); }
void pwflags_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
void pwflags_curl_easy_reset(CURL *handle) { curl.easy_reset(handle); }
const char *pwflags_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }
CURLM *pwflags_curl_multi_init(void) { return curl.multi_init(); }
CURLMcode pwflags_curl_multi_cleanup(CURLM *multi) { return curl.multi_cleanup(multi); }
CURLMcode pwflags_curl_multi_add_handle(CURLM *multi, CURL *handle) { return curl.multi_add_handle(multi, handle); }
CURLMcode pwflags_curl_multi_remove_handle(CURLM *multi, CURL *handle) {
    return curl.multi_remove_handle(multi, handle);
}
CURLMcode pwflags_curl_multi_perform(CURLM *multi, int *running) { return curl.multi_perform(multi, running); }
CURLMcode pwflags_curl_multi_poll(CURLM *multi, int timeout_ms) {
    return curl.multi_poll(multi, NULL, 0, timeout_ms, NULL);
}
CURLMcode pwflags_curl_multi_wakeup(CURLM *multi) { return curl.multi_wakeup(multi); }
struct curl_slist *pwflags_curl_slist_append(struct curl_slist *list, const char *line) {
    return curl.slist_append(list, line);
}
void pwflags_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLcode pwflags_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode pwflags_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode pwflags_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode pwflags_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode pwflags_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode pwflags_curl_set_data_callback(CURL *handle, CURLoption option, pwflags_curl_data_callback callback) {
    return curl.easy_setopt(handle, option, callback);
}
CURLcode pwflags_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl.easy_getinfo(handle, info, value);
}
CURLcode pwflags_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl.easy_getinfo(handle, info, value);
}

const char *pwflags_curl_header(CURL *handle, const char *name) {
    struct curl_header *header = NULL;
    if (curl.easy_header(handle, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) {
        return NULL;
    }
    return header->value;
}

int pwflags_curl_multi_done(CURLM *multi, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = curl.multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
