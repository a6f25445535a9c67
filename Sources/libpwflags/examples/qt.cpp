// libpwflags in a Qt event loop (shown in docs/c-library.md; compiled and run by QtLibraryExampleTests). A
// QSocketNotifier watches the client's descriptor and runs pwflags_client_process(), so every callback runs on
// the GUI thread.
#include <QCoreApplication>
#include <QSocketNotifier>
#include <cstdio>
#include <pwflags.h>

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    pwflags_client *flags = nullptr;
    if (pwflags_client_new(&flags, argc > 1 ? argv[1] : nullptr) < 0) return 1;
    QSocketNotifier notifier(pwflags_client_get_fd(flags), QSocketNotifier::Read);
    QObject::connect(&notifier, &QSocketNotifier::activated, [flags] { pwflags_client_process(flags); });
    pwflags_client_add_listener(
        flags,
        [](pwflags_client *client, const char *const *, size_t, const char *const *, size_t, void *) {
            std::printf("new_checkout %d\n", pwflags_client_is_enabled(client, "new_checkout", 0));
        },
        nullptr);
    int status = app.exec();
    pwflags_client_free(flags);
    return status;
}
