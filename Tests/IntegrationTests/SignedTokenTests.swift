import ChecklistConformance
import ChecklistModel
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// `checklistd --auth-keys` end to end, with tokens minted by PyJWT: every
/// algorithm accepted, every refusal answered NOT_AUTHENTICATED and counted
/// by reason, key rotation by SIGHUP under a live connection, expiry in the
/// middle of a connection.
@Suite(.timeLimit(.minutes(10))) struct SignedTokenTests {
    /// Refused tokens of jwt_mint.py and the reason /metrics counts them under.
    static let refusals: [(name: String, reason: String)] = [
        ("bad_signature", "bad_signature"), ("alg_none", "alg_none"), ("alg_mismatch", "alg_mismatch"),
        ("expired", "expired"), ("no_exp", "expired"), ("not_yet_valid", "not_yet_valid"),
        ("issued_in_future", "not_yet_valid"), ("wrong_issuer", "wrong_issuer"), ("wrong_audience", "wrong_audience"),
        ("unknown_kid", "unknown_kid"), ("missing_namespace", "missing_namespace"),
        ("namespace_not_string", "missing_namespace"), ("bad_json", "malformed"), ("bad_base64url", "malformed"),
        ("too_large", "too_large"),
    ]

    static func token(_ cases: [String: String], _ name: String) throws -> String {
        guard let token = cases[name] else { throw TestFailure("jwt_mint.py made no case \(name)") }
        return token
    }

    @Test func everyAlgorithmOpensTheClaimedNamespaceBesideAStaticToken() async throws {
        let server = try SignedTokenServer.start()
        defer { server.stop() }
        let cases = try server.cases()
        try await BlockingWork.run(throttled: true) {
            let owner = try server.socket()
            try owner.handshake(token: SignedTokenServer.staticAlice)
            try owner.send(.createList(CreateList(name: "Alice's", icon: "Inbox")), id: 2)
            _ = try owner.receive()
            for name in ["ok-RS256", "ok-ES256", "ok-EdDSA", "ok-HS256", "ok-aud-list", "ok-in-leeway"] {
                let c = try server.socket()
                defer { c.close() }
                try c.handshake(token: try Self.token(cases, name))
                try c.send(.listLists(ListLists()), id: 2)
                let names = try c.receive(2, "LISTS") { m -> [String]? in
                    if case .lists(let lists) = m { return lists.lists.map(\.name) }
                    return nil
                }
                #expect(names == ["Alice's"], "\(name)")
            }
        }
    }

    @Test func everyRefusalIsNotAuthenticatedCountedAndLoggedWithoutTheToken() async throws {
        let server = try SignedTokenServer.start()
        defer { server.stop() }
        let cases = try server.cases()
        try await BlockingWork.run(throttled: true) {
            for (name, _) in Self.refusals {
                let c = try server.socket()
                defer { c.close() }
                let token = try Self.token(cases, name)
                try c.send(.hello(Hello(features: [], clientName: name, token: token)), id: 1)
                let error = try c.expectError(1, .notAuthenticated)
                #expect(error.message.contains("attempt 1 of 3"), "\(name): \(error.message)")
                // Still before the handshake: a good token works on the same connection.
                try c.handshake(token: try Self.token(cases, "ok-EdDSA"), id: 2)
            }
            // Three refusals close the connection.
            let c = try server.socket()
            for attempt in UInt32(1)...3 {
                try c.send(.hello(Hello(features: [], clientName: "x", token: try Self.token(cases, "expired"))), id: attempt)
                try c.expectError(attempt, .notAuthenticated)
            }
            try c.expectClosed()
        }
        let metrics = try server.metrics()
        var expected: [String: Int] = [:]
        for (_, reason) in Self.refusals { expected[reason, default: 0] += 1 }
        expected["expired", default: 0] += 3
        for (reason, count) in expected {
            #expect(metrics.contains("\nchecklistd_auth_refused_total{reason=\"\(reason)\"} \(count)\n"), "\(reason)")
        }
        let log = server.process.standardError
        #expect(log.split(separator: "\n").contains { $0.contains("event=auth_refused") && $0.contains("reason=alg_mismatch") })
        for (name, _) in Self.refusals where name != "bad_base64url" {
            // No part of any token is logged (the header alone would name the kid and alg).
            let signature = String(try Self.token(cases, name).split(separator: ".").last ?? "")
            #expect(signature.isEmpty || !log.contains(signature), "\(name)'s token is in the log")
        }
    }

    @Test func rotationBySighupKeepsLiveConnectionsOfKeptKeysAndRevokesRemovedOnes() async throws {
        let server = try SignedTokenServer.start()
        defer { server.stop() }
        let exp = Int(Date().timeIntervalSince1970) + 3600
        let old = try server.token(kid: "ed-1", exp: exp)
        try await BlockingWork.run(throttled: true) {
            let live = try server.socket()
            try live.handshake(token: old)
            // The new keys beside the old ones: both sign.
            _ = try SignedTokenServer.python(["keys", server.keys.path, "2"])
            let both = try Data(contentsOf: URL(fileURLWithPath: server.keysPath))
            try server.reload(expecting: "reloaded 8 signing keys")
            try live.expectAlive(id: 10)
            let fresh = try server.token(kid: "ec-2", exp: exp)
            let second = try server.socket()
            try second.handshake(token: fresh)
            // A file that does not load keeps the keys in use.
            try Data("{\"keys\": [{\"kty\": \"RSA\", \"kid\": \"x\"}]}".utf8).write(to: URL(fileURLWithPath: server.keysPath))
            try server.reload(expecting: "keeping the 8 signing keys in use")
            try live.expectAlive(id: 11)
            // Only the new keys: the connection of the old key is refused at its next request.
            let set = try #require(try JSONSerialization.jsonObject(with: both) as? [String: [[String: Any]]])
            let newOnly = set["keys", default: []].filter { ($0["kid"] as? String)?.hasSuffix("-2") == true }
            try JSONSerialization.data(withJSONObject: ["keys": newOnly]).write(to: URL(fileURLWithPath: server.keysPath))
            try server.reload(expecting: "reloaded 4 signing keys")
            try live.send(.ping(Ping(data: [])), id: 12)
            let (id, error) = try live.receiveError()
            #expect(error.code == .notAuthenticated && (id == 12 || id == 0), "\(id) \(error)")
            try live.expectClosed()
            try second.expectAlive(id: 13)
        }
        #expect(try server.metrics().contains("\nchecklistd_auth_refused_total{reason=\"revoked\"} 1\n"))
    }

    /// A connection whose token expires is refused at its next request (or
    /// at the tick before it) and closed; the client then comes back with a
    /// fresh token.
    @Test func anExpiredTokenIsRefusedInTheMiddleOfAConnection() async throws {
        let server = try SignedTokenServer.start(["--auth-leeway", "0"])
        defer { server.stop() }
        let exp = Int(Date().timeIntervalSince1970) + 2
        let token = try server.token(kid: "hs-1", exp: exp)
        try await BlockingWork.run(throttled: true) {
            let c = try server.socket()
            try c.handshake(token: token)
            try c.expectAlive(id: 2)
            // The token's lifetime must pass: wait for the clock, not for the server.
            while Date().timeIntervalSince1970 < Double(exp) + 0.1 { Thread.sleep(forTimeInterval: 0.1) }
            try c.send(.ping(Ping(data: [])), id: 3)
            let (id, error) = try c.receiveError()
            #expect(error.code == .notAuthenticated && (id == 3 || id == 0), "\(id) \(error)")
            #expect(error.message.contains("expired"))
            try c.expectClosed()
            let refreshed = try server.socket()
            try refreshed.handshake(token: try server.token(kid: "hs-1", exp: exp + 3600))
            try refreshed.expectAlive()
        }
        #expect(try server.metrics().contains("\nchecklistd_auth_refused_total{reason=\"expired\"} 1\n"))
    }
}
