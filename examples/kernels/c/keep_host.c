/*
 * A kernel library that breaks the ABI's rule on purpose, for tidepool's
 * tests: a tp_host (and its ctx) is valid only until the kernel function it
 * was given to returns. Never write a kernel like this.
 *
 *   example-c/keep-host  writes "kept" and keeps the host its update got;
 *   example-c/meddle     writes "EVIL" through the host keep-host kept
 *                        (from a later task), then "clean:" and the status
 *                        that late write returned, through its own host.
 *
 * tidepool refuses the late write (TP_ERROR, nothing written anywhere) and
 * example-c/keep-host's next call fails with ERR_TIDEPOOL_KERNEL_CONTRACT.
 * Before hosts were checked, the kept pointer read the host of whichever
 * call sat at the same place on the stack, and "EVIL" landed in the output
 * of example-c/meddle's task.
 *
 *     cc -std=c11 -O2 -Wall -Wextra -shared -fPIC -I include \
 *         examples/kernels/c/keep_host.c -o example_c_keep_host.so
 */

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tidepool_kernel.h"

/* The host example-c/keep-host kept (the forbidden part). */
static _Atomic(const tp_host *) kept_host;

/* No state to speak of: one byte, so that start hands over a pointer. */
static int32_t start(const void *params, uint64_t len_hint, void **out, const tp_host *host) {
    (void)params;
    (void)len_hint;
    *out = malloc(1);
    if (*out == NULL) {
        static const char code[] = "ERR_KEEP_HOST_MEMORY";
        static const char message[] = "out of memory";
        host->fail(host->ctx, (const uint8_t *)code, sizeof code - 1, (const uint8_t *)message, sizeof message - 1);
        return TP_ERROR;
    }
    return TP_OK;
}

static int32_t keep_update(void *state, const uint8_t *data, size_t len, const tp_host *host) {
    (void)state;
    (void)data;
    (void)len;
    atomic_store(&kept_host, host);
    return host->write(host->ctx, (const uint8_t *)"kept", 4);
}

static int32_t meddle_update(void *state, const uint8_t *data, size_t len, const tp_host *host) {
    (void)state;
    (void)data;
    (void)len;
    const tp_host *kept = atomic_load(&kept_host);
    int32_t late = -1;
    if (kept != NULL) {
        late = kept->write(kept->ctx, (const uint8_t *)"EVIL", 4);
    }
    char text[32];
    int n = snprintf(text, sizeof text, "clean:%d", (int)late);
    return host->write(host->ctx, (const uint8_t *)text, (size_t)n);
}

static int32_t finish(void *state, const tp_host *host) {
    (void)state;
    (void)host;
    return TP_OK;
}

static void drop_state(void *state) { free(state); }

static const tp_kernel kernels[] = {
    {
        .name = "example-c/keep-host",
        .flags = 0,
        .param_count = 0,
        .params = NULL,
        .make_params = NULL,
        .drop_params = NULL,
        .start = start,
        .update = keep_update,
        .finish = finish,
        .drop_state = drop_state,
    },
    {
        .name = "example-c/meddle",
        .flags = 0,
        .param_count = 0,
        .params = NULL,
        .make_params = NULL,
        .drop_params = NULL,
        .start = start,
        .update = meddle_update,
        .finish = finish,
        .drop_state = drop_state,
    },
};

static const tp_library library = {
    .abi_version = TIDEPOOL_KERNEL_ABI_VERSION,
    .size = sizeof(tp_library),
    .kernel_count = sizeof kernels / sizeof kernels[0],
    .kernel_size = sizeof(tp_kernel),
    .kernels = kernels,
};

TIDEPOOL_KERNEL_EXPORT const tp_library *tidepool_kernels_v1(void) { return &library; }
