/*
 * The C library functions that Debian 13's static Swift 6.0.3 runtime for arm64 calls under names glibc first
 * exported in 2.38, written here so that pwflagsd links against Debian 12's glibc (2.36) and runs on Debian 12
 * and 13 alike. docs/decisions.md ("arm64: one binary for Debian 12 and 13") says why this is safe.
 *
 * The runtime was compiled against glibc 2.41's headers in C23 mode, where the headers send strtol, sscanf and
 * their kin to __isoc23_* versions whose only difference is that they also read binary numbers ("0b101", "%b").
 * strlcpy and strlcat are the BSD functions glibc 2.38 added. Each function below keeps glibc's C23 behaviour
 * exactly, binary numbers included, on top of the C99 functions glibc 2.36 has, so a caller cannot tell which
 * glibc it runs on.
 *
 * Hidden: the binary's own references bind to these at link time, and nothing else (libcurl, libsystemd) sees
 * them. Built by systemd/cross/make-sdk.sh into the arm64 Swift SDK, linked into every arm64 program, and tested
 * by systemd/cross/test-compat.sh against the host's glibc.
 */
/* strnlen is POSIX's. Nothing here may ask for _GNU_SOURCE or C23: glibc 2.38's headers would then send the C99
   calls below to the __isoc23_ functions this file stands in for. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPAT __attribute__((visibility("hidden")))

/*
 * Where strtol's C23 reading differs from C99's: with base 0 or 2, after white space and a sign, "0b" or "0B"
 * followed by a binary digit starts a binary number. Returns the first binary digit and whether a minus sign came
 * before it, or NULL when the C99 function reads the string exactly as C23 does.
 */
static const char *binary_digits(const char *text, int base, bool *negative) {
    if (base != 0 && base != 2) return NULL;
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    *negative = *p == '-';
    if (*p == '-' || *p == '+') p++;
    if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B') && (p[2] == '0' || p[2] == '1')) return p + 2;
    return NULL;
}

/*
 * Reads the binary number C23 reads at `text`, if there is one: false when the C99 function reads `text` as C23
 * does. Else sets *end past the digits, *negative, *magnitude as strtoull reads the digits, and *overflow when
 * they are out of its range.
 */
static bool read_binary(const char *text, char **end, int base, bool *negative, unsigned long long *magnitude,
                        bool *overflow) {
    const char *digits = binary_digits(text, base, negative);
    if (digits == NULL) return false;
    char *stop;
    int saved = errno;
    errno = 0;
    *magnitude = strtoull(digits, &stop, 2);
    *overflow = errno == ERANGE;
    errno = saved;
    if (end != NULL) *end = stop;
    return true;
}

/* A signed conversion: in range, or the limit of the sign with ERANGE, as C's strtol does. */
#define SIGNED_C23(name, type, min, max, c99)                                                      \
    COMPAT type name(const char *restrict text, char **restrict end, int base);                  \
    type name(const char *restrict text, char **restrict end, int base) {                        \
        bool negative, overflow;                                                                 \
        unsigned long long magnitude;                                                            \
        if (!read_binary(text, end, base, &negative, &magnitude, &overflow)) return c99(text, end, base); \
        unsigned long long limit = negative ? (unsigned long long)(max) + 1 : (unsigned long long)(max); \
        if (overflow || magnitude > limit) {                                                     \
            errno = ERANGE;                                                                      \
            return negative ? (min) : (max);                                                     \
        }                                                                                        \
        if (negative) return magnitude == limit ? (min) : -(type)magnitude;                      \
        return (type)magnitude;                                                                  \
    }

/* An unsigned conversion: a minus sign negates in the unsigned type; beyond the type, its maximum and ERANGE. */
#define UNSIGNED_C23(name, type, max, c99)                                                         \
    COMPAT type name(const char *restrict text, char **restrict end, int base);                  \
    type name(const char *restrict text, char **restrict end, int base) {                        \
        bool negative, overflow;                                                                 \
        unsigned long long magnitude;                                                            \
        if (!read_binary(text, end, base, &negative, &magnitude, &overflow)) return c99(text, end, base); \
        if (overflow || magnitude > (unsigned long long)(max)) {                                 \
            errno = ERANGE;                                                                      \
            return (max);                                                                        \
        }                                                                                        \
        return negative ? (type)(-(type)magnitude) : (type)magnitude;                            \
    }

SIGNED_C23(__isoc23_strtol, long, LONG_MIN, LONG_MAX, strtol)
SIGNED_C23(__isoc23_strtoll, long long, LLONG_MIN, LLONG_MAX, strtoll)
UNSIGNED_C23(__isoc23_strtoul, unsigned long, ULONG_MAX, strtoul)
UNSIGNED_C23(__isoc23_strtoull, unsigned long long, ULLONG_MAX, strtoull)

/*
 * sscanf: C23 adds binary to %i and a %b conversion. The runtime's formats use neither (test-compat.sh reads
 * every format in the static libraries to hold that), so those formats go to C99's vsscanf as they are; a format
 * that has either is refused loudly rather than read the C99 way.
 */
static bool format_reads_binary(const char *format) {
    for (const char *p = format; *p != '\0'; p++) {
        if (*p != '%') continue;
        p++;
        if (*p == '%') continue;
        /* Flags, field width, the assignment-suppressing star, length modifiers and a scan set's start. */
        while (*p != '\0' && strchr("*0123456789hljztLqm'", *p) != NULL) p++;
        if (*p == 'i' || *p == 'b') return true;
        if (*p == '[') {
            p++;
            if (*p == '^') p++;
            if (*p == ']') p++;
            while (*p != '\0' && *p != ']') p++;
        }
        if (*p == '\0') break;
    }
    return false;
}

COMPAT int __isoc23_sscanf(const char *restrict text, const char *restrict format, ...);
int __isoc23_sscanf(const char *restrict text, const char *restrict format, ...) {
    if (format_reads_binary(format)) {
        fprintf(stderr, "glibc238-compat: sscanf format \"%s\" reads binary numbers, which glibc 2.36 cannot\n", format);
        abort();
    }
    va_list arguments;
    va_start(arguments, format);
    int assigned = vsscanf(text, format, arguments);
    va_end(arguments);
    return assigned;
}

/* The BSD functions: copy or append at most size - 1 bytes, always terminate (size > 0), return the length tried. */
COMPAT size_t strlcpy(char *restrict destination, const char *restrict source, size_t size);
size_t strlcpy(char *restrict destination, const char *restrict source, size_t size) {
    size_t length = strlen(source);
    if (size > 0) {
        size_t copied = length < size - 1 ? length : size - 1;
        memcpy(destination, source, copied);
        destination[copied] = '\0';
    }
    return length;
}

COMPAT size_t strlcat(char *restrict destination, const char *restrict source, size_t size);
size_t strlcat(char *restrict destination, const char *restrict source, size_t size) {
    size_t used = strnlen(destination, size);
    if (used == size) return size + strlen(source);
    return used + strlcpy(destination + used, source, size - used);
}
