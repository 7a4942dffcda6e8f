/* storagelab-sandbox PROGRAM [ARG...]: runs PROGRAM as the Darshan log reader's
 * sandbox user, SANDBOX_UID:SANDBOX_GID (fixed when this is compiled), and no one else.
 *
 * The portal's darshan worker is not root and holds no capability; this program alone
 * is given CAP_SETUID, CAP_SETGID and CAP_KILL (file capabilities, docker/sandbox/build.sh
 * and docker/Dockerfile), to start each log's reader as a user who owns nothing of the
 * portal's (jobio/sandbox.py). Only the portal's group may run it (mode 0750), and it
 * can make them the sandbox user only, which is less than they are.
 *
 * It stays between the worker and the reader: the reader is its child, with
 * PR_SET_PDEATHSIG, so that when the worker kills this process (its own UID: no
 * capability needed) the kernel kills the reader, wherever it went (a new session, a
 * new process group). The kernel sends that signal with this process's credentials, to
 * a process of another user: so this one keeps CAP_KILL, and gives up the other two at
 * once. The reader keeps none. This process waits for the reader, and ends as it
 * ended: the same exit status, or killed by the same signal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SANDBOX_UID
#error "compile with -DSANDBOX_UID=N -DSANDBOX_GID=N (docker/sandbox/build.sh)"
#endif
_Static_assert(SANDBOX_UID > 0 && SANDBOX_GID > 0, "the sandbox user is never root");

static void fail(const char *what) {
    fprintf(stderr, "storagelab-sandbox: %s: %s\n", what, strerror(errno));
    _exit(126);
}

/* No capability left but `keep` (a mask of the first 32), in no set but the permitted
 * and effective ones: what remains runs as whoever it is, with that alone. */
static void keep_capabilities(unsigned keep) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    data[0].permitted = data[0].effective = keep;
    if (syscall(SYS_capset, &header, data) != 0) fail("capset");
}

int main(int argc, char **argv) {
    if (argc < 2 || argv[1][0] != '/') {
        fprintf(stderr, "usage: storagelab-sandbox /PATH/TO/PROGRAM [ARG...]\n");
        return 2;
    }
    if (getuid() == SANDBOX_UID) {
        /* The caller is the sandbox itself: the reader would keep what it holds. */
        fprintf(stderr, "storagelab-sandbox: the caller already runs as UID %d, the sandbox "
                        "user: run the worker as another user\n", SANDBOX_UID);
        return 126;
    }
    pid_t parent = getpid();
    pid_t reader = fork();
    if (reader < 0) fail("fork");
    if (reader == 0) {
        if (setgroups(0, NULL) != 0) fail("setgroups");
        if (setresgid(SANDBOX_GID, SANDBOX_GID, SANDBOX_GID) != 0) fail("setresgid");
        if (setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID) != 0) fail("setresuid");
        uid_t r, e, s;
        gid_t gr, ge, gs;
        if (getresuid(&r, &e, &s) != 0 || r != SANDBOX_UID || e != SANDBOX_UID ||
            s != SANDBOX_UID || getresgid(&gr, &ge, &gs) != 0 || gr != SANDBOX_GID ||
            ge != SANDBOX_GID || gs != SANDBOX_GID || getgroups(0, NULL) != 0) {
            errno = EPERM;
            fail("still not the sandbox user after switching");
        }
        keep_capabilities(0);
        /* Set after the switch, which clears it; then the parent may already be gone. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail("prctl(PR_SET_PDEATHSIG)");
        if (getppid() != parent) _exit(137);
        execv(argv[1], argv + 1);
        fail(argv[1]);
    }
    keep_capabilities(1u << CAP_KILL);
    int status;
    while (waitpid(reader, &status, 0) < 0) {
        if (errno != EINTR) fail("waitpid");
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    /* Killed: end by the same signal, so that the worker reads the same status. */
    int signal_number = WTERMSIG(status);
    signal(signal_number, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal_number);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    raise(signal_number);
    return 128 + signal_number;
}
