/*
 * Runs a command under a seccomp filter that kills the process, as systemd's
 * SystemCallFilter= does, if it calls process_vm_readv or process_vm_writev
 * (with --clone: clone or clone3, so that no thread or child can be made):
 * a sandbox jitstall must never trip over.
 * usage: seccomp_deny [--clone] COMMAND ARGS...
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int no_clone = argc > 1 && strcmp(argv[1], "--clone") == 0;
    if (argc < 2 + no_clone) {
        fprintf(stderr, "usage: %s [--clone] COMMAND ARGS...\n", argv[0]);
        return 2;
    }
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, no_clone ? SYS_clone : SYS_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, no_clone ? SYS_clone3 : SYS_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        fprintf(stderr, "seccomp_deny: %s\n", strerror(errno));
        return 77;
    }
    execvp(argv[1 + no_clone], argv + 1 + no_clone);
    fprintf(stderr, "seccomp_deny: %s: %s\n", argv[1 + no_clone], strerror(errno));
    return 127;
}
