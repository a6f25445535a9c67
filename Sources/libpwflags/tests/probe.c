/* A test driver for libpwflags: one command a line on stdin, one answer a line on stdout (listener calls print
 * their own "update" lines). Run by Tests/IntegrationTests/CLibrary*Tests.
 *   probe SOCKET [--thread]
 * Commands: get KEY | enabled KEY DEFAULT | string KEY NAME DEFAULT | number KEY NAME DEFAULT | bool KEY NAME
 * DEFAULT | object KEY NAME | array KEY NAME | listen | unlisten | refresh | impression KEY | user ID |
 * state foreground|background | status | snapshot MILLISECONDS | process | connected | quit */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <pwflags.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t output = PTHREAD_MUTEX_INITIALIZER;
static int listener = 0;

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void say(const char *format, ...) {
    pthread_mutex_lock(&output);
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&output);
}

static void join(char *out, size_t size, const char *const *keys, size_t n) {
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i) strncat(out, ",", size - strlen(out) - 1);
        strncat(out, keys[i], size - strlen(out) - 1);
    }
}

static void updated(pwflags_client *c, const char *const *changed, size_t n_changed, const char *const *removed,
                    size_t n_removed, void *userdata) {
    (void)c, (void)userdata;
    char a[4096], b[4096];
    join(a, sizeof a, changed, n_changed);
    join(b, sizeof b, removed, n_removed);
    say("update changed=%s removed=%s", a, b);
}

static void refreshed(pwflags_client *c, int error, int status, void *userdata) {
    (void)c, (void)userdata;
    say("refresh error=%d status=%d", error, status);
}

static void impression(pwflags_client *c, int error, const char *outcome, int status, void *userdata) {
    (void)c, (void)userdata;
    say("impression error=%d outcome=%s status=%d", error, outcome ? outcome : "-", status);
}

static void done(pwflags_client *c, int error, void *userdata) {
    (void)c;
    say("%s error=%d", (const char *)userdata, error);
}

static void status(pwflags_client *c, int error, const char *json, void *userdata) {
    (void)c, (void)userdata;
    say("status error=%d %s", error, json ? json : "-");
}

static void command(pwflags_client *c, char *line) {
    char *words[4] = {0};
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \n", &save); w && n < 4; w = strtok_r(NULL, " \n", &save))
        words[n++] = w;
    if (!n) return;
    const char *what = words[0];
    pwflags_flag *f = NULL;
    if (strcmp(what, "get") == 0 && n >= 2) {
        int r = pwflags_client_get(c, words[1], &f);
        if (r > 0)
            say("flag %s %s rule=%s source=%s", pwflags_flag_get_key(f), pwflags_flag_is_enabled(f) ? "enabled" : "disabled",
                pwflags_flag_get_rule_id(f), pwflags_flag_get_source(f) ? pwflags_flag_get_source(f) : "-");
        else say("flag %s absent r=%d", words[1], r);
    } else if (strcmp(what, "enabled") == 0 && n >= 3) {
        say("enabled %d", pwflags_client_is_enabled(c, words[1], atoi(words[2])));
    } else if (strcmp(what, "string") == 0 && n >= 4) {
        pwflags_client_get(c, words[1], &f);
        say("string %s", pwflags_flag_get_string(f, words[2], words[3]));
    } else if (strcmp(what, "number") == 0 && n >= 4) {
        pwflags_client_get(c, words[1], &f);
        say("number %g", pwflags_flag_get_number(f, words[2], atof(words[3])));
    } else if (strcmp(what, "bool") == 0 && n >= 4) {
        pwflags_client_get(c, words[1], &f);
        say("bool %d", pwflags_flag_get_bool(f, words[2], atoi(words[3])));
    } else if ((strcmp(what, "object") == 0 || strcmp(what, "array") == 0) && n >= 3) {
        pwflags_client_get(c, words[1], &f);
        const char *text = what[0] == 'o' ? pwflags_flag_get_json_object(f, words[2]) : pwflags_flag_get_json_array(f, words[2]);
        say("%s %s", what, text ? text : "(null)");
    } else if (strcmp(what, "listen") == 0) {
        listener = pwflags_client_add_listener(c, updated, NULL);
        say("listening %d", listener > 0);
    } else if (strcmp(what, "unlisten") == 0) {
        say("unlistened %d", pwflags_client_remove_listener(c, listener));
    } else if (strcmp(what, "refresh") == 0) {
        int r = pwflags_client_refresh(c, refreshed, NULL);
        if (r < 0) say("refresh error=%d status=0", r);
    } else if (strcmp(what, "impression") == 0 && n >= 2) {
        int r = pwflags_client_log_impression(c, words[1], impression, NULL);
        if (r < 0) say("impression error=%d outcome=- status=0", r);
    } else if (strcmp(what, "user") == 0) {
        int r = pwflags_client_set_user_id(c, n >= 2 ? words[1] : "", done, "user");
        if (r < 0) say("user error=%d", r);
    } else if (strcmp(what, "state") == 0 && n >= 2) {
        int r = pwflags_client_set_app_state(c, strcmp(words[1], "background") == 0 ? PWFLAGS_APP_BACKGROUND : PWFLAGS_APP_FOREGROUND, done, "state");
        if (r < 0) say("state error=%d", r);
    } else if (strcmp(what, "status") == 0) {
        int r = pwflags_client_status(c, status, NULL);
        if (r < 0) say("status error=%d -", r);
    } else if (strcmp(what, "snapshot") == 0 && n >= 2) {
        say("snapshot %d", pwflags_client_wait_for_snapshot(c, (uint64_t)atol(words[1]) * 1000));
    } else if (strcmp(what, "process") == 0) {
        say("processed %d", pwflags_client_process(c) >= 0);
    } else if (strcmp(what, "connected") == 0) {
        say("connected %d", pwflags_client_is_connected(c));
    } else {
        say("unknown %s", what);
    }
    pwflags_flag_unref(f);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int threaded = argc > 2 && strcmp(argv[2], "--thread") == 0;
    pwflags_client *c;
    int r = pwflags_client_new(&c, argv[1]);
    if (r < 0) {
        say("new error=%d", r);
        return 1;
    }
    if (threaded && (r = pwflags_client_start_thread(c)) < 0) {
        say("thread error=%d", r);
        return 1;
    }
    say("ready");
    char line[4096];
    size_t have = 0;
    struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = pwflags_client_get_fd(c), .events = POLLIN}};
    for (;;) {
        if (poll(fds, threaded ? 1 : 2, -1) < 0 && errno != EINTR) break;
        if (!threaded && (fds[1].revents & POLLIN) && pwflags_client_process(c) < 0) break;
        if (!(fds[0].revents & (POLLIN | POLLHUP))) continue;
        ssize_t n = read(0, line + have, sizeof line - 1 - have);
        if (n <= 0) break;
        have += (size_t)n;
        char *end;
        int quit = 0;
        while ((end = memchr(line, '\n', have))) {
            *end = '\0';
            if (strcmp(line, "quit") == 0) quit = 1;
            else command(c, line);
            size_t used = (size_t)(end - line) + 1;
            memmove(line, end + 1, have - used);
            have -= used;
        }
        if (quit) break;
        if (have == sizeof line - 1) have = 0;
    }
    pwflags_client_free(c);
    say("bye");
    return 0;
}
