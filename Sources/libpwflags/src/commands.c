/* The calls a program makes of the daemon. Each is sent at once when the daemon is connected (a reconnection is
 * tried first when it is not); its callback runs in pwflags_client_process(), never inside the call. */
#include <errno.h>
#include <string.h>

#include "client.h"

static int call(pwflags_client *c, request_kind kind, const char *method, const char *params,
                void (*callback)(void), void *userdata) {
    pthread_mutex_lock(&c->lock);
    int r = 0;
    if (c->sock < 0 && connection_open(c) < 0) {
        /* R11: a call that reached no daemon ends with status 0, in the next process(). */
        connection_defer(c, kind, callback, userdata, -ENOTCONN);
    } else {
        r = connection_send(c, kind, method, params, callback, userdata);
        if (r == -ENOTCONN) {
            connection_defer(c, kind, callback, userdata, r);
            r = 0;
        }
    }
    connection_arm_timer(c);
    pthread_mutex_unlock(&c->lock);
    return r;
}

static int call_with_string(pwflags_client *c, request_kind kind, const char *method, const char *name,
                            const char *value, void (*callback)(void), void *userdata) {
    pj_buf params = {.max = PWFLAGS_MAX_OUTPUT};
    int r = pj_buf_puts(&params, "{\"");
    if (r == 0) r = pj_buf_puts(&params, name);
    if (r == 0) r = pj_buf_puts(&params, "\":");
    if (r == 0) r = pj_buf_string(&params, value);
    if (r == 0) r = pj_buf_puts(&params, "}");
    if (r == 0) r = call(c, kind, method, params.data, callback, userdata);
    pj_buf_free(&params);
    return r;
}

int pwflags_client_refresh(pwflags_client *client, pwflags_refresh_fn callback, void *userdata) {
    if (!client) return -EINVAL;
    return call(client, REQ_REFRESH, "refresh", "{}", (void (*)(void))callback, userdata);
}

int pwflags_client_log_impression(pwflags_client *client, const char *key, pwflags_impression_fn callback,
                                  void *userdata) {
    if (!client || !key) return -EINVAL;
    return call_with_string(client, REQ_IMPRESSION, "logImpression", "key", key, (void (*)(void))callback,
                            userdata);
}

int pwflags_client_set_user_id(pwflags_client *client, const char *user_id, pwflags_done_fn callback,
                               void *userdata) {
    if (!client || !user_id) return -EINVAL;
    return call_with_string(client, REQ_DONE, "setUserId", "userId", user_id, (void (*)(void))callback, userdata);
}

int pwflags_client_set_app_state(pwflags_client *client, pwflags_app_state state, pwflags_done_fn callback,
                                 void *userdata) {
    if (!client || (state != PWFLAGS_APP_FOREGROUND && state != PWFLAGS_APP_BACKGROUND)) return -EINVAL;
    const char *params = state == PWFLAGS_APP_FOREGROUND ? "{\"state\":\"foreground\"}" : "{\"state\":\"background\"}";
    return call(client, REQ_DONE, "setAppState", params, (void (*)(void))callback, userdata);
}

int pwflags_client_status(pwflags_client *client, pwflags_status_fn callback, void *userdata) {
    if (!client) return -EINVAL;
    return call(client, REQ_STATUS, "status", "{}", (void (*)(void))callback, userdata);
}
