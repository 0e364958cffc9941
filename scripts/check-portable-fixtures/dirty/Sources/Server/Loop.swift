// Outside the client's closure: never scanned.
import CLinux
let fd = epoll_create1(0)
