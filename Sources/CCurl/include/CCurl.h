#ifndef PWFLAGSD_CCURL_H
#define PWFLAGSD_CCURL_H
// libcurl, loaded when the first request is made rather than when the daemon starts.
//
// Linking libcurl brings some thirty shared libraries (OpenSSL, nghttp2, libssh2, LDAP, Kerberos, GnuTLS...) into
// every start: the dynamic loader spends most of the daemon's exec-to-READY=1 on them, and their pages are
// resident whether or not a request is ever made (a daemon on a local flags file never makes one). So nothing
// here links libcurl: its header gives the types and constants, and `pwflags_curl_load` opens libcurl.so.4 on
// first use and finds the functions below in it. Every call goes through these wrappers; curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call, so they have one typed wrapper per argument type.
#include <curl/curl.h>

typedef size_t (*pwflags_curl_data_callback)(char *data, size_t size, size_t count, void *context);

/// Loads libcurl and runs its global initialisation, once per process; later calls return the first result.
/// Returns 1 when libcurl is ready, 0 when not: `pwflags_curl_load_error` then says why.
int pwflags_curl_load(void);
/// Why `pwflags_curl_load` failed (the dynamic loader's message, or libcurl's); "" after a success.
const char *pwflags_curl_load_error(void);

// After a successful `pwflags_curl_load` only.
CURL *pwflags_curl_easy_init(void);
void pwflags_curl_easy_cleanup(CURL *handle);
void pwflags_curl_easy_reset(CURL *handle);
const char *pwflags_curl_easy_strerror(CURLcode code);
CURLM *pwflags_curl_multi_init(void);
CURLMcode pwflags_curl_multi_cleanup(CURLM *multi);
CURLMcode pwflags_curl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode pwflags_curl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode pwflags_curl_multi_perform(CURLM *multi, int *running);
CURLMcode pwflags_curl_multi_poll(CURLM *multi, int timeout_ms);
CURLMcode pwflags_curl_multi_wakeup(CURLM *multi);
struct curl_slist *pwflags_curl_slist_append(struct curl_slist *list, const char *line);
void pwflags_curl_slist_free_all(struct curl_slist *list);

CURLcode pwflags_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode pwflags_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode pwflags_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode pwflags_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode pwflags_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode pwflags_curl_set_data_callback(CURL *handle, CURLoption option, pwflags_curl_data_callback callback);
CURLcode pwflags_curl_get_long(CURL *handle, CURLINFO info, long *value);
CURLcode pwflags_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value);

/// The value of the last `name` header of the last reply, or NULL; valid until the handle's next transfer.
const char *pwflags_curl_header(CURL *handle, const char *name);
/// True when a transfer of `multi` ended, with its result in `result`.
int pwflags_curl_multi_done(CURLM *multi, CURLcode *result);

#endif
