#define _GNU_SOURCE
#include <sys/socket.h>
#include "CLinuxIO.h"

int ulio_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
