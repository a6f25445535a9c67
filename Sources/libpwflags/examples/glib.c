/* libpwflags in a GLib main loop: g_unix_fd_add watches the client's descriptor and runs
 * pwflags_client_process(), so every callback runs on the main loop's thread.
 *   glib SOCKET     prints new_checkout's state at the first update (the first snapshot counts) and quits. */
#include <glib-unix.h>
#include <glib.h>
#include <pwflags.h>
#include <stdio.h>

static gboolean on_ready(gint fd, GIOCondition condition, gpointer data) {
    (void)fd, (void)condition;
    pwflags_client_process(data);
    return G_SOURCE_CONTINUE;
}

static void show(pwflags_client *flags) {
    printf("glib new_checkout %s\n", pwflags_client_is_enabled(flags, "new_checkout", 0) ? "enabled" : "disabled");
    fflush(stdout);
}

static void updated(pwflags_client *flags, const char *const *changed, size_t n_changed,
                    const char *const *removed, size_t n_removed, void *loop) {
    (void)changed, (void)n_changed, (void)removed, (void)n_removed;
    show(flags);
    if (pwflags_client_has_snapshot(flags) && g_main_loop_is_running(loop)) g_main_loop_quit(loop);
}

int main(int argc, char **argv) {
    pwflags_client *flags;
    if (argc < 2 || pwflags_client_new(&flags, argv[1]) < 0) return 1;
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    pwflags_client_add_listener(flags, updated, loop);
    guint source = g_unix_fd_add(pwflags_client_get_fd(flags), G_IO_IN, on_ready, flags);
    g_main_loop_run(loop);
    g_source_remove(source);
    g_main_loop_unref(loop);
    pwflags_client_free(flags);
    return 0;
}
