/* Reached only through a Linux-only dependency: never scanned. */
#include <sys/epoll.h>
