#ifndef PWFLAGSD_CLINUX_SHIM_H
#define PWFLAGSD_CLINUX_SHIM_H
// Linux interfaces the Glibc module leaves out: epoll, eventfd, inotify, timerfd.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#endif
