@testable import ChecklistServer
import ChecklistModel
import ChecklistWire
import Testing

/// The tokens file format, the constant-time comparison and the bind policy.
@Suite(.timeLimit(.minutes(10))) struct TokenTableTests {
    @Test func parsesPairsCommentsAndBlankLines() throws {
        let table = try TokenTable.parse("""
            # a comment line
            alpha-token   alice
              beta-token\tbob   # trailing comment

            gamma-token alice\r
            """)
        #expect(table.count == 3 && table.namespaceCount == 2)
        #expect(table.namespace(for: "alpha-token") == Namespace("alice"))
        #expect(table.namespace(for: "beta-token") == Namespace("bob"))
        #expect(table.namespace(for: "gamma-token") == Namespace("alice"))
        for wrong in ["", "alpha", "alpha-token ", "alpha-tokeN", "alpha-token-", "#", "alice", "beta-token\tbob"] {
            #expect(table.namespace(for: wrong) == nil, "\(wrong)")
        }
    }

    @Test(arguments: [
        ("just-one-word\n", 1),
        ("ok ns\ntoo many words here\n", 2),
        ("same ns1\nother ns2\nsame ns3\n", 3),
        ("\(String(repeating: "t", count: Hello.maxTokenBytes + 1)) ns\n", 1),
    ])
    func refusesBadLinesNamingTheLineNotTheToken(text: String, line: Int) {
        #expect {
            _ = try TokenTable.parse(text)
        } throws: { error in
            guard let error = error as? TokenFileError else { return false }
            return error.line == line && !error.description.contains("same") && !error.description.contains("ttt")
        }
    }

    @Test func emptyFileHasNoTokens() throws {
        #expect(try TokenTable.parse("# nobody\n\n").count == 0)
    }

    @Test func constantTimeEqualsIsEquality() {
        let secret = Array("s3cret-token".utf8)
        #expect(ConstantTime.equals(secret, secret))
        #expect(!ConstantTime.equals(Array("s3cret-tokeN".utf8), secret))
        #expect(!ConstantTime.equals(Array("s3cret-token-and-more".utf8), secret))
        #expect(!ConstantTime.equals(Array("s3cret".utf8), secret))
        // A presented token that repeats the secret is still not equal.
        #expect(!ConstantTime.equals(secret + secret, secret))
        #expect(!ConstantTime.equals([], secret))
        #expect(ConstantTime.equals([], []))
        #expect(!ConstantTime.equals([1], []))
    }

    @Test func replacingTokensBumpsTheGeneration() throws {
        let access = AccessControl(table: try TokenTable.parse("a ns1\n"))
        let before = access.generation
        #expect(access.namespace(for: "a") == Namespace("ns1"))
        access.replace(try TokenTable.parse("b ns2\n"))
        #expect(access.generation > before)
        #expect(access.namespace(for: "a") == nil && access.namespace(for: "b") == Namespace("ns2"))
        #expect(throws: TokenFileError.self) { try access.reload() }  // not from a file
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("::1", true), ("[::1]", true),
        ("::ffff:127.0.0.1", true), ("0.0.0.0", false), ("::", false), ("10.0.0.1", false),
        ("192.168.1.20", false), ("example.com", false), ("", false),
    ])
    func loopbackHosts(host: String, loopback: Bool) {
        #expect(AccessControl.isLoopback(host: host) == loopback)
    }
}

/// `cert:SUBJECT NAMESPACE` lines: a client certificate's subject standing in for a token.
@Suite(.timeLimit(.minutes(1)))
struct CertificateSubjectLineTests {
    @Test func certificateLinesMapSubjectsToNamespaces() throws {
        let table = try TokenTable.parse("""
            token-1 alice
            cert:CN=alice,O=Example  alice   # alice's laptop
            \tcert:CN=Bob Smith,OU=Ops,O=Example Corp bob
            """)
        #expect(table.count == 1 && table.certificateCount == 2 && table.namespaceCount == 2)
        #expect(table.namespace(forCertificateSubject: "CN=alice,O=Example") == Namespace("alice"))
        #expect(table.namespace(forCertificateSubject: "CN=Bob Smith,OU=Ops,O=Example Corp") == Namespace("bob"))
        #expect(table.namespace(forCertificateSubject: "CN=alice") == nil)
        #expect(table.namespace(for: "CN=alice,O=Example") == nil, "a subject is not a token")
    }

    @Test(arguments: [
        ("cert:CN=a a\ncert:CN=a b", "line 2: the certificate subject CN=a appears again"),
        ("cert:CN=a", "line 1: expected cert:SUBJECT NAMESPACE"),
        ("cert: alice", "line 1: expected cert:SUBJECT NAMESPACE"),
    ])
    func badCertificateLinesAreRefused(text: String, message: String) {
        #expect {
            _ = try TokenTable.parse(text)
        } throws: { error in
            (error as? TokenFileError)?.description == message
        }
    }
}
