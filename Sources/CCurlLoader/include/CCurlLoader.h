#ifndef CCURLLOADER_H
#define CCURLLOADER_H

#include <stddef.h>

// HTTP requests through libcurl, loaded with dlopen on the first request rather than linked.
//
// Why: linking libcurl (as FoundationNetworking does) makes every start of the daemon map and
// relocate some twenty-five more shared libraries, about 9 ms of each start and of each
// restart's stall, for a REST source most installations never configure. curl_easy_setopt is
// variadic, which Swift cannot call: these few C functions wrap what the REST source needs.

/// The outcome of one request. `curl_code` is libcurl's CURLcode (0: a response arrived, with
/// `status`), or -1 when libcurl could not be loaded; `error` says what went wrong in words.
typedef struct {
    long status;
    unsigned char *body;
    size_t body_length;
    int curl_code;
    char error[320];
} ulcurl_response;

/// Performs one request and waits for it (call it off any event loop). `headers` are whole
/// "Name: value" lines. Returns 0 when a response arrived; free the response either way.
int ulcurl_perform(const char *method, const char *url, const char *const *headers, size_t header_count,
                   const unsigned char *body, size_t body_length, long timeout_ms, ulcurl_response *response);

/// Frees what `ulcurl_perform` allocated in `response`.
void ulcurl_response_free(ulcurl_response *response);

/// libcurl's codes the REST source tells apart (ABI-stable values from curl.h).
enum {
    ULCURL_NOT_LOADED = -1,
    ULCURL_COULDNT_RESOLVE_HOST = 6,
    ULCURL_COULDNT_CONNECT = 7,
    ULCURL_OPERATION_TIMEDOUT = 28,
};

#endif
