/* How much a C program's RSS grows when it loads libpwflags and opens a client that holds the flags:
 *   crss LIBRARY SOCKET     prints "rss_kib X". Not linked with the library: it loads it with dlopen, so the
 * figure counts the library's own pages as a linked program pays them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pwflags.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    if (f) fclose(f);
    return kib;
}

static int measure(const char *library, const char *socket_path) {
    long before = rss_kib();
    void *handle = dlopen(library, RTLD_NOW);
    if (!handle) return 1;
    int (*new_client)(pwflags_client **, const char *) = (int (*)(pwflags_client **, const char *))dlsym(handle, "pwflags_client_new");
    int (*wait)(pwflags_client *, uint64_t) = (int (*)(pwflags_client *, uint64_t))dlsym(handle, "pwflags_client_wait_for_snapshot");
    pwflags_client *c;
    if (!new_client || !wait || new_client(&c, socket_path) < 0 || wait(c, 10000000) != 1) return 1;
    printf("rss_kib %ld\n", rss_kib() - before);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: crss LIBRARY SOCKET\n");
        return 2;
    }
    return measure(argv[1], argv[2]);
}
