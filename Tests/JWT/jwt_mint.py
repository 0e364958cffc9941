#!/usr/bin/env python3
"""Signing keys and tokens for checklistd's signed-token tests, made with an
independent library (PyJWT with cryptography), not with the server's code.

    jwt_mint.py keys DIR [SUFFIX]   write DIR/jwks.json (public keys and the HS256
                                    secret, kids rsa-SUFFIX, ec-SUFFIX, ed-SUFFIX,
                                    hs-SUFFIX; SUFFIX default 1) and the private keys
    jwt_mint.py cases DIR NOW       print a JSON object: case name -> token, every
                                    token signed at NOW (seconds since 1970)
    jwt_mint.py token DIR KID NAMESPACE EXP   print one token (EXP: seconds since 1970)

The cases expect the server to run with --auth-issuer https://id.example
--auth-audience checklists.
"""
import base64, hashlib, hmac, json, os, sys

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

ISSUER = "https://id.example"
AUDIENCE = "checklists"
ALGORITHMS = {"rsa": "RS256", "ec": "ES256", "ed": "EdDSA", "hs": "HS256"}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def uint(n):
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def write_private(directory, kid, key):
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    with open(os.path.join(directory, kid + ".pem"), "wb") as f:
        f.write(pem)


def make_keys(directory, suffix):
    os.makedirs(directory, exist_ok=True)
    keys = []
    r = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    n = r.public_key().public_numbers()
    keys.append({"kty": "RSA", "kid": "rsa-" + suffix, "alg": "RS256", "use": "sig", "n": uint(n.n), "e": uint(n.e)})
    write_private(directory, "rsa-" + suffix, r)
    e = ec.generate_private_key(ec.SECP256R1())
    p = e.public_key().public_numbers()
    keys.append({"kty": "EC", "kid": "ec-" + suffix, "crv": "P-256",
                 "x": b64url(p.x.to_bytes(32, "big")), "y": b64url(p.y.to_bytes(32, "big"))})
    write_private(directory, "ec-" + suffix, e)
    d = ed25519.Ed25519PrivateKey.generate()
    raw = d.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    keys.append({"kty": "OKP", "kid": "ed-" + suffix, "crv": "Ed25519", "x": b64url(raw)})
    write_private(directory, "ed-" + suffix, d)
    secret = os.urandom(32)
    keys.append({"kty": "oct", "kid": "hs-" + suffix, "k": b64url(secret)})
    with open(os.path.join(directory, "hs-" + suffix + ".key"), "wb") as f:
        f.write(secret)
    path = os.path.join(directory, "jwks.json")
    existing = json.load(open(path))["keys"] if os.path.exists(path) else []
    with open(path, "w") as f:
        json.dump({"keys": existing + keys}, f)


def signing_key(directory, kid):
    if kid.startswith("hs-"):
        return open(os.path.join(directory, kid + ".key"), "rb").read()
    return serialization.load_pem_private_key(open(os.path.join(directory, kid + ".pem"), "rb").read(), None)


def sign(directory, kid, claims, alg=None, headers=None):
    alg = alg or ALGORITHMS[kid.split("-")[0]]
    return jwt.encode(claims, signing_key(directory, kid), algorithm=alg, headers={"kid": kid, **(headers or {})})


def hs256_raw(secret, header, payload_bytes):
    """HS256 over arbitrary payload bytes (PyJWT only signs JSON objects)."""
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(payload_bytes)
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64url(mac)


def cases(directory, now):
    good = {"sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 3600}
    out = {}
    for prefix, alg in ALGORITHMS.items():
        out["ok-" + alg] = sign(directory, prefix + "-1", good)
    out["ok-aud-list"] = sign(directory, "ec-1", {**good, "aud": ["other", AUDIENCE]})
    out["ok-in-leeway"] = sign(directory, "ed-1", {**good, "exp": now - 30, "nbf": now + 30})
    # Signed by another key of the same type under the known kid.
    other = ec.generate_private_key(ec.SECP256R1())
    out["bad_signature"] = jwt.encode(good, other, algorithm="ES256", headers={"kid": "ec-1"})
    out["alg_none"] = jwt.encode(good, None, algorithm="none", headers={"kid": "rsa-1"})
    # An HS256 token whose secret is the RSA key's public PEM: the classic confusion attack.
    rsa_public = signing_key(directory, "rsa-1").public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    out["alg_mismatch"] = hs256_raw(rsa_public, {"alg": "HS256", "typ": "JWT", "kid": "rsa-1"},
                                    json.dumps(good).encode())
    out["expired"] = sign(directory, "rsa-1", {**good, "exp": now - 120})
    out["no_exp"] = sign(directory, "rsa-1", {k: v for k, v in good.items() if k != "exp"})
    out["not_yet_valid"] = sign(directory, "rsa-1", {**good, "nbf": now + 600})
    out["issued_in_future"] = sign(directory, "ed-1", {**good, "iat": now + 600})
    out["wrong_issuer"] = sign(directory, "ec-1", {**good, "iss": "https://evil.example"})
    out["wrong_audience"] = sign(directory, "ec-1", {**good, "aud": "someone-else"})
    out["unknown_kid"] = sign(directory, "ed-1", good, headers={"kid": "ed-404"})
    out["missing_namespace"] = sign(directory, "hs-1", {k: v for k, v in good.items() if k != "sub"})
    out["namespace_not_string"] = sign(directory, "hs-1", {**good, "sub": 42})
    secret = signing_key(directory, "hs-1")
    out["bad_json"] = hs256_raw(secret, {"alg": "HS256", "kid": "hs-1"}, b'{"sub": "alice", "exp": ')
    header = b64url(json.dumps({"alg": "HS256", "kid": "hs-1"}).encode())
    out["bad_base64url"] = header + ".eyJzdWIi!!.c2ln"
    out["too_large"] = sign(directory, "hs-1", {**good, "padding": "p" * 8300})
    return out


def main(argv):
    if len(argv) >= 2 and argv[0] == "keys":
        make_keys(argv[1], argv[2] if len(argv) > 2 else "1")
    elif len(argv) == 3 and argv[0] == "cases":
        print(json.dumps(cases(argv[1], int(argv[2]))))
    elif len(argv) == 5 and argv[0] == "token":
        print(sign(argv[1], argv[2], {"sub": argv[3], "iss": ISSUER, "aud": AUDIENCE, "exp": int(argv[4])}))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
