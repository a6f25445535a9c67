/*
 * Compares systemd/cross/glibc238-compat.c with glibc's own C23 functions: built and run by
 * systemd/cross/test-compat.sh in the Debian 13 build root (glibc 2.41), with the compat functions renamed
 * compat_* so that both are linked side by side. Prints one line per difference and exits 1 if there is any.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long __isoc23_strtol(const char *, char **, int);
long long __isoc23_strtoll(const char *, char **, int);
unsigned long __isoc23_strtoul(const char *, char **, int);
unsigned long long __isoc23_strtoull(const char *, char **, int);
int __isoc23_sscanf(const char *, const char *, ...);
size_t strlcpy(char *, const char *, size_t);
size_t strlcat(char *, const char *, size_t);

long compat_strtol(const char *, char **, int);
long long compat_strtoll(const char *, char **, int);
unsigned long compat_strtoul(const char *, char **, int);
unsigned long long compat_strtoull(const char *, char **, int);
int compat_sscanf(const char *, const char *, ...);
size_t compat_strlcpy(char *, const char *, size_t);
size_t compat_strlcat(char *, const char *, size_t);

static int differences;
static int compared;

#define COMPARE(function, type, format, text, base)                                                   \
    do {                                                                                              \
        char *glibc_end, *compat_end;                                                                 \
        errno = 0;                                                                                    \
        type glibc = __isoc23_##function(text, &glibc_end, base);                                     \
        int glibc_errno = errno;                                                                      \
        errno = 0;                                                                                    \
        type compat = compat_##function(text, &compat_end, base);                                     \
        int compat_errno = errno;                                                                     \
        compared++;                                                                                   \
        if (glibc != compat || glibc_errno != compat_errno || glibc_end != compat_end) {              \
            differences++;                                                                            \
            printf(#function "(\"%s\", %d): glibc " format " errno %d end +%td, compat " format       \
                   " errno %d end +%td\n", text, base, glibc, glibc_errno, glibc_end - text, compat,  \
                   compat_errno, compat_end - text);                                                  \
        }                                                                                             \
    } while (0)

int main(void) {
    static const char *const numbers[] = {
        "0", "1", "-1", "+1", "  42", "\t-42x", "0b", "0b2", "0B1", "0b101", "-0b101", "+0b101", "  -0B11z",
        "0b1111111111111111111111111111111111111111111111111111111111111111",
        "0b11111111111111111111111111111111111111111111111111111111111111111",
        "0b111111111111111111111111111111111111111111111111111111111111111",
        "-0b1000000000000000000000000000000000000000000000000000000000000000",
        "-0b1000000000000000000000000000000000000000000000000000000000000001",
        "-0b111111111111111111111111111111111111111111111111111111111111111",
        "0x1f", "0X", "017", "09", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616", "-18446744073709551615",
        "", "   ", "-", "+", "b1", "0b01", "00b1", "- 0b1", "0b-1", "101", "zz",
    };
    static const int bases[] = {0, 2, 8, 10, 16, 36};
    for (size_t n = 0; n < sizeof numbers / sizeof *numbers; n++) {
        for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
            COMPARE(strtol, long, "%ld", numbers[n], bases[b]);
            COMPARE(strtoll, long long, "%lld", numbers[n], bases[b]);
            COMPARE(strtoul, unsigned long, "%lu", numbers[n], bases[b]);
            COMPARE(strtoull, unsigned long long, "%llu", numbers[n], bases[b]);
        }
    }

    /* The runtime's own sscanf formats (test-compat.sh checks that these are all it has). */
    {
        void *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        int glibc = __isoc23_sscanf("7f00-7fff", "%p-%p", &a, &b);
        int compat = compat_sscanf("7f00-7fff", "%p-%p", &c, &d);
        compared++;
        if (glibc != compat || a != c || b != d) differences++, printf("sscanf %%p-%%p differs\n");
    }
    {
        const char *uuid = "0123abcd-4567-89ef-0123-456789abcdef";
        const char *format = "%2hhx%2hhx%2hhx%2hhx-%2hhx%2hhx-%2hhx%2hhx-%2hhx%2hhx-%2hhx%2hhx%2hhx%2hhx%2hhx%2hhx%n";
        unsigned char g[16], k[16];
        int gn = -1, kn = -1;
        int glibc = __isoc23_sscanf(uuid, format, &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7], &g[8],
                                    &g[9], &g[10], &g[11], &g[12], &g[13], &g[14], &g[15], &gn);
        int compat = compat_sscanf(uuid, format, &k[0], &k[1], &k[2], &k[3], &k[4], &k[5], &k[6], &k[7], &k[8],
                                   &k[9], &k[10], &k[11], &k[12], &k[13], &k[14], &k[15], &kn);
        compared++;
        if (glibc != compat || gn != kn || memcmp(g, k, sizeof g) != 0) differences++, printf("sscanf uuid differs\n");
    }
    {
        char g = 0, k = 0;
        int glibc = __isoc23_sscanf("1234 (pwflagsd) S 1", "%*d %*s %c", &g);
        int compat = compat_sscanf("1234 (pwflagsd) S 1", "%*d %*s %c", &k);
        compared++;
        if (glibc != compat || g != k) differences++, printf("sscanf stat differs\n");
    }

    static const char *const sources[] = {"", "a", "abc", "abcdefgh", "abcdefghijklmnop"};
    static const char *const starts[] = {"", "x", "xyz", "xyzxyzxyz"};
    for (size_t s = 0; s < sizeof sources / sizeof *sources; s++) {
        for (size_t size = 0; size <= 12; size++) {
            char g[16], k[16];
            memset(g, '#', sizeof g);
            memset(k, '#', sizeof k);
            size_t glibc = strlcpy(g, sources[s], size), compat = compat_strlcpy(k, sources[s], size);
            compared++;
            if (glibc != compat || memcmp(g, k, sizeof g) != 0)
                differences++, printf("strlcpy(\"%s\", %zu) differs\n", sources[s], size);
            for (size_t t = 0; t < sizeof starts / sizeof *starts; t++) {
                memset(g, '#', sizeof g);
                memset(k, '#', sizeof k);
                /* A destination that is not terminated within size is part of the contract too. */
                memcpy(g, starts[t], strlen(starts[t]) + 1);
                memcpy(k, starts[t], strlen(starts[t]) + 1);
                glibc = strlcat(g, sources[s], size);
                compat = compat_strlcat(k, sources[s], size);
                compared++;
                if (glibc != compat || memcmp(g, k, sizeof g) != 0)
                    differences++, printf("strlcat(\"%s\", \"%s\", %zu) differs\n", starts[t], sources[s], size);
            }
        }
    }
    printf("%d passed, %d failed\n", compared - differences, differences);
    return differences == 0 ? 0 : 1;
}
