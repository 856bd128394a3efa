#ifndef USERLISTD_CSYSTEMD_SHIM_H
#define USERLISTD_CSYSTEMD_SHIM_H
// Only the non-variadic entry points are usable from Swift: sd_notify, sd_listen_fds,
// sd_journal_sendv (struct iovec), sd_watchdog_enabled.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif
