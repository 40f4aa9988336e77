/*
 * zygote_wire.h: the zygote's entry point, for the launcher's supervisor
 * (supervisor/zygote_client.c, zygote_start) only. The wire between them
 * is shared/wire.h (included by proto.h).
 */
#ifndef STOCKADE_ZYGOTE_WIRE_H
#define STOCKADE_ZYGOTE_WIRE_H

#include <sys/types.h>

#include "zygote.h"

/*
 * The zygote's body, run in the child zygote_start forks; never returns.
 * C is the session's configuration (zygote.h, kept by the caller for the
 * life of the process), SOCK the zygote's end of the pair (wire.h),
 * LAUNCHER the pid of the launcher that forked it: the zygote drops its
 * privileges, dies with the launcher, and serves requests on SOCK until
 * it reads EOF (exit 0) or fails (exit 1).
 */
_Noreturn void zygote_main(const struct zygote_config *c, int sock,
    pid_t launcher);

#endif
