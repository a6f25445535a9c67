/* The SDK page's checkout example in C: checkout [--socket PATH] [--follow]
 *
 * Reads new_checkout (enabled, typed properties), logs its impression in both branches (R17), reads search_v2
 * with a default, refreshes and prints the R11 status, and with --follow renders again after each change. */
#include <errno.h>
#include <poll.h>
#include <pwflags.h>
#include <stdio.h>
#include <string.h>

static void render(pwflags_client *flags) {
    pwflags_flag *checkout = NULL;
    if (pwflags_client_get(flags, "new_checkout", &checkout) > 0 && pwflags_flag_is_enabled(checkout)) {
        printf("new checkout: button %s, at most %d items\n",
               pwflags_flag_get_string(checkout, "button_color", "blue"),
               (int)pwflags_flag_get_number(checkout, "max_items", 3));
        const char *layout = pwflags_flag_get_json_object(checkout, "layout");
        const char *steps = pwflags_flag_get_json_array(checkout, "steps");
        printf("  express %s, layout %s, steps %s, rule %s\n",
               pwflags_flag_get_bool(checkout, "express", 0) ? "yes" : "no", layout ? layout : "{}",
               steps ? steps : "[]", pwflags_flag_get_rule_id(checkout));
    } else {
        printf("old checkout\n");
    }
    pwflags_flag_unref(checkout);
    /* The comparison group counts too: log the impression in both branches (R17). */
    pwflags_client_log_impression(flags, "new_checkout", NULL, NULL);
    printf("search: %s\n", pwflags_client_is_enabled(flags, "search_v2", 0) ? "v2" : "v1");
    fflush(stdout);
}

static void updated(pwflags_client *flags, const char *const *changed, size_t n_changed,
                    const char *const *removed, size_t n_removed, void *userdata) {
    (void)changed, (void)removed, (void)userdata;
    printf("flags updated (%zu changed, %zu removed)\n", n_changed, n_removed);
    render(flags);
}

static void refreshed(pwflags_client *flags, int error, int status, void *userdata) {
    (void)flags;
    *(int *)userdata = 1;
    if (error < 0) printf("refresh failed: %s (status %d)\n", strerror(-error), status);
    else printf("refreshed\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *socket_path = NULL; /* NULL: $PWFLAGS_SOCKET, else /run/pwflagsd/pwflagsd.sock */
    int follow = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) socket_path = argv[++i];
        else if (strcmp(argv[i], "--follow") == 0) follow = 1;
        else {
            fprintf(stderr, "usage: checkout [--socket PATH] [--follow]\n");
            return 2;
        }
    }
    pwflags_client *flags;
    int r = pwflags_client_new(&flags, socket_path);
    if (r < 0) {
        fprintf(stderr, "pwflags_client_new: %s\n", strerror(-r));
        return 1;
    }
    /* Optional: the reads give their defaults until the first snapshot. */
    if (pwflags_client_wait_for_snapshot(flags, 5 * 1000000) <= 0) fprintf(stderr, "no flags yet: defaults\n");
    render(flags);

    int done = 0;
    pwflags_client_refresh(flags, refreshed, &done);
    if (follow) pwflags_client_add_listener(flags, updated, NULL);
    /* The program's own loop: poll the client's descriptor, then let it process what arrived. */
    struct pollfd p = {.fd = pwflags_client_get_fd(flags), .events = POLLIN};
    while (follow || !done) {
        if (poll(&p, 1, -1) < 0 && errno != EINTR) break;
        if (pwflags_client_process(flags) < 0) break;
    }
    pwflags_client_free(flags);
    return 0;
}
