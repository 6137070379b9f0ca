/*
 * example-c/wc: a tidepool kernel library in plain C, written against
 * include/tidepool_kernel.h only.
 *
 * The kernel counts what `wc` counts: lines (newline bytes), words (maximal
 * runs of bytes that are not ASCII white space: space, \t, \n, \v, \f, \r)
 * and bytes. The input arrives in chunks; a word or a line split across two
 * chunks counts once. Its output is 24 bytes: three little-endian uint64
 * values, lines then words then bytes.
 *
 * One optional parameter, maxLineBytes (an integer from 1 to 2^40): the
 * task fails with ERR_WC_LINE_TOO_LONG as soon as a line (the bytes between
 * two newlines, the newline excluded) is longer.
 *
 * Build it as a shared library and load it by its absolute path:
 *
 *     cc -std=c11 -O2 -Wall -Wextra -shared -fPIC -I include \
 *         examples/kernels/c/wc.c -o example_c_wc.so
 *
 *     Pool.loadKernels(path.resolve('example_c_wc.so')); // ['example-c/wc']
 *     const { result } = await pool.post(text, { kernel: 'example-c/wc', params: { maxLineBytes: 4096 } });
 *     // result.readBigUInt64LE(0): lines, (8): words, (16): bytes
 *
 * Compiled with -DWC_TEST_ABI_VERSION=N, the library claims ABI version N
 * instead of TIDEPOOL_KERNEL_ABI_VERSION: tidepool's tests build it that way
 * to check that a library of another version is refused. Never ship such a
 * build.
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidepool_kernel.h"

#ifdef WC_TEST_ABI_VERSION
#define WC_ABI_VERSION WC_TEST_ABI_VERSION
#else
#define WC_ABI_VERSION TIDEPOOL_KERNEL_ABI_VERSION
#endif

/* How much input update() processes between two calls of host->check. */
#define WC_CHECK_EVERY ((size_t)64 * 1024)

/* The largest maxLineBytes accepted: 2^40. */
#define WC_MAX_LINE_LIMIT ((int64_t)1 << 40)

/* The parameters: made once per task (or pool or stream) on the JavaScript
 * thread, then only read, possibly by several worker threads at once. */
typedef struct wc_params {
    uint64_t max_line_bytes; /* 0: no limit */
} wc_params;

/* One task's state: used by one thread at a time. */
typedef struct wc_state {
    uint64_t max_line_bytes; /* 0: no limit */
    uint64_t lines;
    uint64_t words;
    uint64_t bytes;
    uint64_t line_bytes; /* bytes of the current line so far */
    int in_word;         /* the last byte seen was part of a word */
} wc_state;

/* What each byte is. */
enum { WC_WORD = 0, WC_SPACE = 1, WC_NEWLINE = 2 };

static const unsigned char wc_class[256] = {
    ['\t'] = WC_SPACE, ['\n'] = WC_NEWLINE, ['\v'] = WC_SPACE,
    ['\f'] = WC_SPACE, ['\r'] = WC_SPACE,   [' '] = WC_SPACE,
};

/* Reports a failure through the host (which copies both texts) and returns
 * the status to return. */
static int32_t wc_fail(const tp_host *host, const char *code, const char *message) {
    host->fail(host->ctx, (const uint8_t *)code, strlen(code), (const uint8_t *)message, strlen(message));
    return TP_ERROR;
}

static int32_t wc_make_params(const tp_value *values, uint32_t count, void **out, const tp_host *host) {
    wc_params *params;
    uint64_t max = 0;
    if (count != 1 || values == NULL || out == NULL) {
        return wc_fail(host, "ERR_WC_BAD_CALL", "example-c/wc: make_params got values that do not match its schema");
    }
    if (values[0].present) {
        /* tidepool has checked the range against the schema already. */
        if (values[0].integer < 1 || values[0].integer > WC_MAX_LINE_LIMIT) {
            return wc_fail(host, "ERR_WC_BAD_CALL", "example-c/wc: maxLineBytes out of range");
        }
        max = (uint64_t)values[0].integer;
    }
    params = (wc_params *)malloc(sizeof *params);
    if (params == NULL) {
        return wc_fail(host, "ERR_WC_NO_MEMORY", "example-c/wc: out of memory for its parameters");
    }
    params->max_line_bytes = max;
    *out = params;
    return TP_OK;
}

static void wc_drop_params(void *params) {
    free(params);
}

