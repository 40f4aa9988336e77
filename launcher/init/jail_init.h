/*
 * jail_init.h: the body of a jail's init, entered by the zygote's clone
 * (zygote/jail_start.c) in the new child; init/jail_init.c.
 */
#ifndef STOCKADE_JAIL_INIT_H
#define STOCKADE_JAIL_INIT_H

#include "jail.h"

/*
 * The body of jail init (pid 1 of the jail); never returns. SPEC, WSFD,
 * WORK_TREE_FD and H are jail_start's (jail.h). SYNC_FD is the read end
 * of the pipe on which the launcher says the id maps are written;
 * STATUS_FD the write end of the status pipe; OUT_FD and ERR_FD the
 * write ends of the payload's output pipes; NOTIFY_FD the socket on
 * which the payload sends the seccomp listener to the launcher; GO_FD,
 * for a warm pool's jail, the socket its job comes on (else -1). Init
 * owns every descriptor it is given and closes all the others. A failed
 * step is reported on STATUS_FD as an INIT_REC_SETUP_FAILED or
 * INIT_REC_BIND_FAILED record, then init exits 1; otherwise it exits
 * when the payload has ended, after its INIT_REC_TASKS and INIT_REC_PAYLOAD_EXIT records.
 */
_Noreturn void jail_init_main(const struct job_spec *spec, int wsfd,
    int work_tree_fd, const struct jail_host *h, int sync_fd, int status_fd,
    int out_fd, int err_fd, int notify_fd, int go_fd);

#endif
