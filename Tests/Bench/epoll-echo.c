// The epoll floor of the request path's measure: one thread, one epoll set, level-triggered, non-blocking
// sockets, and no work per line but writing it back: the least a single-loop server can cost a request.
//
//   epoll-echo SOCKET        serves until killed
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: epoll-echo SOCKET\n");
        return 2;
    }
    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    unlink(argv[1]);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 64) != 0) {
        perror("epoll-echo: listen");
        return 1;
    }
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = listener};
    if (epoll < 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &interest) != 0) {
        perror("epoll-echo: epoll");
        return 1;
    }
    static struct epoll_event events[64];
    static char buffer[65536];
    for (;;) {
        int count = epoll_wait(epoll, events, 64, -1);
        for (int index = 0; index < count; index++) {
            int fd = events[index].data.fd;
            if (fd == listener) {
                int client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                struct epoll_event added = {.events = EPOLLIN, .data.fd = client};
                if (client >= 0 && epoll_ctl(epoll, EPOLL_CTL_ADD, client, &added) != 0) close(client);
                continue;
            }
            ssize_t read_count = read(fd, buffer, sizeof buffer);
            if (read_count <= 0) {
                close(fd);
                continue;
            }
            // A line of the measure fits the socket's buffer: the send never blocks.
            if (send(fd, buffer, (size_t)read_count, MSG_NOSIGNAL) < 0) close(fd);
        }
    }
}
