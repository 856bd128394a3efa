#define _GNU_SOURCE
#include <pthread.h>
#include <sys/socket.h>
#include "CLinuxIO.h"

void ulio_set_thread_name(const char *name) {
    char truncated[16];
    int i = 0;
    for (; i < 15 && name[i] != 0; i++) truncated[i] = name[i];
    truncated[i] = 0;
    pthread_setname_np(pthread_self(), truncated);
}

int ulio_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
