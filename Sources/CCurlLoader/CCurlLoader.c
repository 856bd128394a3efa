#include "CCurlLoader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The few values of curl.h used here; they are libcurl's stable ABI.
enum {
    CURLOPT_WRITEDATA = 10001,
    CURLOPT_URL = 10002,
    CURLOPT_ERRORBUFFER = 10010,
    CURLOPT_POSTFIELDS = 10015,
    CURLOPT_HTTPHEADER = 10023,
    CURLOPT_CUSTOMREQUEST = 10036,
    CURLOPT_WRITEFUNCTION = 20011,
    CURLOPT_POSTFIELDSIZE = 60,
    CURLOPT_HTTPGET = 80,
    CURLOPT_NOSIGNAL = 99,
    CURLOPT_TIMEOUT_MS = 155,
    CURLINFO_RESPONSE_CODE = 0x200002,
    CURL_GLOBAL_DEFAULT = 3,
    CURL_ERROR_SIZE = 256,
};

struct curl_slist;

static struct {
    void *(*easy_init)(void);
    int (*easy_setopt)(void *, int, ...);
    int (*easy_perform)(void *);
    int (*easy_getinfo)(void *, int, ...);
    void (*easy_cleanup)(void *);
    const char *(*easy_strerror)(int);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    int (*global_init)(long);
    char why[200];
    int loaded;
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    // libcurl4 (OpenSSL) first, then the GnuTLS build Debian also ships.
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *error = dlerror();
        snprintf(curl.why, sizeof curl.why, "libcurl (libcurl.so.4) cannot be loaded: %s", error ? error : "not found");
        return;
    }
#define FIND(field, name) \
    if (!(*(void **)&curl.field = dlsym(library, name))) { \
        snprintf(curl.why, sizeof curl.why, "libcurl has no %s", name); \
        return; \
    }
    FIND(easy_init, "curl_easy_init")
    FIND(easy_setopt, "curl_easy_setopt")
    FIND(easy_perform, "curl_easy_perform")
    FIND(easy_getinfo, "curl_easy_getinfo")
    FIND(easy_cleanup, "curl_easy_cleanup")
    FIND(easy_strerror, "curl_easy_strerror")
    FIND(slist_append, "curl_slist_append")
    FIND(slist_free_all, "curl_slist_free_all")
    FIND(global_init, "curl_global_init")
#undef FIND
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != 0) {
        snprintf(curl.why, sizeof curl.why, "curl_global_init failed");
        return;
    }
    curl.loaded = 1;
}

/// A response body larger than this is refused (a page of users is a few hundred KiB).
static const size_t maximum_body = 64u << 20;

static size_t append_body(char *bytes, size_t size, size_t count, void *context) {
    ulcurl_response *response = context;
    size_t length = size * count;
    if (response->body_length + length > maximum_body) {
        snprintf(response->error, sizeof response->error, "the response was larger than %zu bytes", maximum_body);
        return 0;  // libcurl stops with CURLE_WRITE_ERROR
    }
    unsigned char *grown = realloc(response->body, response->body_length + length);
    if (!grown) return 0;
    memcpy(grown + response->body_length, bytes, length);
    response->body = grown;
    response->body_length += length;
    return length;
}

int ulcurl_perform(const char *method, const char *url, const char *const *headers, size_t header_count,
                   const unsigned char *body, size_t body_length, long timeout_ms, ulcurl_response *response) {
    memset(response, 0, sizeof *response);
    pthread_once(&load_once, load);
    if (!curl.loaded) {
        response->curl_code = ULCURL_NOT_LOADED;
        snprintf(response->error, sizeof response->error, "%s", curl.why);
        return -1;
    }
    void *handle = curl.easy_init();
    if (!handle) {
        response->curl_code = ULCURL_NOT_LOADED;
        snprintf(response->error, sizeof response->error, "curl_easy_init failed");
        return -1;
    }
    char error[CURL_ERROR_SIZE] = {0};
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < header_count; i++) list = curl.slist_append(list, headers[i]);
    list = curl.slist_append(list, "Expect:");  // no 100-continue round trip before a body

    curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for name lookups
    curl.easy_setopt(handle, CURLOPT_URL, url);
    curl.easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
    curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(handle, CURLOPT_HTTPHEADER, list);
    curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, append_body);
    curl.easy_setopt(handle, CURLOPT_WRITEDATA, response);
    if (body) {
        curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE, (long)body_length);
        curl.easy_setopt(handle, CURLOPT_POSTFIELDS, body);
    }
    if (strcmp(method, "GET") == 0 && !body) {
        curl.easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    } else {
        curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, method);
    }
    int code = curl.easy_perform(handle);
    response->curl_code = code;
    if (code == 0) {
        curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response->status);
    } else if (!response->error[0]) {
        snprintf(response->error, sizeof response->error, "%s", error[0] ? error : curl.easy_strerror(code));
    }
    curl.slist_free_all(list);
    curl.easy_cleanup(handle);
    return code == 0 ? 0 : -1;
}

void ulcurl_response_free(ulcurl_response *response) {
    free(response->body);
    response->body = NULL;
    response->body_length = 0;
}
