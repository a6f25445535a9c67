// The lean client of the request path's measure: one blocking write of a `get` line and one blocking read of the
// answer per call, nothing else, so that the same client times the daemon and the echo floors alike.
//
//   lean-get SOCKET CALLS     prints "p50 X us  p99 Y us" over CALLS calls, after 1,000 unmeasured ones
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e6 + (double)now.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    if (argc != 3 || atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: lean-get SOCKET CALLS\n");
        return 2;
    }
    int calls = atoi(argv[2]), warmup = 1000;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("lean-get: connect");
        return 1;
    }
    static const char line[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\",\"params\":{\"key\":\"new_checkout\"}}\n";
    static char answer[65536];
    double *times = malloc(sizeof(double) * (size_t)calls);
    if (times == NULL) return 1;
    for (int call = 0; call < calls + warmup; call++) {
        double start = microseconds();
        if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) return 1;
        size_t got = 0;
        do {
            ssize_t count = read(fd, answer + got, sizeof answer - got);
            if (count <= 0) {
                fprintf(stderr, "lean-get: the server closed the connection\n");
                return 1;
            }
            got += (size_t)count;
        } while (answer[got - 1] != '\n' && got < sizeof answer);
        if (call >= warmup) times[call - warmup] = microseconds() - start;
    }
    qsort(times, (size_t)calls, sizeof(double), ascending);
    printf("p50 %.2f us  p99 %.2f us\n", times[calls / 2], times[(size_t)calls * 99 / 100]);
    free(times);
    return 0;
}
