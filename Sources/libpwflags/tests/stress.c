/* Many threads reading while changes pour in: run under ThreadSanitizer or helgrind by the tests.
 *   stress SOCKET UPDATES THREADS
 * The library runs its own thread; THREADS readers call every read in a loop. Exits 0 once the listener heard
 * UPDATES changes, printing "heard N reads M"; 1 after 120 s without them. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <pwflags.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pwflags_client *client;
static atomic_bool stop;
static atomic_long reads, heard;

static void *reader(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        pwflags_flag *f = NULL;
        if (pwflags_client_get(client, "stress", &f) > 0) {
            const char *value = pwflags_flag_get_string(f, "value", "");
            if (strlen(value) > 64) abort();
            (void)pwflags_flag_get_number(f, "count", 0);
            (void)pwflags_flag_get_json_object(f, "nested");
        }
        pwflags_flag_unref(f);
        (void)pwflags_client_is_enabled(client, "stress", 0);
        atomic_fetch_add(&reads, 1);
    }
    return NULL;
}

static void updated(pwflags_client *c, const char *const *changed, size_t n_changed, const char *const *removed,
                    size_t n_removed, void *userdata) {
    (void)c, (void)changed, (void)removed, (void)userdata;
    if (n_changed + n_removed) atomic_fetch_add(&heard, 1);
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    long want = atol(argv[2]);
    int threads = atoi(argv[3]);
    if (pwflags_client_new(&client, argv[1]) < 0 || pwflags_client_add_listener(client, updated, NULL) < 0 ||
        pwflags_client_start_thread(client) < 0)
        return 1;
    pthread_t ids[64];
    if (threads > 64) threads = 64;
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, reader, NULL);
    printf("ready\n");
    fflush(stdout);
    struct timespec tick = {0, 10 * 1000000};
    for (int i = 0; i < 12000 && atomic_load(&heard) < want; i++) nanosleep(&tick, NULL);
    atomic_store(&stop, true);
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    pwflags_client_free(client);
    printf("heard %ld reads %ld\n", atomic_load(&heard), atomic_load(&reads));
    return atomic_load(&heard) >= want ? 0 : 1;
}
