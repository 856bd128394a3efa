#ifndef USERLISTD_CLIBPQ_SHIM_H
#define USERLISTD_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
