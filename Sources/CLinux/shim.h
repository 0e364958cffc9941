#ifndef CHECKLISTS_CLINUX_SHIM_H
#define CHECKLISTS_CLINUX_SHIM_H
/* Linux calls that Glibc's Swift module does not expose. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <pthread.h>
#include <malloc.h>  /* malloc_trim */

/* Declared by glibc only under _GNU_SOURCE. */
int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
int pthread_setname_np(pthread_t thread, const char *name);
int pipe2(int pipefd[2], int flags);
#endif
