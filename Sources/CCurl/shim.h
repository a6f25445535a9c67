#ifndef PWFLAGSD_CCURL_SHIM_H
#define PWFLAGSD_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed helper per argument
// type, each a plain call of the macro.

typedef size_t (*pwflags_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*pwflags_curl_progress_callback)(void *context, curl_off_t total_down, curl_off_t now_down,
                                              curl_off_t total_up, curl_off_t now_up);

static inline CURLcode pwflags_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pwflags_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pwflags_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pwflags_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pwflags_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pwflags_curl_set_data_callback(CURL *handle, CURLoption option,
                                                      pwflags_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode pwflags_curl_set_progress_callback(CURL *handle, pwflags_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode pwflags_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode pwflags_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode pwflags_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

/// The value of the last `name` header of the last reply, or NULL; valid until the handle's next transfer.
static inline const char *pwflags_curl_header(CURL *handle, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(handle, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) {
        return NULL;
    }
    return header->value;
}

/// True when a transfer of `multi` ended, with its result in `result`.
static inline int pwflags_curl_multi_done(CURLM *multi, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

#endif
