#ifndef USERLISTD_CLINUXIO_H
#define USERLISTD_CLINUXIO_H
// Linux calls that Glibc's Swift module does not export (epoll, eventfd, SO_PEERCRED), with small
// inline wrappers where a C union or macro does not import well into Swift.
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdint.h>

/// Adds, modifies or removes `fd` in an epoll set; `token` comes back with each event for `fd` (the
/// daemon's event loop packs the descriptor and a registration generation into it, so a stale
/// event never reaches a newer connection that reuses the number).
static inline int ulio_epoll_ctl_token(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &ev);
}

/// Gives the C heap's free memory back to the system (`malloc_trim`): after a one-off burst
/// (a million sample users generated and imported at start), glibc would otherwise keep it.
static inline int ulio_release_free_memory(void) { return malloc_trim(0); }

/// Waits and writes up to `max` (token, events) pairs into the arrays.
static inline int ulio_epoll_wait_tokens(int epfd, uint64_t *tokens, uint32_t *events, int max, int timeout) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout);
    for (int i = 0; i < n; i++) { tokens[i] = evs[i].data.u64; events[i] = evs[i].events; }
    return n;
}

/// `ulio_epoll_ctl_token` with the descriptor itself as the token (the bench's simple sets).
static inline int ulio_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
    return ulio_epoll_ctl_token(epfd, op, fd, events, (uint64_t)(uint32_t)fd);
}

/// Waits and writes up to `max` (fd, events) pairs into the arrays (sets made by `ulio_epoll_ctl`).
static inline int ulio_epoll_wait(int epfd, int *fds, uint32_t *events, int max, int timeout) {
    uint64_t tokens[256];
    int n = ulio_epoll_wait_tokens(epfd, tokens, events, max, timeout);
    for (int i = 0; i < n; i++) fds[i] = (int)(uint32_t)tokens[i];
    return n;
}

static inline int ulio_peer_credentials(int fd, uint32_t *pid, uint32_t *uid, uint32_t *gid) {
    // struct ucred needs _GNU_SOURCE, which clashes with Swift's Glibc module: same layout here.
    struct { int32_t pid; uint32_t uid; uint32_t gid; } cred;
    socklen_t len = sizeof(cred);
    int rc = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
    if (rc == 0) { *pid = (uint32_t)cred.pid; *uid = cred.uid; *gid = cred.gid; }
    return rc;
}

/// accept(2) with the new descriptor non-blocking and close-on-exec (accept4 needs _GNU_SOURCE).
int ulio_accept_nonblocking(int fd);

/// Names the calling thread for ps, top and perf (the first 15 bytes of `name`).
void ulio_set_thread_name(const char *name);

static const uint32_t ULIO_EPOLLIN = EPOLLIN;
static const uint32_t ULIO_EPOLLOUT = EPOLLOUT;
static const uint32_t ULIO_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t ULIO_EPOLLHUP = EPOLLHUP;
static const uint32_t ULIO_EPOLLERR = EPOLLERR;
static const int ULIO_EFD_NONBLOCK = EFD_NONBLOCK;
static const int ULIO_EFD_CLOEXEC = EFD_CLOEXEC;
static const int ULIO_EPOLL_CLOEXEC = EPOLL_CLOEXEC;
#endif
