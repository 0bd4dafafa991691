/* LD_PRELOAD shim for vkcube: runs $CAPTURE_COMMAND (e.g. an xwd screenshot) just before the
 * app destroys its X window, when its last frame is still on the screen. vkcube with
 * --c N stops after N frames, so the captured image is the same frame on every run.
 * Declares the few xcb types it needs instead of needing libxcb's headers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct xcb_connection_t xcb_connection_t;
typedef struct { unsigned int sequence; } xcb_void_cookie_t;
typedef uint32_t xcb_window_t;
typedef xcb_void_cookie_t (*destroy_window_fn)(xcb_connection_t *, xcb_window_t);

int xcb_flush(xcb_connection_t *connection);

xcb_void_cookie_t xcb_destroy_window(xcb_connection_t *connection, xcb_window_t window) {
    const char *command = getenv("CAPTURE_COMMAND");
    if (command != NULL) {
        xcb_flush(connection);
        if (system(command) != 0) fprintf(stderr, "capture_at_close: '%s' failed\n", command);
    }
    destroy_window_fn next = (destroy_window_fn)dlsym(RTLD_NEXT, "xcb_destroy_window");
    return next(connection, window);
}
