#ifndef USERLISTD_CLIBPQ_H
#define USERLISTD_CLIBPQ_H

#include <stddef.h>

// The part of libpq's API (libpq-fe.h, PostgreSQL 15) the PostgreSQL store uses, served by
// libpq loaded with dlopen on the first connection rather than linked.
//
// Why: linking libpq makes every start of the daemon map and relocate about twenty more shared
// libraries (OpenSSL, Kerberos, LDAP, GnuTLS...), a few milliseconds of each start and of each
// restart's stall, for a store most installations never configure (SQLite is the default).
// The declarations match libpq's ABI: the types are opaque, the enum values and the
// notification's layout are those of libpq-fe.h.

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;

typedef enum { CONNECTION_OK, CONNECTION_BAD } ConnStatusType;

typedef enum {
    PGRES_EMPTY_QUERY = 0,
    PGRES_COMMAND_OK,
    PGRES_TUPLES_OK,
    PGRES_COPY_OUT,
    PGRES_COPY_IN,
    PGRES_BAD_RESPONSE,
    PGRES_NONFATAL_ERROR,
    PGRES_FATAL_ERROR,
} ExecStatusType;

typedef struct pgNotify {
    char *relname;
    int be_pid;
    char *extra;
    struct pgNotify *next;  // libpq's own
} PGnotify;

typedef void (*PQnoticeProcessor)(void *arg, const char *message);

/// Why libpq cannot be loaded, or NULL when it is (it tries to load it first).
const char *ulpq_load_error(void);

/// Returns NULL when libpq cannot be loaded (`ulpq_load_error` says why).
PGconn *PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname);
void PQfinish(PGconn *conn);
ConnStatusType PQstatus(const PGconn *conn);
char *PQerrorMessage(const PGconn *conn);
int PQsocket(const PGconn *conn);
PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg);
PGresult *PQexec(PGconn *conn, const char *query);
PGresult *PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes);
PGresult *PQexecPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                         const int *paramLengths, const int *paramFormats, int resultFormat);
PGresult *PQgetResult(PGconn *conn);
int PQconsumeInput(PGconn *conn);
PGnotify *PQnotifies(PGconn *conn);
int PQputCopyData(PGconn *conn, const char *buffer, int nbytes);
int PQputCopyEnd(PGconn *conn, const char *errormsg);
int PQgetCopyData(PGconn *conn, char **buffer, int async);
ExecStatusType PQresultStatus(const PGresult *res);
char *PQresultErrorMessage(const PGresult *res);
char *PQresultErrorField(const PGresult *res, int fieldcode);
int PQntuples(const PGresult *res);
int PQnfields(const PGresult *res);
char *PQcmdTuples(PGresult *res);
char *PQgetvalue(const PGresult *res, int tup_num, int field_num);
int PQgetisnull(const PGresult *res, int tup_num, int field_num);
void PQclear(PGresult *res);
void PQfreemem(void *ptr);
char *PQescapeLiteral(PGconn *conn, const char *str, size_t len);

#endif
