/* The smallest program against the installed packages, as the booted Debian test compiles it:
 *   cc app.c $(pkg-config --cflags --libs pwflags) -o app && ./app dark_mode
 * Reads KEY from the daemon on the default socket, prints it, then waits (at most 60 s) until a change of KEY
 * is heard and prints it again; exit 0 then, 1 without flags or without a change. */
#include <pwflags.h>
#include <stdio.h>
#include <string.h>

static int changed;

static void updated(pwflags_client *client, const char *const *keys, size_t n, const char *const *removed,
                    size_t n_removed, void *key) {
    (void)removed, (void)n_removed;
    for (size_t i = 0; i < n; i++)
        if (strcmp(keys[i], key) == 0) changed = 1;
    if (changed) printf("changed %s %s\n", (const char *)key, pwflags_client_is_enabled(client, key, 0) ? "enabled" : "disabled");
}

int main(int argc, char **argv) {
    pwflags_client *client;
    if (argc != 2 || pwflags_client_new(&client, NULL) < 0) return 2;
    if (pwflags_client_wait_for_snapshot(client, 10 * 1000000) != 1) return 1;
    printf("read %s %s\n", argv[1], pwflags_client_is_enabled(client, argv[1], 0) ? "enabled" : "disabled");
    fflush(stdout);
    pwflags_client_add_listener(client, updated, argv[1]);
    for (int i = 0; i < 600 && !changed; i++)
        if (pwflags_client_wait(client, 100000) >= 0) pwflags_client_process(client);
    pwflags_client_free(client);
    return changed ? 0 : 1;
}
