// ChecklistEventLoop: the epoll loops, connections, timers, signal handling
// and the TCP server. It knows no protocol and no store (as swift-nio keeps
// NIOPosix apart from any protocol): a server plugs its protocol in as a
// `SocketConnectionHandler` per connection.
//
// TLS sits between the socket and the handler: on a TLS port `SocketConnection`
// runs the handshake before the handler is told `connectionActive`, then
// decrypts what it reads into the input buffer and encrypts what it sends
// (SocketConnection+TLS.swift), so that the frame parser and every handler stay
// as they are.
//
// The connection types, from the socket up:
//
//   SocketConnection         one accepted TCP socket, owned by one event loop
//                            for its whole life: input and output buffers,
//                            back-pressure, TLS, graceful close and linger.
//                            Knows no protocol.
//   SocketConnectionHandle   a `Sendable` reference to a `SocketConnection`,
//                            for code on other threads (`execute` runs a
//                            closure with it on its loop).
//   SocketConnectionHandler  the protocol a server plugs in, one per
//                            connection: told when the socket is active,
//                            readable, paused, shutting down, closed.
//
// A server's protocol lives above this module (ChecklistServer's
// `ProtocolHandler`, `ProtocolState`, `ProtocolSession`).
