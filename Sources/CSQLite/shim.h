#ifndef USERLISTD_CSQLITE_SHIM_H
#define USERLISTD_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