static int32_t wc_start(const void *params, uint64_t len_hint, void **out, const tp_host *host) {
    const wc_params *p = (const wc_params *)params;
    wc_state *state;
    (void)len_hint;
    if (out == NULL) {
        return wc_fail(host, "ERR_WC_BAD_CALL", "example-c/wc: start got no out-pointer");
    }
    state = (wc_state *)calloc(1, sizeof *state);
    if (state == NULL) {
        return wc_fail(host, "ERR_WC_NO_MEMORY", "example-c/wc: out of memory for a task");
    }
    state->max_line_bytes = p != NULL ? p->max_line_bytes : 0;
    *out = state;
    return TP_OK;
}

static void wc_drop_state(void *state) {
    free(state);
}

/* Fails the task: the current line (1-based) is longer than the limit. */
static int32_t wc_line_too_long(const wc_state *s, const tp_host *host) {
    char message[160];
    snprintf(message, sizeof message, "example-c/wc: line %" PRIu64 " is longer than maxLineBytes (%" PRIu64 " bytes)", s->lines + 1,
             s->max_line_bytes);
    return wc_fail(host, "ERR_WC_LINE_TOO_LONG", message);
}

/* Counts one block of input into the state. */
static int32_t wc_count(wc_state *s, const uint8_t *data, size_t len, const tp_host *host) {
    uint64_t lines = s->lines;
    uint64_t words = s->words;
    uint64_t line_bytes = s->line_bytes;
    uint64_t max = s->max_line_bytes != 0 ? s->max_line_bytes : UINT64_MAX;
    int in_word = s->in_word;
    size_t i;
    for (i = 0; i < len; i++) {
        switch (wc_class[data[i]]) {
        case WC_NEWLINE:
            lines++;
            line_bytes = 0;
            in_word = 0;
            break;
        case WC_SPACE:
            line_bytes++;
            in_word = 0;
            break;
        default:
            line_bytes++;
            words += !in_word;
            in_word = 1;
            break;
        }
        if (line_bytes > max) {
            s->lines = lines;
            return wc_line_too_long(s, host);
        }
    }
    s->lines = lines;
    s->words = words;
    s->line_bytes = line_bytes;
    s->in_word = in_word;
    s->bytes += len;
    return TP_OK;
}

static int32_t wc_update(void *state, const uint8_t *data, size_t len, const tp_host *host) {
    wc_state *s = (wc_state *)state;
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < WC_CHECK_EVERY ? len - done : WC_CHECK_EVERY;
        int32_t status;
        /* Between two blocks of a long chunk: may the task go on? */
        if (done > 0) {
            status = host->check(host->ctx);
            if (status != TP_OK) {
                return status;
            }
        }
        status = wc_count(s, data + done, n, host);
        if (status != TP_OK) {
            return status;
        }
        done += n;
    }
    return TP_OK;
}

/* Stores `v` at `p` as 8 little-endian bytes, whatever the machine's order. */
static void wc_put_le64(uint8_t *p, uint64_t v) {
    int i;
    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static int32_t wc_finish(void *state, const tp_host *host) {
    const wc_state *s = (const wc_state *)state;
    uint8_t out[24];
    wc_put_le64(out, s->lines);
    wc_put_le64(out + 8, s->words);
    wc_put_le64(out + 16, s->bytes);
    /* TP_OK, or TP_TOO_LARGE when the task's output limit is under 24 bytes. */
    return host->write(host->ctx, out, sizeof out);
}

/* The descriptors: static const data, alive as long as the library. */

static const tp_param_spec wc_param_specs[] = {
    {
        .name = "maxLineBytes",
        .kind = TP_PARAM_INTEGER,
        .required = 0,
        .int_min = 1,
        .int_max = WC_MAX_LINE_LIMIT,
        .num_min = 0.0,
        .num_max = 0.0,
    },
};

static const tp_kernel wc_kernels[] = {
    {
        .name = "example-c/wc",
        .flags = 0,
        .param_count = sizeof wc_param_specs / sizeof wc_param_specs[0],
        .params = wc_param_specs,
        .make_params = wc_make_params,
        .drop_params = wc_drop_params,
        .start = wc_start,
        .update = wc_update,
        .finish = wc_finish,
        .drop_state = wc_drop_state,
    },
};

static const tp_library wc_library = {
    .abi_version = WC_ABI_VERSION,
    .size = sizeof(tp_library),
    .kernel_count = sizeof wc_kernels / sizeof wc_kernels[0],
    .kernel_size = sizeof(tp_kernel),
    .kernels = wc_kernels,
};

TIDEPOOL_KERNEL_EXPORT const tp_library *tidepool_kernels_v1(void) {
    return &wc_library;
}
