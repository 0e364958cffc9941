// The Checklists JavaScript client: one ES module entry point, no dependencies,
// no build step. It speaks the protocol of Protocol/SPEC.md over any
// WebSocket-like transport (binary messages carrying the byte stream).
//
//   wire.js        varints, strings, presence masks, counts; ProtocolError
//   messages.js    every message's body, encode and decode
//   frames.js      framing, the frame parser, compression
//   connection.js  one connection: HELLO, requests by id, pushes
//   client.js      a reconnecting client: resume subscriptions, keyed patches

export * from './wire.js';
export * from './messages.js';
export * from './frames.js';
export * from './connection.js';
export * from './client.js';
