/*
 * Preloaded into systemd in an arm64 container booted under qemu-user by systemd/test-nspawn.sh (never shipped):
 * what qemu refuses with EINVAL, where systemd would fall back on ENOSYS or the kernel would succeed, turned into
 * what a real arm64 machine does. The script's header lists each case; built there with
 * clang --target=aarch64-linux-gnu -nostdlib (it needs nothing from libc's headers, so it declares what it uses).
 */
#include <stdarg.h>
#define NR_CLONE 220 /* aarch64's clone */
#define CLONE_VM 0x00000100L
#define CLONE_NEWNS 0x00020000L
#define EINVAL 22
#define ENOSYS 38
#define POSIX_SPAWN_SETCGROUP 0x100
#define RTLD_NEXT ((void *)-1L)
extern void *dlsym(void *, const char *);
extern int unshare(int);
extern void _exit(int);
extern int posix_spawnattr_getflags(const void *, short *);
typedef long (*syscall_fn)(long, ...);
typedef int (*spawn_fn)(int *, const char *, const void *, const void *, char *const[], char *const[]);
static syscall_fn real_syscall;
static spawn_fn real_spawn;
__attribute__((constructor)) static void init(void) {
    real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
    real_spawn = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
}
long syscall(long number, ...) {
    va_list ap;
    long a[6];
    va_start(ap, number);
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == NR_CLONE && (a[0] & CLONE_NEWNS) && !(a[0] & CLONE_VM)) {
        long pid = real_syscall(number, a[0] & ~CLONE_NEWNS, a[1], a[2], a[3], a[4], a[5]);
        if (pid == 0 && unshare(CLONE_NEWNS) < 0) _exit(127); /* never on in the caller's namespace */
        return pid;
    }
    return real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
/* systemd 257 makes /run/systemd/incoming a slave in each service's mount namespace; under qemu it is no mount
   point there, and the kernel refuses (EINVAL): made one first, in that namespace only. */
typedef int (*mount_fn)(const char *, const char *, const char *, unsigned long, const void *);
extern int *__errno_location(void);
#define MS_BIND 4096UL
#define MS_SLAVE (1UL << 19)
static int is_incoming(const char *target) {
    const char *want = "/run/systemd/incoming";
    while (*want && *target == *want) target++, want++;
    return *want == 0 && *target == 0;
}
int mount(const char *source, const char *target, const char *type, unsigned long flags, const void *data) {
    static mount_fn real_mount;
    if (!real_mount) real_mount = (mount_fn)dlsym(RTLD_NEXT, "mount");
    int r = real_mount(source, target, type, flags, data);
    if (r < 0 && *__errno_location() == EINVAL && source == 0 && flags == MS_SLAVE && target && is_incoming(target) &&
        real_mount(target, target, 0, MS_BIND, 0) == 0)
        r = real_mount(source, target, type, flags, data);
    return r;
}
int posix_spawn(int *pid, const char *path, const void *actions, const void *attr, char *const argv[],
                char *const envp[]) {
    int r = real_spawn(pid, path, actions, attr, argv, envp);
    short flags = 0;
    if (r == EINVAL && attr && posix_spawnattr_getflags(attr, &flags) == 0 && (flags & POSIX_SPAWN_SETCGROUP))
        return ENOSYS;
    return r;
}
