// The shift file both clock shims read: 8 bytes, a signed 64-bit count that a test rewrites while the program
// runs (seconds for the wall clock, nanoseconds for the boot clock), mapped shared so that every read sees the
// test's latest write.
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

// The shift file named by the environment variable `variable`, mapped; NULL when it is unset or cannot be mapped
// (the shim then shifts nothing).
static volatile int64_t *mapShiftFile(const char *variable) {
    const char *path = getenv(variable);
    if (!path) return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    void *mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return mapped == MAP_FAILED ? NULL : mapped;
}
