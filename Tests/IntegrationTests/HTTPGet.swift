import ChecklistSocket

/// One HTTP/1.1 request on a fresh connection; the whole response (the
/// metrics endpoint closes after answering).
func httpGet(_ address: SocketAddress, path: String, method: String = "GET") throws -> String {
    let fd = try connectSocket(to: address)
    defer { closeSocket(fd) }
    try setTimeouts(fd, receive: .seconds(10), send: .seconds(10))
    try writeAll(fd, Array("\(method) \(path) HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
    var response: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 << 10)
    while true {
        let result = try chunk.withUnsafeMutableBytes { try readSocket(fd, into: $0) }
        guard case .bytes(let n) = result else { break }
        response += chunk[..<n]
    }
    return String(decoding: response, as: UTF8.self)
}
