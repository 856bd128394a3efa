#ifndef USERLISTD_CSQLITE_SHIM_H
#define USERLISTD_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call. Turns off SQLite's memory statistics:
/// with them on, every allocation takes a global mutex (about 5% of a bulk import). Must run
/// before SQLite initializes; later it returns SQLITE_MISUSE and changes nothing.
static inline int userlistd_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// sqlite3_db_config is variadic too. Switches `db`'s triggers off or on (statements prepared
/// before are re-prepared at their next step); returns SQLite's result code.
static inline int userlistd_sqlite_enable_triggers(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, on, (int *)0);
}
#endif
