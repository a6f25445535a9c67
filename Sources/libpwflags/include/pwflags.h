/* libpwflags: the Pushwoosh feature-flag SDK's API for C, C++ and anything that links C, served by pwflagsd.
 *
 * Every function that can fail returns a negative errno value (-ENOMEM, -EINVAL, ...) and never aborts or
 * prints. Reads (pwflags_client_get, pwflags_client_is_enabled and the pwflags_flag_* accessors) answer from an
 * in-memory mirror and are safe from any thread; the other calls may be made from any thread too. Callbacks run
 * inside pwflags_client_process(), on the thread that calls it (the library's own thread after
 * pwflags_client_start_thread()). See pwflags(3) and docs/c-library.md. */
#ifndef PWFLAGS_H
#define PWFLAGS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define PWFLAGS_EXPORT __attribute__((visibility("default")))
#else
#define PWFLAGS_EXPORT
#endif

typedef struct pwflags_client pwflags_client;
typedef struct pwflags_flag pwflags_flag;

typedef enum pwflags_app_state {
    PWFLAGS_APP_FOREGROUND = 0,
    PWFLAGS_APP_BACKGROUND = 1
} pwflags_app_state;

/* An update listener: called after a change of what the reads return (R9), once the mirror shows it. */
typedef void (*pwflags_update_fn)(pwflags_client *client, const char *const *changed, size_t n_changed,
                                  const char *const *removed, size_t n_removed, void *userdata);
/* The end of a refresh: error 0 with status 200, or a negative errno with the R11 status (0: no HTTP answer). */
typedef void (*pwflags_refresh_fn)(pwflags_client *client, int error, int status, void *userdata);
/* The end of a log-impression: outcome "sent", "duplicate", "noFlag", "failed", "logged", "overridden"
 * (NULL when error < 0); status is the R11 status of "failed". */
typedef void (*pwflags_impression_fn)(pwflags_client *client, int error, const char *outcome, int status,
                                      void *userdata);
/* The end of a call with nothing to return but success (0) or a negative errno. */
typedef void (*pwflags_done_fn)(pwflags_client *client, int error, void *userdata);
/* The daemon's status as JSON text (NULL when error < 0). */
typedef void (*pwflags_status_fn)(pwflags_client *client, int error, const char *status_json, void *userdata);

/* The client. socket_path NULL or "": $PWFLAGS_SOCKET, else /run/pwflagsd/pwflagsd.sock. */
PWFLAGS_EXPORT int pwflags_client_new(pwflags_client **ret, const char *socket_path);
PWFLAGS_EXPORT pwflags_client *pwflags_client_free(pwflags_client *client);
PWFLAGS_EXPORT int pwflags_client_get_fd(pwflags_client *client);
PWFLAGS_EXPORT int pwflags_client_process(pwflags_client *client);
PWFLAGS_EXPORT int pwflags_client_wait(pwflags_client *client, uint64_t timeout_usec);
PWFLAGS_EXPORT int pwflags_client_start_thread(pwflags_client *client);
PWFLAGS_EXPORT int pwflags_client_wait_for_snapshot(pwflags_client *client, uint64_t timeout_usec);
PWFLAGS_EXPORT int pwflags_client_has_snapshot(pwflags_client *client);
PWFLAGS_EXPORT int pwflags_client_is_connected(pwflags_client *client);

/* Reads: from the mirror, never the socket; any thread. */
PWFLAGS_EXPORT int pwflags_client_get(pwflags_client *client, const char *key, pwflags_flag **ret);
PWFLAGS_EXPORT int pwflags_client_is_enabled(pwflags_client *client, const char *key, int default_value);

PWFLAGS_EXPORT pwflags_flag *pwflags_flag_ref(pwflags_flag *flag);
PWFLAGS_EXPORT pwflags_flag *pwflags_flag_unref(pwflags_flag *flag);
PWFLAGS_EXPORT const char *pwflags_flag_get_key(const pwflags_flag *flag);
PWFLAGS_EXPORT int pwflags_flag_is_enabled(const pwflags_flag *flag);
PWFLAGS_EXPORT const char *pwflags_flag_get_rule_id(const pwflags_flag *flag);
PWFLAGS_EXPORT const char *pwflags_flag_get_source(const pwflags_flag *flag);
PWFLAGS_EXPORT const char *pwflags_flag_get_string(const pwflags_flag *flag, const char *name,
                                                   const char *default_value);
PWFLAGS_EXPORT double pwflags_flag_get_number(const pwflags_flag *flag, const char *name, double default_value);
PWFLAGS_EXPORT int pwflags_flag_get_bool(const pwflags_flag *flag, const char *name, int default_value);
PWFLAGS_EXPORT const char *pwflags_flag_get_json_object(const pwflags_flag *flag, const char *name);
PWFLAGS_EXPORT const char *pwflags_flag_get_json_array(const pwflags_flag *flag, const char *name);

/* Listeners. add returns a handle (> 0) for remove, or a negative errno. */
PWFLAGS_EXPORT int pwflags_client_add_listener(pwflags_client *client, pwflags_update_fn callback,
                                               void *userdata);
PWFLAGS_EXPORT int pwflags_client_remove_listener(pwflags_client *client, int handle);

/* Calls to the daemon: they return at once (0, or a negative errno when nothing was sent) and end in the
 * callback, which may be NULL. */
PWFLAGS_EXPORT int pwflags_client_refresh(pwflags_client *client, pwflags_refresh_fn callback, void *userdata);
PWFLAGS_EXPORT int pwflags_client_log_impression(pwflags_client *client, const char *key,
                                                 pwflags_impression_fn callback, void *userdata);
PWFLAGS_EXPORT int pwflags_client_set_user_id(pwflags_client *client, const char *user_id,
                                              pwflags_done_fn callback, void *userdata);
PWFLAGS_EXPORT int pwflags_client_set_app_state(pwflags_client *client, pwflags_app_state state,
                                                pwflags_done_fn callback, void *userdata);
PWFLAGS_EXPORT int pwflags_client_status(pwflags_client *client, pwflags_status_fn callback, void *userdata);

#ifdef __cplusplus
}
#endif

#endif
