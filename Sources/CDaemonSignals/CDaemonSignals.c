#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "CDaemonSignals.h"

static int signal_pipe[2] = {-1, -1};

static void on_signal(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    (void)!write(signal_pipe[1], &byte, 1);  /* non-blocking: a full pipe already holds a wake-up */
    errno = saved;
}

__attribute__((constructor)) static void userlistd_install_signal_pipe(void) {
    if (pipe(signal_pipe) != 0) return;
    fcntl(signal_pipe[0], F_SETFD, FD_CLOEXEC);
    fcntl(signal_pipe[1], F_SETFD, FD_CLOEXEC);
    fcntl(signal_pipe[1], F_SETFL, O_NONBLOCK);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, 0);
    sigaction(SIGINT, &action, 0);
    sigaction(SIGHUP, &action, 0);
    sigaction(SIGUSR2, &action, 0);  /* upgrade in place: re-exec, handing connections over */
}

int userlistd_signal_pipe(void) { return signal_pipe[0]; }
