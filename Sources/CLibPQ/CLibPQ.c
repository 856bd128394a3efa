#include "CLibPQ.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Each function of the header forwards to libpq's, found once (at the first connection) with
// dlsym. The lists: return type, name, parameters, arguments.
#define LIBPQ_RETURNING(X) \
    X(ConnStatusType, PQstatus, (const PGconn *conn), (conn)) \
    X(char *, PQerrorMessage, (const PGconn *conn), (conn)) \
    X(int, PQsocket, (const PGconn *conn), (conn)) \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg)) \
    X(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query)) \
    X(PGresult *, PQprepare, (PGconn *conn, const char *stmtName, const char *query, int nParams, \
      const Oid *paramTypes), (conn, stmtName, query, nParams, paramTypes)) \
    X(PGresult *, PQexecPrepared, (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, \
      const int *paramLengths, const int *paramFormats, int resultFormat), \
      (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat)) \
    X(PGresult *, PQgetResult, (PGconn *conn), (conn)) \
    X(int, PQconsumeInput, (PGconn *conn), (conn)) \
    X(PGnotify *, PQnotifies, (PGconn *conn), (conn)) \
    X(int, PQputCopyData, (PGconn *conn, const char *buffer, int nbytes), (conn, buffer, nbytes)) \
    X(int, PQputCopyEnd, (PGconn *conn, const char *errormsg), (conn, errormsg)) \
    X(int, PQgetCopyData, (PGconn *conn, char **buffer, int async), (conn, buffer, async)) \
    X(ExecStatusType, PQresultStatus, (const PGresult *res), (res)) \
    X(char *, PQresultErrorMessage, (const PGresult *res), (res)) \
    X(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode)) \
    X(int, PQntuples, (const PGresult *res), (res)) \
    X(int, PQnfields, (const PGresult *res), (res)) \
    X(char *, PQcmdTuples, (PGresult *res), (res)) \
    X(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    X(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num)) \
    X(char *, PQescapeLiteral, (PGconn *conn, const char *str, size_t len), (conn, str, len))

#define LIBPQ_VOID(X) \
    X(void, PQfinish, (PGconn *conn), (conn)) \
    X(void, PQclear, (PGresult *res), (res)) \
    X(void, PQfreemem, (void *ptr), (ptr))

#define LIBPQ_ALL(X) \
    X(PGconn *, PQconnectdbParams, (const char *const *keywords, const char *const *values, int expand_dbname), \
      (keywords, values, expand_dbname)) \
    LIBPQ_RETURNING(X) \
    LIBPQ_VOID(X)

#define DECLARE_POINTER(type, name, params, args) type (*name) params;
static struct {
    LIBPQ_ALL(DECLARE_POINTER)
} real;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[256];
static int loaded;

static void load(void) {
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *error = dlerror();
        snprintf(load_error, sizeof load_error, "libpq (libpq.so.5, Debian's libpq5) cannot be loaded: %s",
                 error ? error : "not found");
        return;
    }
#define FIND(type, name, params, args) \
    if (!(*(void **)&real.name = dlsym(library, #name))) { \
        snprintf(load_error, sizeof load_error, "libpq.so.5 has no %s", #name); \
        return; \
    }
    LIBPQ_ALL(FIND)
#undef FIND
    loaded = 1;
}

const char *ulpq_load_error(void) {
    pthread_once(&load_once, load);
    return loaded ? NULL : load_error;
}

PGconn *PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
    pthread_once(&load_once, load);
    return loaded ? real.PQconnectdbParams(keywords, values, expand_dbname) : NULL;
}

// Every other function takes a connection or a result, which only a loaded libpq can have made.
#define FORWARD(type, name, params, args) type name params { return real.name args; }
#define FORWARD_VOID(type, name, params, args) type name params { real.name args; }
LIBPQ_RETURNING(FORWARD)
LIBPQ_VOID(FORWARD_VOID)
